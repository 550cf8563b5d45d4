//===- backend/cuda_tools/cuda_toolkit.cpp - Finding the CUDA toolkit at run time ----===//

#include "backend/cuda_tools/cuda_toolkit.h"

#include "backend/cuda_tools/toolkit_version_memo.h"
#include "support/dynamic_library.h"
#include "support/temporary_directory.h"
#include "support/tool_runner.h"

#include <llvm/ADT/SmallString.h>
#include <llvm/ADT/StringExtras.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/JSON.h>
#include <llvm/Support/Path.h>
#include <llvm/Support/Process.h>
#include <llvm/Support/Program.h>
#include <llvm/Support/Regex.h>

#include <algorithm>

namespace kiln::cuda_tools {

namespace {

/// The directory NVIDIA's packages use for this host under targets/.
constexpr llvm::StringLiteral kHostTargetDirectory =
#if defined(__aarch64__)
    "sbsa-linux";
#else
    "x86_64-linux";
#endif

std::string joinPath(llvm::StringRef root, llvm::StringRef a, llvm::StringRef b = "",
                     llvm::StringRef c = "", llvm::StringRef d = "") {
  llvm::SmallString<256> path(root);
  for (llvm::StringRef part : {a, b, c, d})
    if (!part.empty())
      llvm::sys::path::append(path, part);
  return std::string(path);
}

std::optional<std::string> nonEmptyEnvironmentVariable(llvm::StringRef name) {
  std::optional<std::string> value = llvm::sys::Process::GetEnv(name);
  if (value && llvm::StringRef(*value).trim().empty())
    return std::nullopt;
  return value;
}

bool isExecutableFile(const std::string &path) {
  return llvm::sys::fs::is_regular_file(path) && llvm::sys::fs::can_execute(path);
}

/// Candidate paths of each component under `root`, most likely first.
std::vector<std::string> candidatePaths(llvm::StringRef root, ToolkitComponent component,
                                        unsigned majorVersion) {
  switch (component) {
  case ToolkitComponent::Ptxas:
    return {joinPath(root, "bin", "ptxas")};
  case ToolkitComponent::Fatbinary:
    return {joinPath(root, "bin", "fatbinary")};
  case ToolkitComponent::Nvcc:
    return {joinPath(root, "bin", "nvcc")};
  case ToolkitComponent::Libdevice:
    return {joinPath(root, "nvvm", "libdevice", "libdevice.10.bc")};
  case ToolkitComponent::NvJitLink: {
    std::vector<std::string> paths;
    // Runtime-only installations may lack the unversioned symlink.
    std::string versioned = "libnvJitLink.so." + std::to_string(majorVersion);
    for (std::string directory : {joinPath(root, "lib64"), joinPath(root, "lib"),
                                  joinPath(root, "targets", kHostTargetDirectory, "lib")}) {
      paths.push_back(joinPath(directory, "libnvJitLink.so"));
      if (majorVersion != 0)
        paths.push_back(joinPath(directory, versioned));
    }
    return paths;
  }
  }
  return {};
}

bool componentExists(ToolkitComponent component, const std::string &path) {
  switch (component) {
  case ToolkitComponent::Ptxas:
  case ToolkitComponent::Fatbinary:
  case ToolkitComponent::Nvcc:
    return isExecutableFile(path);
  case ToolkitComponent::Libdevice:
  case ToolkitComponent::NvJitLink:
    return llvm::sys::fs::is_regular_file(path);
  }
  return false;
}

/// version.json: {"cuda": {"name": "CUDA SDK", "version": "13.0.1"}, ...}
std::optional<CudaVersion> readVersionJson(llvm::StringRef root) {
  llvm::Expected<std::string> text = support::readFileBytes(joinPath(root, "version.json"));
  if (!text) {
    llvm::consumeError(text.takeError());
    return std::nullopt;
  }
  llvm::Expected<llvm::json::Value> json = llvm::json::parse(*text);
  if (!json) {
    llvm::consumeError(json.takeError());
    return std::nullopt;
  }
  const llvm::json::Object *object = json->getAsObject();
  const llvm::json::Object *cudaEntry = object ? object->getObject("cuda") : nullptr;
  std::optional<llvm::StringRef> version =
      cudaEntry ? cudaEntry->getString("version") : std::nullopt;
  if (!version)
    return std::nullopt;
  return parseCudaVersion(*version);
}

llvm::Error noToolkitAt(llvm::StringRef root, ToolkitSource source) {
  std::string ptxas = joinPath(root, "bin", "ptxas");
  std::string subject;
  if (source == ToolkitSource::CudaHome || source == ToolkitSource::CudaPath)
    subject = (describeToolkitSource(source) + " is '" + root + "', which").str();
  else
    subject = ("'" + root + "' (found through " + describeToolkitSource(source) + ")").str();
  if (!llvm::sys::fs::is_directory(root))
    return llvm::createStringError("%s is not a directory; it should name the CUDA toolkit's "
                                   "directory (the one holding bin/ptxas)",
                                   subject.c_str());
  return llvm::createStringError("%s holds no CUDA toolkit: '%s' is missing or not executable",
                                 subject.c_str(), ptxas.c_str());
}

/// The toolkit whose bin/ directory holds `program` on `path`, if any.
std::optional<std::string> toolkitRootOnPath(llvm::StringRef program, llvm::StringRef path) {
  llvm::SmallVector<llvm::StringRef, 16> directories;
  path.split(directories, llvm::sys::EnvPathSeparator, -1, /*KeepEmpty=*/false);
  if (directories.empty())
    return std::nullopt;
  llvm::ErrorOr<std::string> found = llvm::sys::findProgramByName(program, directories);
  if (!found)
    return std::nullopt;
  // Follow symlinks (/usr/bin/nvcc -> /opt/cuda/bin/nvcc) to the real toolkit.
  llvm::SmallString<256> real;
  if (llvm::sys::fs::real_path(*found, real))
    real = *found;
  llvm::StringRef binDirectory = llvm::sys::path::parent_path(real);
  llvm::StringRef root = llvm::sys::path::parent_path(binDirectory);
  if (root.empty())
    return std::nullopt;
  return root.str();
}

} // namespace

std::string CudaVersion::str() const {
  std::string text = std::to_string(major) + "." + std::to_string(minor);
  if (patch != 0)
    text += "." + std::to_string(patch);
  return text;
}

std::optional<CudaVersion> parseCudaVersion(llvm::StringRef text) {
  llvm::SmallVector<llvm::StringRef, 4> parts;
  text.trim().split(parts, '.');
  if (parts.size() < 2 || parts.size() > 4)
    return std::nullopt;
  unsigned numbers[3] = {0, 0, 0};
  for (size_t i = 0; i < parts.size() && i < 3; ++i)
    if (parts[i].getAsInteger(10, numbers[i]))
      return std::nullopt;
  return CudaVersion{numbers[0], numbers[1], numbers[2]};
}

std::optional<CudaVersion> parsePtxasVersionOutput(llvm::StringRef text) {
  llvm::Regex full("release ([0-9]+)\\.([0-9]+), V([0-9]+\\.[0-9]+\\.[0-9]+)");
  llvm::SmallVector<llvm::StringRef, 4> match;
  if (full.match(text, &match))
    return parseCudaVersion(match[3]);
  llvm::Regex releaseOnly("release ([0-9]+\\.[0-9]+)");
  if (releaseOnly.match(text, &match))
    return parseCudaVersion(match[1]);
  return std::nullopt;
}

llvm::StringRef componentName(ToolkitComponent component) {
  switch (component) {
  case ToolkitComponent::Ptxas:
    return "ptxas";
  case ToolkitComponent::Fatbinary:
    return "fatbinary";
  case ToolkitComponent::Nvcc:
    return "nvcc";
  case ToolkitComponent::Libdevice:
    return "libdevice";
  case ToolkitComponent::NvJitLink:
    return "nvJitLink";
  }
  return "?";
}

llvm::StringRef describeToolkitSource(ToolkitSource source) {
  switch (source) {
  case ToolkitSource::CudaHome:
    return "$CUDA_HOME";
  case ToolkitSource::CudaPath:
    return "$CUDA_PATH";
  case ToolkitSource::PtxasOnPath:
    return "ptxas on $PATH";
  case ToolkitSource::NvccOnPath:
    return "nvcc on $PATH";
  case ToolkitSource::PythonEnvironment:
    return "NVIDIA's CUDA wheels in the Python environment";
  case ToolkitSource::DefaultLocation:
    return "the default location";
  }
  return "?";
}

std::vector<std::string> sitePackagesNear(llvm::StringRef image) {
  llvm::StringRef directory = llvm::sys::path::parent_path(image);
  llvm::StringRef name = llvm::sys::path::filename(directory);
  llvm::StringRef above = llvm::sys::path::parent_path(directory);
  bool compilerLibrary =
      name == "kiln" && llvm::sys::path::filename(image).starts_with("libkiln-compiler.");
  // site-packages/kiln/_compiler*.so, or site-packages/kiln_compiler.scripts/kiln,
  // where auditwheel moves the program of a repaired wheel (bin/kiln then
  // runs it).
  if (!compilerLibrary && (name == "kiln" || name.ends_with(".scripts")))
    return {above.str()};
  // Else the environment's lib/: above the shared compiler library's
  // lib/kiln/, or beside the kiln program's bin/.
  if (!compilerLibrary && name != "bin")
    return {};
  std::string lib = compilerLibrary ? above.str() : joinPath(above, "lib");
  std::vector<std::string> found;
  std::error_code error;
  for (llvm::sys::fs::directory_iterator entry(lib, error), end; !error && entry != end;
       entry.increment(error)) {
    if (!llvm::sys::path::filename(entry->path()).starts_with("python3"))
      continue;
    for (llvm::StringRef packages : {"site-packages", "dist-packages"}) {
      std::string candidate = joinPath(entry->path(), packages);
      if (llvm::sys::fs::is_directory(candidate))
        found.push_back(candidate);
    }
  }
  std::sort(found.begin(), found.end());
  return found;
}

std::vector<std::string> wheelToolkitRoots(llvm::StringRef sitePackages) {
  std::string nvidia = joinPath(sitePackages, "nvidia");
  std::vector<std::pair<unsigned, std::string>> versioned;
  std::error_code error;
  for (llvm::sys::fs::directory_iterator entry(nvidia, error), end; !error && entry != end;
       entry.increment(error)) {
    llvm::StringRef name = llvm::sys::path::filename(entry->path());
    unsigned major = 0;
    if (name.consume_front("cu") && !name.getAsInteger(10, major))
      versioned.emplace_back(major, entry->path());
  }
  std::sort(versioned.begin(), versioned.end(),
            [](const auto &a, const auto &b) { return a.first > b.first; });
  std::vector<std::string> roots;
  for (auto &[major, root] : versioned)
    roots.push_back(std::move(root));
  roots.push_back(joinPath(nvidia, "cuda_nvcc"));
  return roots;
}

ToolkitSearchEnvironment ToolkitSearchEnvironment::fromProcess() {
  ToolkitSearchEnvironment environment;
  environment.cudaHome = nonEmptyEnvironmentVariable("CUDA_HOME");
  environment.cudaPath = nonEmptyEnvironmentVariable("CUDA_PATH");
  environment.path = llvm::sys::Process::GetEnv("PATH");
  // The file holding this code: the kiln program, or the kiln._compiler
  // module when Python compiles in process (whose main program is the
  // interpreter, perhaps of another environment).
  static char anchor;
  environment.sitePackages = sitePackagesNear(support::fileHolding(&anchor));
  return environment;
}

llvm::Expected<std::string> CudaToolkit::require(ToolkitComponent component) const {
  const ComponentLocation &found = location(component);
  if (found.path)
    return *found.path;
  std::string message =
      ("the CUDA toolkit at '" + root + "' (found through " + describeToolkitSource(source) +
       ") has no " + componentName(component) + "; looked for:")
          .str();
  for (const std::string &path : found.searched)
    message += "\n  " + path;
  return llvm::createStringError(message);
}

llvm::Expected<CudaToolkit> inspectCudaToolkit(llvm::StringRef root, ToolkitSource source,
                                               const ToolkitVersionMemo *memo) {
  std::string ptxas = joinPath(root, "bin", "ptxas");
  if (!isExecutableFile(ptxas))
    return noToolkitAt(root, source);

  CudaToolkit toolkit;
  toolkit.root = root.str();
  toolkit.source = source;
  if (std::optional<CudaVersion> version = readVersionJson(root)) {
    toolkit.version = *version;
    toolkit.versionSource = "version.json";
  } else if (std::optional<CudaVersion> remembered = memo ? memo->recall(ptxas) : std::nullopt) {
    toolkit.version = *remembered;
    toolkit.versionSource = "ptxas --version, remembered";
  } else {
    llvm::Expected<support::ToolOutput> output = support::runTool(ptxas, {"--version"});
    if (!output)
      return output.takeError();
    std::optional<CudaVersion> fromPtxas = parsePtxasVersionOutput(output->standardOutput);
    if (!fromPtxas)
      return llvm::createStringError(
          "cannot tell the version of the CUDA toolkit at '%s': it has no version.json, and "
          "'%s --version' printed no \"release N.N\"",
          toolkit.root.c_str(), ptxas.c_str());
    toolkit.version = *fromPtxas;
    toolkit.versionSource = "ptxas --version";
    if (memo)
      memo->remember(ptxas, toolkit.version);
  }

  for (ToolkitComponent component : kToolkitComponents) {
    ComponentLocation &location = toolkit.components[static_cast<unsigned>(component)];
    location.searched = candidatePaths(root, component, toolkit.version.major);
    for (const std::string &path : location.searched)
      if (componentExists(component, path)) {
        location.path = path;
        break;
      }
  }
  return toolkit;
}

llvm::Expected<CudaToolkit> findCudaToolkit(const ToolkitSearchEnvironment &environment) {
  std::optional<ToolkitVersionMemo> memo;
  if (environment.versionMemo)
    memo.emplace(*environment.versionMemo);
  auto inspect = [&](llvm::StringRef root, ToolkitSource source) {
    return inspectCudaToolkit(root, source, memo ? &*memo : nullptr);
  };
  // An explicit setting is what the user wants: no quiet fallback when it is wrong.
  if (environment.cudaHome)
    return inspect(*environment.cudaHome, ToolkitSource::CudaHome);
  if (environment.cudaPath)
    return inspect(*environment.cudaPath, ToolkitSource::CudaPath);

  if (environment.path) {
    if (std::optional<std::string> root = toolkitRootOnPath("ptxas", *environment.path))
      return inspect(*root, ToolkitSource::PtxasOnPath);
    if (std::optional<std::string> root = toolkitRootOnPath("nvcc", *environment.path)) {
      llvm::Expected<CudaToolkit> toolkit = inspect(*root, ToolkitSource::NvccOnPath);
      if (toolkit)
        return toolkit;
      // An nvcc without ptxas beside it (a compiler wrapper, say) is not a
      // toolkit; keep looking.
      llvm::consumeError(toolkit.takeError());
    }
  }

  for (const std::string &packages : environment.sitePackages)
    for (const std::string &root : wheelToolkitRoots(packages))
      if (isExecutableFile(joinPath(root, "bin", "ptxas")))
        return inspect(root, ToolkitSource::PythonEnvironment);

  if (isExecutableFile(joinPath(environment.defaultRoot, "bin", "ptxas")))
    return inspect(environment.defaultRoot, ToolkitSource::DefaultLocation);

  std::string wheels =
      environment.sitePackages.empty()
          ? std::string("kiln is not installed in a Python environment")
          : "no NVIDIA CUDA wheel is installed in " + llvm::join(environment.sitePackages, " or ");
  return llvm::createStringError(
      "no CUDA toolkit found: CUDA_HOME and CUDA_PATH are not set, neither ptxas nor nvcc is on "
      "PATH, %s, and %s does not exist; install the CUDA toolkit or set CUDA_HOME to its "
      "directory, or install kiln-compiler[cuda] for NVIDIA's CUDA wheels",
      wheels.c_str(), joinPath(environment.defaultRoot, "bin", "ptxas").c_str());
}

llvm::Expected<CudaToolkit> findCudaToolkit() {
  return findCudaToolkit(ToolkitSearchEnvironment::fromProcess());
}

} // namespace kiln::cuda_tools
