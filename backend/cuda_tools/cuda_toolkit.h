//===- backend/cuda_tools/cuda_toolkit.h - Finding the CUDA toolkit at run time -*- C++ -*-===//
//
// An installed kiln uses the CUDA toolkit of the machine it runs on, not the
// one it was built with. The search, first match wins:
//
//   1. $CUDA_HOME          (if set, it must be a toolkit: no fallback)
//   2. $CUDA_PATH          (likewise)
//   3. the toolkit whose bin/ holds the `ptxas`, else the `nvcc`, on $PATH
//   4. NVIDIA's CUDA wheels in the Python environment kiln is installed in
//      (`pip install kiln-compiler[cuda]`: nvidia-cuda-nvcc puts ptxas and
//      fatbinary in site-packages/nvidia/cu13/bin, nvidia-nvvm libdevice in
//      site-packages/nvidia/cu13/nvvm), newest CUDA major version first
//   5. /usr/local/cuda
//
// A toolkit is a directory with bin/ptxas. Its version comes from
// version.json, or else from `ptxas --version`. The other pieces Kiln uses
// (fatbinary, nvcc, libdevice, libnvJitLink) are looked up too; a missing
// one is an error only when something needs it, and the error names every
// place that was searched.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <llvm/ADT/StringRef.h>
#include <llvm/Support/Error.h>

#include <array>
#include <optional>
#include <string>
#include <vector>

namespace kiln::cuda_tools {

struct CudaVersion {
  unsigned major = 0;
  unsigned minor = 0;
  /// 0 when the source gives only major.minor.
  unsigned patch = 0;

  /// "13.0.88", or "13.0" without a patch number.
  std::string str() const;
  bool operator==(const CudaVersion &) const = default;
};

/// Parses "13.0" or "13.0.88".
std::optional<CudaVersion> parseCudaVersion(llvm::StringRef text);

/// Reads the version from `ptxas --version` output ("... release 13.0, V13.0.88").
std::optional<CudaVersion> parsePtxasVersionOutput(llvm::StringRef text);

enum class ToolkitComponent { Ptxas, Fatbinary, Nvcc, Libdevice, NvJitLink };
inline constexpr unsigned kToolkitComponentCount = 5;
inline constexpr std::array<ToolkitComponent, kToolkitComponentCount> kToolkitComponents = {
    ToolkitComponent::Ptxas, ToolkitComponent::Fatbinary, ToolkitComponent::Nvcc,
    ToolkitComponent::Libdevice, ToolkitComponent::NvJitLink};

/// "ptxas", "fatbinary", "nvcc", "libdevice", "nvJitLink".
llvm::StringRef componentName(ToolkitComponent component);

/// How the toolkit's root was found.
enum class ToolkitSource {
  CudaHome,
  CudaPath,
  PtxasOnPath,
  NvccOnPath,
  PythonEnvironment,
  DefaultLocation
};

/// "$CUDA_HOME", "$CUDA_PATH", "ptxas on $PATH", "nvcc on $PATH", "NVIDIA's
/// CUDA wheels in the Python environment", "the default location".
llvm::StringRef describeToolkitSource(ToolkitSource source);

/// The inputs of the search; fromProcess() reads the environment. Tests
/// substitute their own.
struct ToolkitSearchEnvironment {
  std::optional<std::string> cudaHome;
  std::optional<std::string> cudaPath;
  std::optional<std::string> path;
  /// The site-packages directories of the Python environment kiln runs from,
  /// where NVIDIA's wheels put the toolkit's pieces under nvidia/.
  std::vector<std::string> sitePackages;
  std::string defaultRoot = "/usr/local/cuda";
  /// The file of a ToolkitVersionMemo (toolkit_version_memo.h) to consult
  /// before asking ptxas for a toolkit's version, and to tell what it says;
  /// none by default.
  std::optional<std::string> versionMemo;

  static ToolkitSearchEnvironment fromProcess();
};

/// The site-packages directories near the file holding kiln's code, `image`:
/// <prefix>/lib/python3.*/{site,dist}-packages for a program in <prefix>/bin
/// or the shared compiler library in <prefix>/lib/kiln, and the directory
/// above for a module in site-packages/kiln or a program
/// in site-packages/kiln_compiler.scripts (a wheel repaired by auditwheel).
std::vector<std::string> sitePackagesNear(llvm::StringRef image);

/// The toolkit roots NVIDIA's wheels make under `sitePackages`: nvidia/cuN
/// (CUDA 13 on), newest first, then nvidia/cuda_nvcc (CUDA 12's layout).
std::vector<std::string> wheelToolkitRoots(llvm::StringRef sitePackages);

struct ComponentLocation {
  /// Where the component is, if it was found.
  std::optional<std::string> path;
  /// Every path tried, in order (for error messages).
  std::vector<std::string> searched;
};

struct CudaToolkit {
  std::string root;
  ToolkitSource source = ToolkitSource::DefaultLocation;
  CudaVersion version;
  /// "version.json", "ptxas --version", or "ptxas --version, remembered"
  /// (from a ToolkitVersionMemo).
  std::string versionSource;
  std::array<ComponentLocation, kToolkitComponentCount> components;

  const ComponentLocation &location(ToolkitComponent component) const {
    return components[static_cast<unsigned>(component)];
  }
  /// The component's path, or an error naming it, the places searched and
  /// how this toolkit was found.
  llvm::Expected<std::string> require(ToolkitComponent component) const;
};

/// Finds the toolkit as described at the top of this file.
llvm::Expected<CudaToolkit> findCudaToolkit(const ToolkitSearchEnvironment &environment);
llvm::Expected<CudaToolkit> findCudaToolkit();

class ToolkitVersionMemo;

/// Describes `root` as a toolkit (components and version) without searching;
/// a version ptxas must tell comes from `memo` where it remembers it.
llvm::Expected<CudaToolkit> inspectCudaToolkit(llvm::StringRef root, ToolkitSource source,
                                               const ToolkitVersionMemo *memo = nullptr);

} // namespace kiln::cuda_tools
