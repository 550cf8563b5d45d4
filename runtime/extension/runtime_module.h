//===- runtime/extension/runtime_module.h - kiln._runtime -------*- C++ -*-===//
//
// [Note: kiln._runtime]
// The C extension under the Python package `kiln`. It holds everything on
// the path from a Python call to a kernel launch, so that the hot path
// (classify the arguments, pick a specialization, pack its parameters,
// launch) allocates nothing and runs no Python code:
//
//   target_selection   the ExecutionTarget, chosen at first use
//   stable_abi         what the limited API spells differently, once
//   python_errors      Status -> Python exception; kiln.CudaError
//   python_arguments   pointers, sizes and stream handles from Python values
//   device_buffer      DeviceBuffer: one target allocation
//   host_buffer        HostBuffer: pinned or mapped host memory
//   memory_copies      copy_to_device/copy_to_host/copy_on_device/fill
//   ipc_memory         ipc_export/ipc_open/ipc_close: CUDA IPC
//   stream_objects     Stream and Event
//   device_array       DeviceArrayBase, the C base of kiln.cuda.DeviceNDArray
//   module_image       the module_loader capsule and ModuleImage
//   argument_types     the types of kernel arguments, as dispatch sees them
//   argument_classify  Python values -> argument types and values
//   dispatcher         Dispatcher, the C base of kiln.kernel.Kernel
//   launch_config      k[griddim, blockdim, stream, sharedmem]
//   parameter_packing  argument values -> the kernel ABI (docs/abi.md)
//
// Each part adds its types and functions to the module through one add*()
// function below. Types are heap types made from specs; the runtime runs
// in one interpreter, so their objects are kept in globals.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/execution_target.h"
#include "runtime/extension/stable_abi.h"

namespace kiln::extension {

using runtime::DevicePointer;
using runtime::ErrorKind;
using runtime::EventHandle;
using runtime::ExecutionTarget;
using runtime::Status;
using runtime::StreamHandle;

// target_selection.cpp
/// The target, chosen at the first call (KILN_TARGET); null with a Python
/// exception set if it cannot be chosen.
ExecutionTarget *currentTarget();
/// The chosen target's device, valid once currentTarget() succeeded.
const runtime::DeviceInfo &currentDeviceInfo();
bool addTargetFunctions(PyObject *module);

// python_errors.cpp
/// Sets the Python exception `status` becomes and returns null.
PyObject *raiseStatus(const Status &status);
bool addErrorTypes(PyObject *module);

// python_arguments.cpp
/// An address: a non-negative int.
bool pointerFromObject(PyObject *object, const char *what, DevicePointer &pointer);
/// A byte count: a non-negative int.
bool sizeFromObject(PyObject *object, const char *what, size_t &size);
/// A stream: None or 0 (the default stream), an int handle, or an object
/// with a `handle` attribute holding either (or a ctypes pointer).
bool streamFromObject(PyObject *object, StreamHandle &stream);

// One add*() per part: adds its types and functions to kiln._runtime.
bool addDeviceBufferType(PyObject *module);
bool addHostBufferType(PyObject *module);
bool addMemoryCopyFunctions(PyObject *module);
bool addIpcFunctions(PyObject *module);
bool addStreamTypes(PyObject *module);
bool addDeviceArrayType(PyObject *module);
bool addModuleLoader(PyObject *module);
bool addDispatcherTypes(PyObject *module);

/// Runs `work` with the GIL released: for every call into the target that
/// may block (copies, synchronization, launches).
template <typename Work> Status withoutGil(Work &&work) {
  PyThreadState *state = PyEval_SaveThread();
  Status status = work();
  PyEval_RestoreThread(state);
  return status;
}

/// Adds `type` (a new reference, which this steals) to `module` as `name`.
bool addType(PyObject *module, const char *name, PyObject *type);

} // namespace kiln::extension
