//===- backend/cuda_tools/cuda_archs.cpp - The GPU architectures Kiln builds for -----===//

#include "backend/cuda_tools/cuda_archs.h"

#include <llvm/ADT/STLExtras.h>

namespace kiln::cuda_tools {

namespace {

constexpr unsigned kCudaArchitectures[] = {75, 80, 86, 87, 88, 89, 90, 100, 103, 110, 120, 121};

/// `llc -march=nvptx64 -mcpu=help` of LLVM 19, restricted to CUDA 13's list.
constexpr unsigned kPtxArchitectures[] = {75, 80, 86, 87, 89, 90};

} // namespace

llvm::ArrayRef<unsigned> cudaArchitectures() {
  return kCudaArchitectures;
}

bool isCudaArchitecture(unsigned arch) {
  return llvm::is_contained(kCudaArchitectures, arch);
}

bool isMajorArchitecture(unsigned arch) {
  return isCudaArchitecture(arch) && (arch == kCudaArchitectures[0] || arch % 10 == 0);
}

bool isPtxArchitecture(unsigned arch) {
  return llvm::is_contained(kPtxArchitectures, arch);
}

unsigned ptxTargetForCubin(unsigned arch) {
  unsigned target = kPtxArchitectures[0];
  for (unsigned candidate : kPtxArchitectures)
    if (candidate <= arch)
      target = candidate;
  return target;
}

std::optional<std::string> whyNoPtxFor(unsigned arch) {
  if (isPtxArchitecture(arch))
    return std::nullopt;
  if (arch > kNewestPtxArchitecture)
    return computeName(arch) + " PTX cannot be embedded: the newest PTX Kiln emits is " +
           computeName(kNewestPtxArchitecture) +
           " (the limit of LLVM 19), which the CUDA driver JIT-compiles on newer GPUs; " +
           smName(arch) + " cubins are built from sm_90 PTX";
  if (isCudaArchitecture(arch))
    return computeName(arch) + " PTX cannot be embedded: LLVM 19 has no " + smName(arch) +
           " PTX target; " + smName(arch) + " cubins are built from " +
           smName(ptxTargetForCubin(arch)) + " PTX, and " + computeName(ptxTargetForCubin(arch)) +
           " PTX runs on " + smName(arch) + " GPUs";
  return computeName(arch) + " is not an architecture CUDA 13 supports";
}

std::string smName(unsigned arch) {
  return "sm_" + std::to_string(arch);
}
std::string computeName(unsigned arch) {
  return "compute_" + std::to_string(arch);
}

} // namespace kiln::cuda_tools
