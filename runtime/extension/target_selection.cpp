//===- runtime/extension/target_selection.cpp - Where kernels run ---------===//
//
// The target is chosen once per process, at the first call that needs it:
//
//   KILN_TARGET=cuda   the CUDA target, or RuntimeError saying why not;
//   KILN_TARGET=cpu    the CPU engine;
//   KILN_TARGET=auto   (the default) CUDA when a device is usable, else the
//                      CPU engine with one RuntimeWarning saying why.
//
// The GIL serializes the choice: nothing between the check and the store
// runs Python code, and the warning comes after the store.
//
//===----------------------------------------------------------------------===//

#include "runtime/cpu_target.h"
#include "runtime/cuda/cuda_target.h"
#include "runtime/extension/runtime_module.h"

#include <cstdlib>
#include <cstring>

namespace kiln::extension {
namespace {

ExecutionTarget *selected = nullptr; // never destroyed: launches may outlive the interpreter
runtime::DeviceInfo selectedDevice;

ExecutionTarget *select() {
  const char *requested = std::getenv("KILN_TARGET");
  if (!requested || !*requested)
    requested = "auto";
  bool cpu = std::strcmp(requested, "cpu") == 0;
  bool cuda = std::strcmp(requested, "cuda") == 0;
  if (!cpu && !cuda && std::strcmp(requested, "auto") != 0) {
    PyErr_Format(PyExc_ValueError, "kiln: KILN_TARGET must be 'cuda', 'cpu' or 'auto', not '%s'",
                 requested);
    return nullptr;
  }

  std::unique_ptr<ExecutionTarget> target;
  Status why;
  if (!cpu) {
    target = runtime::createCudaTarget(why);
    if (!target && cuda) {
      PyErr_Format(PyExc_RuntimeError, "kiln: KILN_TARGET=cuda, but CUDA cannot be used: %s",
                   why.message().c_str());
      return nullptr;
    }
  }
  bool fellBack = !target && !cpu;
  if (!target)
    target = runtime::createCpuTarget();

  runtime::DeviceInfo info;
  if (Status status = target->deviceInfo(info); !status.ok()) {
    raiseStatus(status);
    return nullptr;
  }
  selectedDevice = info;
  selected = target.release();

  if (fellBack &&
      PyErr_WarnFormat(PyExc_RuntimeWarning, 1,
                       "kiln: no usable CUDA device (%s); kernels run on the CPU engine "
                       "(set KILN_TARGET=cpu to silence this warning)",
                       why.message().c_str()) < 0)
    return nullptr;
  return selected;
}

PyObject *targetName(PyObject *, PyObject *) {
  ExecutionTarget *target = currentTarget();
  return target ? PyUnicode_FromString(target->name()) : nullptr;
}

PyObject *sharesHostMemory(PyObject *, PyObject *) {
  ExecutionTarget *target = currentTarget();
  if (!target)
    return nullptr;
  return PyBool_FromLong(target->sharesHostMemory());
}

PyObject *deviceInfo(PyObject *, PyObject *) {
  if (!currentTarget())
    return nullptr;
  const runtime::DeviceInfo &info = selectedDevice;
  return Py_BuildValue("{s:i,s:s,s:(ii),s:K,s:i,s:i,s:i,s:i,s:s}", "ordinal", info.ordinal, "name",
                       info.name.c_str(), "compute_capability", info.computeCapabilityMajor,
                       info.computeCapabilityMinor, "total_memory",
                       static_cast<unsigned long long>(info.totalMemoryBytes),
                       "multiprocessor_count", info.multiprocessorCount, "warp_size", info.warpSize,
                       "max_threads_per_block", info.maxThreadsPerBlock,
                       "max_shared_memory_per_block", info.maxSharedMemoryPerBlock, "uuid",
                       info.uuid.c_str());
}

PyObject *memoryInfo(PyObject *, PyObject *) {
  ExecutionTarget *target = currentTarget();
  if (!target)
    return nullptr;
  uint64_t freeBytes = 0, totalBytes = 0;
  if (Status status = target->memoryInfo(freeBytes, totalBytes); !status.ok())
    return raiseStatus(status);
  return Py_BuildValue("(KK)", static_cast<unsigned long long>(freeBytes),
                       static_cast<unsigned long long>(totalBytes));
}

PyObject *driverVersion(PyObject *, PyObject *) {
  ExecutionTarget *target = currentTarget();
  if (!target)
    return nullptr;
  int version = 0;
  if (Status status = target->driverVersion(version); !status.ok())
    return raiseStatus(status);
  if (version == 0)
    Py_RETURN_NONE;
  return Py_BuildValue("(ii)", version / 1000, version % 1000 / 10);
}

PyObject *synchronize(PyObject *, PyObject *) {
  ExecutionTarget *target = currentTarget();
  if (!target)
    return nullptr;
  Status status = withoutGil([&] { return target->synchronizeDevice(); });
  if (!status.ok())
    return raiseStatus(status);
  Py_RETURN_NONE;
}

PyMethodDef targetFunctions[] = {
    {"target", targetName, METH_NOARGS,
     "target() -> 'cuda' or 'cpu': where kernels run (chosen at first use by KILN_TARGET)."},
    {"shares_host_memory", sharesHostMemory, METH_NOARGS,
     "shares_host_memory() -> bool: whether kernels use host arrays in place, without copies."},
    {"device_info", deviceInfo, METH_NOARGS,
     "device_info() -> dict: ordinal, name, compute_capability, total_memory, "
     "multiprocessor_count, warp_size, max_threads_per_block, max_shared_memory_per_block, "
     "uuid."},
    {"memory_info", memoryInfo, METH_NOARGS,
     "memory_info() -> (free, total): the device's free and total memory in bytes (on the CPU "
     "target, the host's available and physical memory)."},
    {"driver_version", driverVersion, METH_NOARGS,
     "driver_version() -> (major, minor) of the CUDA driver (cuDriverGetVersion), or None on the "
     "CPU target."},
    {"synchronize", synchronize, METH_NOARGS,
     "synchronize(): waits for all work on the device to finish."},
    {nullptr, nullptr, 0, nullptr},
};

} // namespace

ExecutionTarget *currentTarget() {
  if (selected)
    return selected;
  return select();
}

const runtime::DeviceInfo &currentDeviceInfo() {
  return selectedDevice;
}

bool addTargetFunctions(PyObject *module) {
  return PyModule_AddFunctions(module, targetFunctions) == 0;
}

} // namespace kiln::extension
