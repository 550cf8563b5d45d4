//===- backend/cuda_tools/arch_list.h - Which architectures to build for ---*- C++ -*-===//
//
// Users say which GPUs to build for the way their build systems do:
//
//   CMake's CUDA_ARCHITECTURES   75;80;90   80-real   90-virtual   all   all-major   native
//   TORCH_CUDA_ARCH_LIST         7.5 8.0 9.0+PTX      8.0;9.0+PTX
//   nvcc's names                 sm_80   compute_90
//
// separated by ';', ',' or spaces, in any mix. A plain CMake number means
// real and virtual (an sm_ cubin and compute_ PTX), as CMake defines it; a
// TORCH number means the cubin only, and +PTX adds the PTX. `all` is every
// architecture CUDA 13 supports and `all-major` the majors (75, 80, 90, 100,
// 110, 120), each with the newest PTX (nvcc's -arch=all / -arch=all-major,
// which CMake passes through); for Kiln the newest PTX is compute_90 (see
// cuda_archs.h). `native` asks the CUDA driver for this machine's GPUs.
//
// The list comes from --arch, else the CUDAARCHS environment variable (as
// CMake reads it), else Kiln's default:
//   sm_75, 80, 86, 89, 90, 100, 120 cubins and compute_90 PTX.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <llvm/ADT/STLFunctionalExtras.h>
#include <llvm/ADT/StringRef.h>
#include <llvm/Support/Error.h>

#include <optional>
#include <set>
#include <string>
#include <vector>

namespace kiln::cuda_tools {

/// What to build: machine code (cubins) for real architectures and PTX for
/// virtual ones.
struct ArchSet {
  std::set<unsigned> cubins;
  std::set<unsigned> ptx;

  bool empty() const { return cubins.empty() && ptx.empty(); }
  /// The canonical form, in CMake's grammar, ascending, which parses back to
  /// the same set: "75-real;80-real;90;100-real" (90: cubin and PTX).
  std::string str() const;
  /// For people: "sm_75 sm_80 sm_90 sm_100 cubins, compute_90 PTX".
  std::string describe() const;
  /// The PTX targets the code generator must produce: every PTX
  /// architecture, and ptxTargetForCubin() of every cubin.
  std::set<unsigned> ptxTargets() const;

  bool operator==(const ArchSet &) const = default;
};

/// sm_75, 80, 86, 89, 90, 100, 120 cubins and compute_90 PTX.
ArchSet defaultArchSet();

/// Returns the architectures of this machine's GPUs (for `native`).
using NativeArchProbe = llvm::function_ref<llvm::Expected<std::vector<unsigned>>()>;

/// Parses a list in any of the grammars above. Errors name the offending
/// entry and say what would be accepted.
llvm::Expected<ArchSet> parseArchList(llvm::StringRef list);
llvm::Expected<ArchSet> parseArchList(llvm::StringRef list, NativeArchProbe probeNative);

enum class ArchListSource { CommandLine, CudaArchsVariable, Configured, Default };

/// "--arch", "CUDAARCHS", "pyproject.toml", "the default".
llvm::StringRef describeArchListSource(ArchListSource source);

struct ArchSelection {
  ArchSet archs;
  ArchListSource source = ArchListSource::Default;
  /// The list as given; empty for the default.
  std::string text;
};

/// A list from a project's configuration, and where it is written.
struct ConfiguredArchList {
  std::string text;
  /// "[tool.kiln] of /src/pyproject.toml".
  std::string origin;
};

/// `commandLine` if given, else `cudaArchsVariable` if set and not blank,
/// else `configured`, else the default. Errors say where the bad list came
/// from.
llvm::Expected<ArchSelection>
selectArchitectures(std::optional<llvm::StringRef> commandLine,
                    std::optional<std::string> cudaArchsVariable, NativeArchProbe probeNative,
                    const std::optional<ConfiguredArchList> &configured = std::nullopt);
/// The same, reading CUDAARCHS from the environment and asking the CUDA
/// driver for `native`.
llvm::Expected<ArchSelection>
selectArchitectures(std::optional<llvm::StringRef> commandLine,
                    const std::optional<ConfiguredArchList> &configured = std::nullopt);

} // namespace kiln::cuda_tools
