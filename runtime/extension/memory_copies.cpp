//===- runtime/extension/memory_copies.cpp - Copies between memories ------===//
//
// copy_to_device(dst_pointer, src_buffer, nbytes, stream_handle=0)
// copy_to_host(dst_buffer, src_pointer, nbytes, stream_handle=0)
// copy_on_device(dst_pointer, src_pointer, nbytes, stream_handle=0)
// fill(dst_pointer, byte, nbytes, stream_handle=0)
//
// Host buffers must be C-contiguous and hold at least nbytes (the
// destination writable). On a non-default stream a copy may finish after
// the call returns: the caller keeps the host buffer alive until then.
//
//===----------------------------------------------------------------------===//

#include "runtime/extension/runtime_module.h"

namespace kiln::extension {
namespace {

/// The C-contiguous buffer of `object`, at least `nbytes` long.
bool hostBuffer(PyObject *object, bool writable, size_t nbytes, const char *what, Py_buffer &view) {
  int flags = PyBUF_C_CONTIGUOUS | (writable ? PyBUF_WRITABLE : 0);
  if (PyObject_GetBuffer(object, &view, flags) < 0) {
    PyObject *type, *value, *traceback;
    PyErr_Fetch(&type, &value, &traceback);
    PyErr_Format(PyExc_TypeError, "kiln: %s must be a C-contiguous%s buffer (%S)", what,
                 writable ? ", writable" : "", value ? value : Py_None);
    Py_XDECREF(type);
    Py_XDECREF(value);
    Py_XDECREF(traceback);
    return false;
  }
  if (static_cast<size_t>(view.len) < nbytes) {
    PyErr_Format(PyExc_ValueError, "kiln: %s holds %zd bytes, fewer than the %zu to copy", what,
                 view.len, nbytes);
    PyBuffer_Release(&view);
    return false;
  }
  return true;
}

/// Parses (first, second, nbytes[, stream]) where `first` and `second` are
/// given to the caller as objects.
bool parseCopy(PyObject *args, PyObject *kwargs, const char *format, const char **keywords,
               PyObject *&first, PyObject *&second, size_t &nbytes, StreamHandle &stream) {
  PyObject *size;
  PyObject *streamObject = nullptr;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, format, const_cast<char **>(keywords), &first,
                                   &second, &size, &streamObject))
    return false;
  return sizeFromObject(size, "nbytes", nbytes) && streamFromObject(streamObject, stream);
}

PyObject *copyToDevice(PyObject *, PyObject *args, PyObject *kwargs) {
  static const char *keywords[] = {"dst_pointer", "src_buffer", "nbytes", "stream_handle", nullptr};
  PyObject *destinationObject, *source;
  size_t nbytes;
  StreamHandle stream;
  DevicePointer destination;
  if (!parseCopy(args, kwargs, "OOO|O:copy_to_device", keywords, destinationObject, source, nbytes,
                 stream) ||
      !pointerFromObject(destinationObject, "dst_pointer", destination))
    return nullptr;
  ExecutionTarget *target = currentTarget();
  Py_buffer view;
  if (!target || !hostBuffer(source, false, nbytes, "src_buffer", view))
    return nullptr;
  Status status =
      withoutGil([&] { return target->copyToDevice(destination, view.buf, nbytes, stream); });
  PyBuffer_Release(&view);
  if (!status.ok())
    return raiseStatus(status);
  Py_RETURN_NONE;
}

PyObject *copyToHost(PyObject *, PyObject *args, PyObject *kwargs) {
  static const char *keywords[] = {"dst_buffer", "src_pointer", "nbytes", "stream_handle", nullptr};
  PyObject *destinationObject, *sourceObject;
  size_t nbytes;
  StreamHandle stream;
  DevicePointer source;
  if (!parseCopy(args, kwargs, "OOO|O:copy_to_host", keywords, destinationObject, sourceObject,
                 nbytes, stream) ||
      !pointerFromObject(sourceObject, "src_pointer", source))
    return nullptr;
  ExecutionTarget *target = currentTarget();
  Py_buffer view;
  if (!target || !hostBuffer(destinationObject, true, nbytes, "dst_buffer", view))
    return nullptr;
  Status status = withoutGil([&] { return target->copyToHost(view.buf, source, nbytes, stream); });
  PyBuffer_Release(&view);
  if (!status.ok())
    return raiseStatus(status);
  Py_RETURN_NONE;
}

PyObject *copyOnDevice(PyObject *, PyObject *args, PyObject *kwargs) {
  static const char *keywords[] = {"dst", "src", "nbytes", "stream_handle", nullptr};
  PyObject *destinationObject, *sourceObject;
  size_t nbytes;
  StreamHandle stream;
  DevicePointer destination, source;
  if (!parseCopy(args, kwargs, "OOO|O:copy_on_device", keywords, destinationObject, sourceObject,
                 nbytes, stream) ||
      !pointerFromObject(destinationObject, "dst", destination) ||
      !pointerFromObject(sourceObject, "src", source))
    return nullptr;
  ExecutionTarget *target = currentTarget();
  if (!target)
    return nullptr;
  Status status =
      withoutGil([&] { return target->copyOnDevice(destination, source, nbytes, stream); });
  if (!status.ok())
    return raiseStatus(status);
  Py_RETURN_NONE;
}

PyObject *fill(PyObject *, PyObject *args, PyObject *kwargs) {
  static const char *keywords[] = {"dst", "byte", "nbytes", "stream_handle", nullptr};
  PyObject *destinationObject;
  int byte;
  PyObject *size;
  PyObject *streamObject = nullptr;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OiO|O:fill", const_cast<char **>(keywords),
                                   &destinationObject, &byte, &size, &streamObject))
    return nullptr;
  if (byte < 0 || byte > 255) {
    PyErr_Format(PyExc_ValueError, "kiln: fill() byte must be in [0, 255], not %d", byte);
    return nullptr;
  }
  DevicePointer destination;
  size_t nbytes;
  StreamHandle stream;
  if (!pointerFromObject(destinationObject, "dst", destination) ||
      !sizeFromObject(size, "nbytes", nbytes) || !streamFromObject(streamObject, stream))
    return nullptr;
  ExecutionTarget *target = currentTarget();
  if (!target)
    return nullptr;
  Status status = withoutGil(
      [&] { return target->fill(destination, static_cast<uint8_t>(byte), nbytes, stream); });
  if (!status.ok())
    return raiseStatus(status);
  Py_RETURN_NONE;
}

PyMethodDef copyFunctions[] = {
    {"copy_to_device", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(copyToDevice)),
     METH_VARARGS | METH_KEYWORDS,
     "copy_to_device(dst_pointer, src_buffer, nbytes, stream_handle=0): host to device."},
    {"copy_to_host", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(copyToHost)),
     METH_VARARGS | METH_KEYWORDS,
     "copy_to_host(dst_buffer, src_pointer, nbytes, stream_handle=0): device to host."},
    {"copy_on_device", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(copyOnDevice)),
     METH_VARARGS | METH_KEYWORDS,
     "copy_on_device(dst, src, nbytes, stream_handle=0): device to device."},
    {"fill", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(fill)),
     METH_VARARGS | METH_KEYWORDS,
     "fill(dst, byte, nbytes, stream_handle=0): sets nbytes of device memory to byte."},
    {nullptr, nullptr, 0, nullptr},
};

} // namespace

bool addMemoryCopyFunctions(PyObject *module) {
  return PyModule_AddFunctions(module, copyFunctions) == 0;
}

} // namespace kiln::extension
