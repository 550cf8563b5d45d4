//===- runtime/extension/ipc_memory.cpp - Device memory across processes --===//
//
// ipc_export(pointer) -> (handle: bytes, base, size)
// ipc_open(handle: bytes) -> base
// ipc_close(base)
//
// CUDA IPC, as numba.cuda's IpcHandle uses it: ipc_export gives the
// driver's handle of the allocation holding `pointer` (64 bytes another
// process passes to ipc_open), the allocation's first address and size, so
// that the caller can say where in it its array starts. On the CPU engine
// each raises saying that IPC needs a GPU.
//
//===----------------------------------------------------------------------===//

#include "runtime/extension/runtime_module.h"

#include <cstring>

namespace kiln::extension {
namespace {

using runtime::IpcMemoryHandle;

PyObject *ipcExport(PyObject *, PyObject *pointerObject) {
  DevicePointer pointer;
  if (!pointerFromObject(pointerObject, "pointer", pointer))
    return nullptr;
  ExecutionTarget *target = currentTarget();
  if (!target)
    return nullptr;
  IpcMemoryHandle exported;
  Status status = withoutGil([&] { return target->exportIpc(pointer, exported); });
  if (!status.ok())
    return raiseStatus(status);
  return Py_BuildValue("(y#KK)", reinterpret_cast<const char *>(exported.handle),
                       static_cast<Py_ssize_t>(IpcMemoryHandle::kBytes),
                       static_cast<unsigned long long>(exported.base),
                       static_cast<unsigned long long>(exported.size));
}

PyObject *ipcOpen(PyObject *, PyObject *handleObject) {
  Py_buffer view;
  if (PyObject_GetBuffer(handleObject, &view, PyBUF_SIMPLE) < 0)
    return nullptr;
  if (view.len != static_cast<Py_ssize_t>(IpcMemoryHandle::kBytes)) {
    PyErr_Format(PyExc_ValueError, "kiln: a CUDA IPC handle is %zu bytes, not %zd",
                 IpcMemoryHandle::kBytes, view.len);
    PyBuffer_Release(&view);
    return nullptr;
  }
  unsigned char handle[IpcMemoryHandle::kBytes];
  std::memcpy(handle, view.buf, IpcMemoryHandle::kBytes);
  PyBuffer_Release(&view);
  ExecutionTarget *target = currentTarget();
  if (!target)
    return nullptr;
  DevicePointer base;
  Status status = withoutGil([&] { return target->openIpc(handle, base); });
  if (!status.ok())
    return raiseStatus(status);
  return PyLong_FromUnsignedLongLong(base);
}

PyObject *ipcClose(PyObject *, PyObject *baseObject) {
  DevicePointer base;
  if (!pointerFromObject(baseObject, "base", base))
    return nullptr;
  ExecutionTarget *target = currentTarget();
  if (!target)
    return nullptr;
  Status status = withoutGil([&] { return target->closeIpc(base); });
  if (!status.ok())
    return raiseStatus(status);
  Py_RETURN_NONE;
}

PyMethodDef ipcFunctions[] = {
    {"ipc_export", ipcExport, METH_O,
     "ipc_export(pointer) -> (handle, base, size): the CUDA IPC handle of the allocation holding "
     "pointer, its first address and its size."},
    {"ipc_open", ipcOpen, METH_O,
     "ipc_open(handle) -> base: another process's allocation, opened in this one."},
    {"ipc_close", ipcClose, METH_O, "ipc_close(base): lets go of memory ipc_open opened."},
    {nullptr, nullptr, 0, nullptr},
};

} // namespace

bool addIpcFunctions(PyObject *module) {
  return PyModule_AddFunctions(module, ipcFunctions) == 0;
}

} // namespace kiln::extension
