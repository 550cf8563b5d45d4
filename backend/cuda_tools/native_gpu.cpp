//===- backend/cuda_tools/native_gpu.cpp - The GPUs of this machine ------------------===//

#include "backend/cuda_tools/native_gpu.h"

#include "support/dynamic_library.h"

#include <string>

namespace kiln::cuda_tools {

namespace {

// The few driver API entry points needed, declared here so that Kiln does
// not depend on cuda.h. These are stable parts of the driver ABI.
using CUresult = int;
using CUdevice = int;
constexpr CUresult kCudaSuccess = 0;
constexpr CUresult kCudaErrorStubLibrary = 34;
constexpr CUresult kCudaErrorNoDevice = 100;
constexpr int kAttributeComputeCapabilityMajor = 75;
constexpr int kAttributeComputeCapabilityMinor = 76;

using CuInit = CUresult(unsigned flags);
using CuDeviceGetCount = CUresult(int *count);
using CuDeviceGet = CUresult(CUdevice *device, int ordinal);
using CuDeviceGetAttribute = CUresult(int *value, int attribute, CUdevice device);
using CuGetErrorName = CUresult(CUresult error, const char **name);

std::string resultName(const support::DynamicLibrary &driver, CUresult result) {
  std::string text = std::to_string(result);
  if (llvm::Expected<CuGetErrorName *> getErrorName =
          driver.function<CuGetErrorName>("cuGetErrorName")) {
    const char *name = nullptr;
    if ((*getErrorName)(result, &name) == kCudaSuccess && name)
      text = std::string(name) + " (" + text + ")";
  } else {
    llvm::consumeError(getErrorName.takeError());
  }
  return text;
}

} // namespace

llvm::Expected<std::vector<unsigned>> probeNativeGpuArchitectures() {
  llvm::Expected<support::DynamicLibrary> driver = support::DynamicLibrary::open("libcuda.so.1");
  if (!driver)
    return llvm::createStringError("there is no CUDA driver to ask (%s)",
                                   llvm::toString(driver.takeError()).c_str());

  auto cuInit = driver->function<CuInit>("cuInit");
  auto cuDeviceGetCount = driver->function<CuDeviceGetCount>("cuDeviceGetCount");
  auto cuDeviceGet = driver->function<CuDeviceGet>("cuDeviceGet");
  auto cuDeviceGetAttribute = driver->function<CuDeviceGetAttribute>("cuDeviceGetAttribute");
  if (!cuInit)
    return cuInit.takeError();
  if (!cuDeviceGetCount)
    return cuDeviceGetCount.takeError();
  if (!cuDeviceGet)
    return cuDeviceGet.takeError();
  if (!cuDeviceGetAttribute)
    return cuDeviceGetAttribute.takeError();

  if (CUresult result = (*cuInit)(0); result != kCudaSuccess) {
    const char *hint = result == kCudaErrorNoDevice ? " (this machine has no GPU)"
                       : result == kCudaErrorStubLibrary
                           ? " (libcuda.so.1 is the toolkit's stub, not a driver)"
                           : "";
    return llvm::createStringError("the CUDA driver failed to start: cuInit returned %s%s",
                                   resultName(*driver, result).c_str(), hint);
  }
  int count = 0;
  if (CUresult result = (*cuDeviceGetCount)(&count); result != kCudaSuccess)
    return llvm::createStringError("cuDeviceGetCount returned %s",
                                   resultName(*driver, result).c_str());
  if (count == 0)
    return llvm::createStringError("the CUDA driver sees no GPU");

  std::vector<unsigned> architectures;
  for (int ordinal = 0; ordinal < count; ++ordinal) {
    CUdevice device = 0;
    int major = 0, minor = 0;
    CUresult result = (*cuDeviceGet)(&device, ordinal);
    if (result == kCudaSuccess)
      result = (*cuDeviceGetAttribute)(&major, kAttributeComputeCapabilityMajor, device);
    if (result == kCudaSuccess)
      result = (*cuDeviceGetAttribute)(&minor, kAttributeComputeCapabilityMinor, device);
    if (result != kCudaSuccess)
      return llvm::createStringError("cannot read the compute capability of GPU %d: %s", ordinal,
                                     resultName(*driver, result).c_str());
    architectures.push_back(static_cast<unsigned>(major * 10 + minor));
  }
  return architectures;
}

} // namespace kiln::cuda_tools
