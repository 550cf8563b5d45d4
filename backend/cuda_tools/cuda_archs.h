//===- backend/cuda_tools/cuda_archs.h - The GPU architectures Kiln builds for -*- C++ -*-===//
//
// Architectures are numbered as CMake numbers them: 86 is compute
// capability 8.6, whose machine code is sm_86 and whose PTX is compute_86.
//
// CUDA 13 compiles for sm_75, 80, 86, 87, 88, 89, 90, 100, 103, 110, 120
// and 121 (the arch-specific variants sm_90a, sm_100a, sm_100f... are not
// Kiln targets). Kiln's PTX comes from LLVM 19, whose NVPTX back end knows
// the targets up to sm_90 (but not sm_88). So:
//
//   - a cubin for sm_75..sm_90 is assembled from PTX for the same target,
//     except sm_88, assembled from sm_87 PTX;
//   - a cubin for sm_100 and newer is assembled by ptxas from sm_90 PTX
//     (ptxas accepts PTX of any older .target);
//   - the newest PTX Kiln can embed is compute_90, which the driver
//     JIT-compiles on newer GPUs; compute_88 and compute_100 and newer
//     cannot be embedded.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <llvm/ADT/ArrayRef.h>

#include <optional>
#include <string>

namespace kiln::cuda_tools {

/// Every architecture CUDA 13 compiles for, ascending.
llvm::ArrayRef<unsigned> cudaArchitectures();
bool isCudaArchitecture(unsigned arch);

/// The "major" architectures of nvcc's -arch=all-major: the oldest supported
/// one (75) and every N0 (80, 90, 100, 110, 120).
bool isMajorArchitecture(unsigned arch);

/// The newest PTX target LLVM 19 emits, and so the newest PTX Kiln embeds.
inline constexpr unsigned kNewestPtxArchitecture = 90;

/// Whether Kiln can produce PTX with `.target sm_<arch>` (75, 80, 86, 87, 89, 90).
bool isPtxArchitecture(unsigned arch);

/// The `.target` of the PTX that Kiln assembles into a cubin for `arch`: the
/// newest PTX target not newer than `arch`. Requires isCudaArchitecture(arch).
unsigned ptxTargetForCubin(unsigned arch);

/// When PTX for compute_<arch> cannot be embedded, why not (a sentence for
/// an error message); std::nullopt when it can.
std::optional<std::string> whyNoPtxFor(unsigned arch);

/// "sm_80", "compute_90".
std::string smName(unsigned arch);
std::string computeName(unsigned arch);

} // namespace kiln::cuda_tools
