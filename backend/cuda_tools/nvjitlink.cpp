//===- backend/cuda_tools/nvjitlink.cpp - Linking device code with nvJitLink ---------===//

#include "backend/cuda_tools/nvjitlink.h"

#include "backend/cuda_tools/cuda_archs.h"
#include "backend/cuda_tools/ptx_header.h"
#include "support/dynamic_library.h"
#include "support/temporary_directory.h"

#include <llvm/ADT/StringExtras.h>
#include <llvm/Support/Path.h>

#include <map>
#include <mutex>

namespace kiln::cuda_tools {

namespace {

// nvJitLink's C API (nvJitLink.h), declared here so that Kiln builds without
// the header and binds to whichever library it finds. The unversioned names
// are exported by every release since 12.0.
using Handle = struct NvJitLinkOpaque *;
using Result = int;
constexpr Result kSuccess = 0;

enum InputType : int {
  kInputCubin = 1,
  kInputPtx = 2,
  kInputLtoIr = 3,
  kInputFatbin = 4,
  kInputObject = 5,
  kInputLibrary = 6,
};

const char *resultName(Result result) {
  static const char *const names[] = {
      "NVJITLINK_SUCCESS",
      "NVJITLINK_ERROR_UNRECOGNIZED_OPTION",
      "NVJITLINK_ERROR_MISSING_ARCH",
      "NVJITLINK_ERROR_INVALID_INPUT",
      "NVJITLINK_ERROR_PTX_COMPILE",
      "NVJITLINK_ERROR_NVVM_COMPILE",
      "NVJITLINK_ERROR_INTERNAL",
      "NVJITLINK_ERROR_THREADPOOL",
      "NVJITLINK_ERROR_UNRECOGNIZED_INPUT",
      "NVJITLINK_ERROR_FINALIZE",
      "NVJITLINK_ERROR_NULL_INPUT",
      "NVJITLINK_ERROR_INCOMPATIBLE_OPTIONS",
      "NVJITLINK_ERROR_INCORRECT_INPUT_TYPE",
      "NVJITLINK_ERROR_ARCH_MISMATCH",
      "NVJITLINK_ERROR_OUTDATED_LIBRARY",
      "NVJITLINK_ERROR_MISSING_FATBIN",
      "NVJITLINK_ERROR_UNRECOGNIZED_ARCH",
      "NVJITLINK_ERROR_UNSUPPORTED_ARCH",
      "NVJITLINK_ERROR_LTO_NOT_ENABLED",
  };
  if (result >= 0 && static_cast<size_t>(result) < std::size(names))
    return names[result];
  return "an unknown nvJitLink error";
}

int inputType(LinkInputKind kind) {
  switch (kind) {
  case LinkInputKind::Ptx:
    return kInputPtx;
  case LinkInputKind::Cubin:
    return kInputCubin;
  case LinkInputKind::Fatbin:
    return kInputFatbin;
  case LinkInputKind::Object:
    return kInputObject;
  case LinkInputKind::Library:
    return kInputLibrary;
  case LinkInputKind::LtoIr:
    return kInputLtoIr;
  }
  return kInputPtx;
}

} // namespace

struct NvJitLink::Api {
  std::string path;
  Result (*create)(Handle *handle, uint32_t optionCount, const char **options);
  Result (*destroy)(Handle *handle);
  Result (*addData)(Handle handle, int inputType, const void *data, size_t size, const char *name);
  Result (*complete)(Handle handle);
  Result (*getLinkedCubinSize)(Handle handle, size_t *size);
  Result (*getLinkedCubin)(Handle handle, void *cubin);
  Result (*getErrorLogSize)(Handle handle, size_t *size);
  Result (*getErrorLog)(Handle handle, char *log);
  Result (*getInfoLogSize)(Handle handle, size_t *size);
  Result (*getInfoLog)(Handle handle, char *log);
  Result (*version)(unsigned *major, unsigned *minor);
};

namespace {

template <typename Function>
llvm::Error bind(const support::DynamicLibrary &library, const char *name, Function *&slot) {
  llvm::Expected<void *> address = library.symbol(name);
  if (!address)
    return address.takeError();
  slot = reinterpret_cast<Function *>(*address);
  return llvm::Error::success();
}

llvm::Expected<std::shared_ptr<const NvJitLink::Api>> loadApi(llvm::StringRef path) {
  static std::mutex mutex;
  static auto *loaded = new std::map<std::string, std::shared_ptr<const NvJitLink::Api>>;
  std::lock_guard<std::mutex> lock(mutex);
  if (auto found = loaded->find(path.str()); found != loaded->end())
    return found->second;

  llvm::Expected<support::DynamicLibrary> library = support::DynamicLibrary::open(path);
  if (!library)
    return library.takeError();
  auto api = std::make_shared<NvJitLink::Api>();
  api->path = path.str();
  llvm::Error error = llvm::joinErrors(bind(*library, "nvJitLinkCreate", api->create),
                                       bind(*library, "nvJitLinkDestroy", api->destroy));
  error = llvm::joinErrors(std::move(error), bind(*library, "nvJitLinkAddData", api->addData));
  error = llvm::joinErrors(std::move(error), bind(*library, "nvJitLinkComplete", api->complete));
  error = llvm::joinErrors(std::move(error),
                           bind(*library, "nvJitLinkGetLinkedCubinSize", api->getLinkedCubinSize));
  error = llvm::joinErrors(std::move(error),
                           bind(*library, "nvJitLinkGetLinkedCubin", api->getLinkedCubin));
  error = llvm::joinErrors(std::move(error),
                           bind(*library, "nvJitLinkGetErrorLogSize", api->getErrorLogSize));
  error =
      llvm::joinErrors(std::move(error), bind(*library, "nvJitLinkGetErrorLog", api->getErrorLog));
  error = llvm::joinErrors(std::move(error),
                           bind(*library, "nvJitLinkGetInfoLogSize", api->getInfoLogSize));
  error =
      llvm::joinErrors(std::move(error), bind(*library, "nvJitLinkGetInfoLog", api->getInfoLog));
  error = llvm::joinErrors(std::move(error), bind(*library, "nvJitLinkVersion", api->version));
  if (error)
    return error;
  auto inserted = loaded->emplace(path.str(), std::move(api)).first;
  return inserted->second;
}

/// Destroys the handle however the link ends.
class HandleGuard {
public:
  HandleGuard(const NvJitLink::Api &api) : api(api) {}
  ~HandleGuard() {
    if (handle)
      api.destroy(&handle);
  }
  HandleGuard(const HandleGuard &) = delete;
  HandleGuard &operator=(const HandleGuard &) = delete;
  Handle handle = nullptr;

private:
  const NvJitLink::Api &api;
};

std::string readLog(Handle handle, Result (*getSize)(Handle, size_t *),
                    Result (*get)(Handle, char *)) {
  size_t size = 0;
  if (!handle || getSize(handle, &size) != kSuccess || size == 0)
    return "";
  std::string log(size, '\0');
  if (get(handle, log.data()) != kSuccess)
    return "";
  log.resize(llvm::StringRef(log.c_str()).size());
  return log;
}

} // namespace

llvm::StringRef linkInputKindName(LinkInputKind kind) {
  switch (kind) {
  case LinkInputKind::Ptx:
    return "PTX";
  case LinkInputKind::Cubin:
    return "cubin";
  case LinkInputKind::Fatbin:
    return "fat binary";
  case LinkInputKind::Object:
    return "object";
  case LinkInputKind::Library:
    return "library";
  case LinkInputKind::LtoIr:
    return "LTO-IR";
  }
  return "?";
}

llvm::Expected<LinkInputKind> linkInputKindForPath(llvm::StringRef path) {
  llvm::StringRef extension = llvm::sys::path::extension(path);
  std::string lower = extension.lower();
  if (lower == ".ptx")
    return LinkInputKind::Ptx;
  if (lower == ".cubin")
    return LinkInputKind::Cubin;
  if (lower == ".fatbin")
    return LinkInputKind::Fatbin;
  if (lower == ".o")
    return LinkInputKind::Object;
  if (lower == ".a")
    return LinkInputKind::Library;
  if (lower == ".ltoir")
    return LinkInputKind::LtoIr;
  return llvm::createStringError(
      "cannot link '%s': expected a .ptx, .cubin, .fatbin, .o, .a or .ltoir file (CUDA sources, "
      ".cu, are compiled with nvcc first)",
      path.str().c_str());
}

llvm::Expected<LinkInput> readLinkInput(llvm::StringRef path) {
  llvm::Expected<LinkInputKind> kind = linkInputKindForPath(path);
  if (!kind)
    return kind.takeError();
  llvm::Expected<std::string> data = support::readFileBytes(path);
  if (!data)
    return data.takeError();
  return LinkInput{*kind, llvm::sys::path::filename(path).str(), std::move(*data)};
}

std::vector<std::string> nvJitLinkFlags(unsigned arch, const LinkOptions &options) {
  std::vector<std::string> flags = {"-arch=" + smName(arch)};
  unsigned level = options.debug ? 0 : options.optimizationLevel;
  // nvJitLink itself takes only -O0 and -O3; other levels go to ptxas.
  if (level == 0 || level == 3)
    flags.push_back("-O" + std::to_string(level));
  else
    flags.push_back("-Xptxas=-O" + std::to_string(level));
  if (options.maxRegisters != 0)
    flags.push_back("-maxrregcount=" + std::to_string(options.maxRegisters));
  if (options.debug)
    flags.push_back("-g");
  else if (options.lineInfo)
    flags.push_back("-lineinfo");
  for (const std::string &flag : options.extraPtxasFlags)
    flags.push_back("-Xptxas=" + flag);
  return flags;
}

llvm::Expected<NvJitLink> NvJitLink::load(const CudaToolkit &toolkit) {
  llvm::Expected<std::string> path = toolkit.require(ToolkitComponent::NvJitLink);
  if (!path)
    return path.takeError();
  return load(*path);
}

llvm::Expected<NvJitLink> NvJitLink::load(llvm::StringRef libraryPath) {
  llvm::Expected<std::shared_ptr<const Api>> api = loadApi(libraryPath);
  if (!api)
    return api.takeError();
  return NvJitLink(std::move(*api));
}

CudaVersion NvJitLink::version() const {
  unsigned major = 0, minor = 0;
  if (api->version(&major, &minor) != kSuccess)
    return {};
  return CudaVersion{major, minor, 0};
}

const std::string &NvJitLink::libraryPath() const {
  return api->path;
}

llvm::Expected<LinkedCubin> NvJitLink::link(unsigned arch, llvm::ArrayRef<LinkInput> inputs,
                                            const LinkOptions &options) const {
  if (!isCudaArchitecture(arch))
    return llvm::createStringError("cannot link for sm_%u: not an architecture CUDA 13 supports",
                                   arch);
  if (options.optimizationLevel > 3)
    return llvm::createStringError("optimisation level %u is out of range (0 to 3)",
                                   options.optimizationLevel);
  if (inputs.empty())
    return llvm::createStringError("nothing to link for sm_%u", arch);
  bool lto = false;
  for (const LinkInput &input : inputs) {
    lto |= input.kind == LinkInputKind::LtoIr;
    if (input.kind != LinkInputKind::Ptx)
      continue;
    llvm::Expected<PtxHeader> header = readPtxHeader(input.data);
    if (!header)
      return llvm::createStringError("cannot link '%s': %s", input.name.c_str(),
                                     llvm::toString(header.takeError()).c_str());
    if (header->targetArch > arch)
      return llvm::createStringError(
          "cannot link '%s' for sm_%u: its .target is sm_%u, and PTX only assembles for its own "
          "target or newer ones",
          input.name.c_str(), arch, header->targetArch);
  }

  std::vector<std::string> flags = nvJitLinkFlags(arch, options);
  flags.push_back("-verbose"); // resource usage in the info log
  if (lto)
    flags.push_back("-lto");
  std::vector<const char *> flagPointers;
  for (const std::string &flag : flags)
    flagPointers.push_back(flag.c_str());

  HandleGuard guard(*api);
  // `adding`: the input being added when the failure happened, if any.
  auto failure = [&](std::string summary, const LinkInput *adding = nullptr) -> llvm::Error {
    std::string log = readLog(guard.handle, api->getErrorLogSize, api->getErrorLog);
    ToolLog parsed = parsePtxasLog(log);
    // ptxas inside nvJitLink calls PTX "application ptx input", not by its
    // name: a line belongs to the PTX being added, else to the only PTX.
    const LinkInput *onlyPtx = nullptr;
    unsigned ptxCount = 0;
    for (const LinkInput &input : inputs)
      if (input.kind == LinkInputKind::Ptx) {
        onlyPtx = &input;
        ++ptxCount;
      }
    for (ToolMessage &message : parsed.messages) {
      if (message.line == 0)
        continue;
      const LinkInput *source = nullptr;
      for (const LinkInput &input : inputs)
        if (input.kind == LinkInputKind::Ptx && input.name == message.input)
          source = &input;
      if (!source && adding && adding->kind == LinkInputKind::Ptx)
        source = adding;
      if (!source && ptxCount == 1)
        source = onlyPtx;
      if (!source)
        continue;
      message.input = source->name;
      std::vector<ToolMessage> one = {message};
      attachSourceLines(one, source->data);
      message.sourceLine = one.front().sourceLine;
    }
    return llvm::make_error<CudaToolError>("nvJitLink", arch, std::move(summary),
                                           std::move(parsed.messages));
  };

  if (Result result = api->create(&guard.handle, static_cast<uint32_t>(flagPointers.size()),
                                  flagPointers.data());
      result != kSuccess)
    return failure(std::string("it rejected the options ") + llvm::join(flags, " ") + ": " +
                   resultName(result));
  for (const LinkInput &input : inputs) {
    // nvJitLink reads PTX as a C string.
    std::string ptxWithTerminator;
    const std::string *data = &input.data;
    if (input.kind == LinkInputKind::Ptx) {
      ptxWithTerminator = input.data + '\0';
      data = &ptxWithTerminator;
    }
    if (Result result = api->addData(guard.handle, inputType(input.kind), data->data(),
                                     data->size(), input.name.c_str());
        result != kSuccess)
      return failure("cannot add " + linkInputKindName(input.kind).str() + " '" + input.name +
                         "': " + resultName(result),
                     &input);
  }
  if (Result result = api->complete(guard.handle); result != kSuccess)
    return failure(std::string("linking failed: ") + resultName(result));

  size_t size = 0;
  if (Result result = api->getLinkedCubinSize(guard.handle, &size); result != kSuccess)
    return failure(std::string("cannot get the linked cubin: ") + resultName(result));
  LinkedCubin linked;
  linked.cubin.resize(size);
  if (Result result = api->getLinkedCubin(guard.handle, linked.cubin.data()); result != kSuccess)
    return failure(std::string("cannot get the linked cubin: ") + resultName(result));

  ToolLog info = parsePtxasLog(readLog(guard.handle, api->getInfoLogSize, api->getInfoLog));
  linked.usage = std::move(info.usage);
  for (ToolMessage &message : info.messages)
    if (message.severity == ToolSeverity::Warning)
      linked.warnings.push_back(std::move(message));
  return linked;
}

} // namespace kiln::cuda_tools
