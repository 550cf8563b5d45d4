//===- pipeline/machine_tools.cpp -------------------------------------------===//

#include "pipeline/machine_tools.h"

namespace kiln::pipeline {

void MachineTools::HeldReporter::pass(bool isWarning, llvm::StringRef text) {
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (holding) {
      held.emplace_back(isWarning, text.str());
      return;
    }
  }
  isWarning ? reporter.warning(text) : reporter.note(text);
}

void MachineTools::HeldReporter::release() {
  std::vector<std::pair<bool, std::string>> lines;
  {
    std::lock_guard<std::mutex> lock(mutex);
    holding = false;
    lines.swap(held);
  }
  for (const auto &[isWarning, text] : lines)
    pass(isWarning, text);
}

/// Where the toolkit is looked for: as the process's environment says,
/// with the versions ptxas reported remembered beside the cache.
static cuda_tools::ToolkitSearchEnvironment searchEnvironment(const BuildOptions &options) {
  cuda_tools::ToolkitSearchEnvironment environment =
      cuda_tools::ToolkitSearchEnvironment::fromProcess();
  environment.versionMemo = BuildCache::toolkitMemoFile(options);
  return environment;
}

MachineTools::MachineTools(const BuildOptions &options, BuildReporter &reporter)
    : options(options), heldReporter(reporter) {
  bool deviceCode =
      options.emit != EmitKind::Typed && options.emit != EmitKind::Object && !options.hostOnly;
  if (!deviceCode)
    return;
  searching = std::thread([this] {
    foundToolkit.emplace(cuda_tools::findCudaToolkit(searchEnvironment(this->options)));
    if (!*foundToolkit)
      return;
    openedFor = (*foundToolkit)->version.str();
    openedCache = BuildCache::open(this->options, openedFor, heldReporter);
  });
}

MachineTools::~MachineTools() {
  join();
  if (foundToolkit && !*foundToolkit)
    llvm::consumeError(foundToolkit->takeError());
}

void MachineTools::join() {
  if (searching.joinable())
    searching.join();
}

llvm::Expected<cuda_tools::CudaToolkit> MachineTools::toolkit() {
  join();
  if (!foundToolkit)
    return cuda_tools::findCudaToolkit(searchEnvironment(options));
  llvm::Expected<cuda_tools::CudaToolkit> found = std::move(*foundToolkit);
  foundToolkit.reset();
  return found;
}

std::unique_ptr<BuildCache> MachineTools::cache(const std::string &cudaVersion) {
  join();
  heldReporter.release();
  std::optional<std::unique_ptr<BuildCache>> opened = std::move(openedCache);
  openedCache.reset();
  if (opened && openedFor == cudaVersion)
    return std::move(*opened);
  opened.reset();
  return BuildCache::open(options, cudaVersion, heldReporter);
}

} // namespace kiln::pipeline
