//===- runtime/extension/host_buffer.cpp - HostBuffer ---------------------===//
//
// HostBuffer(nbytes, mapped=False): page-locked host memory (pinned_array),
// or page-locked memory mapped into the device (mapped_array), with a
// writable buffer protocol so that numpy.frombuffer wraps it.
//
//===----------------------------------------------------------------------===//

#include "runtime/extension/runtime_module.h"

namespace kiln::extension {
namespace {

struct HostBufferObject {
  PyObject_HEAD ExecutionTarget *target;
  void *host;
  size_t nbytes;
  bool mapped;
  DevicePointer devicePointer;
};

int initialize(PyObject *self, PyObject *args, PyObject *kwargs) {
  auto *buffer = reinterpret_cast<HostBufferObject *>(self);
  static const char *keywords[] = {"nbytes", "mapped", nullptr};
  PyObject *size;
  int mapped = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|p:HostBuffer", const_cast<char **>(keywords),
                                   &size, &mapped))
    return -1;
  if (buffer->target) {
    PyErr_SetString(PyExc_RuntimeError, "kiln: HostBuffer is already initialized");
    return -1;
  }
  size_t nbytes;
  if (!sizeFromObject(size, "nbytes", nbytes))
    return -1;
  ExecutionTarget *target = currentTarget();
  if (!target)
    return -1;
  void *host = nullptr;
  // Allocate at least one byte, so that even an empty buffer has an address.
  if (Status status = target->allocateHost(nbytes ? nbytes : 1, mapped != 0, host); !status.ok()) {
    raiseStatus(status);
    return -1;
  }
  DevicePointer devicePointer = 0;
  if (mapped) {
    if (Status status = target->mappedDevicePointer(host, devicePointer); !status.ok()) {
      target->releaseHost(host);
      raiseStatus(status);
      return -1;
    }
  }
  buffer->target = target;
  buffer->host = host;
  buffer->nbytes = nbytes;
  buffer->mapped = mapped != 0;
  buffer->devicePointer = devicePointer;
  return 0;
}

void deallocate(PyObject *self) {
  auto *buffer = reinterpret_cast<HostBufferObject *>(self);
  if (buffer->target && buffer->host)
    buffer->target->releaseHost(buffer->host);
  freeObject(self);
}

int getBuffer(PyObject *self, Py_buffer *view, int flags) {
  auto *buffer = reinterpret_cast<HostBufferObject *>(self);
  if (!buffer->host) {
    PyErr_SetString(PyExc_BufferError, "kiln: HostBuffer is not initialized");
    view->obj = nullptr;
    return -1;
  }
  return PyBuffer_FillInfo(view, self, buffer->host, static_cast<Py_ssize_t>(buffer->nbytes), 0,
                           flags);
}

PyObject *getPointer(PyObject *self, void *) {
  return PyLong_FromVoidPtr(reinterpret_cast<HostBufferObject *>(self)->host);
}

PyObject *getDevicePointer(PyObject *self, void *) {
  auto *buffer = reinterpret_cast<HostBufferObject *>(self);
  if (!buffer->mapped)
    Py_RETURN_NONE;
  return PyLong_FromUnsignedLongLong(buffer->devicePointer);
}

PyObject *getSize(PyObject *self, void *) {
  return PyLong_FromSize_t(reinterpret_cast<HostBufferObject *>(self)->nbytes);
}

PyObject *getMapped(PyObject *self, void *) {
  return PyBool_FromLong(reinterpret_cast<HostBufferObject *>(self)->mapped);
}

PyGetSetDef accessors[] = {
    {"pointer", getPointer, nullptr, "The host address (int).", nullptr},
    {"device_pointer", getDevicePointer, nullptr,
     "The device address of a mapped buffer (int); None when not mapped.", nullptr},
    {"nbytes", getSize, nullptr, "The size in bytes.", nullptr},
    {"mapped", getMapped, nullptr, "Whether the buffer is mapped into the device.", nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr},
};

PyType_Slot slots[] = {
    {Py_tp_doc, const_cast<char *>("HostBuffer(nbytes, mapped=False): page-locked host memory "
                                   "(mapped: also visible to the device), a writable buffer.")},
    {Py_tp_new, reinterpret_cast<void *>(PyType_GenericNew)},
    {Py_tp_init, reinterpret_cast<void *>(initialize)},
    {Py_tp_dealloc, reinterpret_cast<void *>(deallocate)},
    {Py_tp_getset, accessors},
    {Py_bf_getbuffer, reinterpret_cast<void *>(getBuffer)},
    {0, nullptr},
};

PyType_Spec spec = {"kiln._runtime.HostBuffer", sizeof(HostBufferObject), 0,
                    Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE, slots};

} // namespace

bool addHostBufferType(PyObject *module) {
  return addType(module, "HostBuffer", PyType_FromSpec(&spec));
}

} // namespace kiln::extension
