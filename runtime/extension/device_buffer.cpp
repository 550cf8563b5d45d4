//===- runtime/extension/device_buffer.cpp - DeviceBuffer -----------------===//
//
// DeviceBuffer(nbytes, managed=False): one allocation in the target's
// memory, freed when the object is collected. A zero-byte buffer allocates
// nothing and has pointer 0, as a zero-size device array in Numba.
//
// managed=True allocates managed (unified) memory, for managed_array: on the
// CUDA target its pointer is an address the host may read and write too;
// on the CPU target all memory is host memory, and managed is ordinary.
//
//===----------------------------------------------------------------------===//

#include "runtime/extension/runtime_module.h"

#include <cstdio>

namespace kiln::extension {
namespace {

struct DeviceBufferObject {
  PyObject_HEAD ExecutionTarget *target;
  DevicePointer pointer;
  size_t nbytes;
  bool managed;
};

int initialize(PyObject *self, PyObject *args, PyObject *kwargs) {
  auto *buffer = reinterpret_cast<DeviceBufferObject *>(self);
  static const char *keywords[] = {"nbytes", "managed", nullptr};
  PyObject *size;
  int managed = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|$p:DeviceBuffer", const_cast<char **>(keywords),
                                   &size, &managed))
    return -1;
  if (buffer->target) {
    PyErr_SetString(PyExc_RuntimeError, "kiln: DeviceBuffer is already initialized");
    return -1;
  }
  size_t nbytes;
  if (!sizeFromObject(size, "nbytes", nbytes))
    return -1;
  ExecutionTarget *target = currentTarget();
  if (!target)
    return -1;
  DevicePointer pointer = 0;
  if (nbytes) {
    Status status =
        managed ? target->allocateManaged(nbytes, pointer) : target->allocate(nbytes, pointer);
    if (!status.ok()) {
      raiseStatus(status);
      return -1;
    }
  }
  buffer->target = target;
  buffer->pointer = pointer;
  buffer->nbytes = nbytes;
  buffer->managed = managed != 0;
  return 0;
}

void deallocate(PyObject *self) {
  auto *buffer = reinterpret_cast<DeviceBufferObject *>(self);
  if (buffer->target && buffer->pointer)
    buffer->target->release(buffer->pointer);
  freeObject(self);
}

PyObject *getPointer(PyObject *self, void *) {
  return PyLong_FromUnsignedLongLong(reinterpret_cast<DeviceBufferObject *>(self)->pointer);
}

PyObject *getSize(PyObject *self, void *) {
  return PyLong_FromSize_t(reinterpret_cast<DeviceBufferObject *>(self)->nbytes);
}

PyObject *represent(PyObject *self) {
  auto *buffer = reinterpret_cast<DeviceBufferObject *>(self);
  char text[128];
  std::snprintf(text, sizeof text, "<kiln DeviceBuffer of %zu bytes%s at 0x%llx>", buffer->nbytes,
                buffer->managed ? " of managed memory" : "",
                static_cast<unsigned long long>(buffer->pointer));
  return PyUnicode_FromString(text);
}

PyGetSetDef accessors[] = {
    {"pointer", getPointer, nullptr, "The address of the allocation (int; 0 when empty).", nullptr},
    {"nbytes", getSize, nullptr, "The size of the allocation in bytes.", nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr},
};

PyType_Slot slots[] = {
    {Py_tp_doc,
     const_cast<char *>("DeviceBuffer(nbytes, managed=False): an allocation in the target's "
                        "memory, freed when collected; managed=True allocates managed (unified) "
                        "memory, which the host may also read and write at `pointer`.")},
    {Py_tp_new, reinterpret_cast<void *>(PyType_GenericNew)},
    {Py_tp_init, reinterpret_cast<void *>(initialize)},
    {Py_tp_dealloc, reinterpret_cast<void *>(deallocate)},
    {Py_tp_getset, accessors},
    {Py_tp_repr, reinterpret_cast<void *>(represent)},
    {0, nullptr},
};

PyType_Spec spec = {"kiln._runtime.DeviceBuffer", sizeof(DeviceBufferObject), 0,
                    Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE, slots};

} // namespace

bool addDeviceBufferType(PyObject *module) {
  return addType(module, "DeviceBuffer", PyType_FromSpec(&spec));
}

} // namespace kiln::extension
