//===- runtime/extension/stream_objects.cpp - Stream and Event ------------===//
//
// Stream(): a new stream, destroyed when collected. Stream.wrap(handle): an
// external stream (cuda.external_stream), never destroyed by Kiln.
// Event(timing=True): record(stream_handle=0), synchronize(), query(),
// elapsed_time(end) in milliseconds.
//
//===----------------------------------------------------------------------===//

#include "runtime/extension/runtime_module.h"

#include <cstdio>

namespace kiln::extension {
namespace {

struct StreamObject {
  PyObject_HEAD ExecutionTarget *target;
  StreamHandle handle;
  bool owned;
};

struct EventObject {
  PyObject_HEAD ExecutionTarget *target;
  EventHandle handle;
  bool timing;
};

PyTypeObject *streamType = nullptr;
PyTypeObject *eventType = nullptr;

StreamObject *asStream(PyObject *self) {
  return reinterpret_cast<StreamObject *>(self);
}
EventObject *asEvent(PyObject *self) {
  return reinterpret_cast<EventObject *>(self);
}

//===-- Stream ------------------------------------------------------------===//

int initializeStream(PyObject *self, PyObject *args, PyObject *kwargs) {
  static const char *keywords[] = {nullptr};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, ":Stream", const_cast<char **>(keywords)))
    return -1;
  StreamObject *stream = asStream(self);
  if (stream->target) {
    PyErr_SetString(PyExc_RuntimeError, "kiln: Stream is already initialized");
    return -1;
  }
  ExecutionTarget *target = currentTarget();
  if (!target)
    return -1;
  StreamHandle handle = 0;
  if (Status status = target->createStream(handle); !status.ok()) {
    raiseStatus(status);
    return -1;
  }
  stream->target = target;
  stream->handle = handle;
  stream->owned = true;
  return 0;
}

void deallocateStream(PyObject *self) {
  StreamObject *stream = asStream(self);
  if (stream->target && stream->owned && stream->handle)
    stream->target->destroyStream(stream->handle);
  freeObject(self);
}

PyObject *wrapStream(PyObject *cls, PyObject *handleObject) {
  StreamHandle handle;
  if (!streamFromObject(handleObject, handle))
    return nullptr;
  ExecutionTarget *target = currentTarget();
  if (!target)
    return nullptr;
  auto *type = reinterpret_cast<PyTypeObject *>(cls);
  PyObject *self = allocateObject(type);
  if (!self)
    return nullptr;
  asStream(self)->target = target;
  asStream(self)->handle = handle;
  asStream(self)->owned = false;
  return self;
}

PyObject *synchronizeStream(PyObject *self, PyObject *) {
  StreamObject *stream = asStream(self);
  ExecutionTarget *target = stream->target ? stream->target : currentTarget();
  if (!target)
    return nullptr;
  Status status = withoutGil([&] { return target->synchronizeStream(stream->handle); });
  if (!status.ok())
    return raiseStatus(status);
  Py_RETURN_NONE;
}

PyObject *queryStream(PyObject *self, PyObject *) {
  StreamObject *stream = asStream(self);
  ExecutionTarget *target = stream->target ? stream->target : currentTarget();
  if (!target)
    return nullptr;
  bool finished = false;
  if (Status status = target->queryStream(stream->handle, finished); !status.ok())
    return raiseStatus(status);
  return PyBool_FromLong(finished);
}

PyObject *streamHandle(PyObject *self, void *) {
  return PyLong_FromSize_t(asStream(self)->handle);
}

PyObject *streamOwned(PyObject *self, void *) {
  return PyBool_FromLong(asStream(self)->owned);
}

PyObject *representStream(PyObject *self) {
  char text[64];
  std::snprintf(text, sizeof text, "<kiln Stream 0x%zx%s>", size_t(asStream(self)->handle),
                asStream(self)->owned ? "" : " (external)");
  return PyUnicode_FromString(text);
}

PyMethodDef streamMethods[] = {
    {"synchronize", synchronizeStream, METH_NOARGS,
     "synchronize(): waits for all work on the stream."},
    {"query", queryStream, METH_NOARGS, "query() -> bool: whether all work on it has finished."},
    {"wrap", wrapStream, METH_O | METH_CLASS,
     "Stream.wrap(handle): an external stream, which Kiln never destroys."},
    {nullptr, nullptr, 0, nullptr},
};

PyGetSetDef streamAccessors[] = {
    {"handle", streamHandle, nullptr, "The stream's handle (int; CUstream on CUDA).", nullptr},
    {"owned", streamOwned, nullptr, "False for external streams (Stream.wrap).", nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr},
};

PyType_Slot streamSlots[] = {
    {Py_tp_doc, const_cast<char *>("Stream(): a stream of the target, destroyed when collected.")},
    {Py_tp_new, reinterpret_cast<void *>(PyType_GenericNew)},
    {Py_tp_init, reinterpret_cast<void *>(initializeStream)},
    {Py_tp_dealloc, reinterpret_cast<void *>(deallocateStream)},
    {Py_tp_methods, streamMethods},
    {Py_tp_getset, streamAccessors},
    {Py_tp_repr, reinterpret_cast<void *>(representStream)},
    {0, nullptr},
};

PyType_Spec streamSpec = {"kiln._runtime.Stream", sizeof(StreamObject), 0,
                          Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE, streamSlots};

//===-- Event -------------------------------------------------------------===//

int initializeEvent(PyObject *self, PyObject *args, PyObject *kwargs) {
  static const char *keywords[] = {"timing", nullptr};
  int timing = 1;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|p:Event", const_cast<char **>(keywords),
                                   &timing))
    return -1;
  EventObject *event = asEvent(self);
  if (event->target) {
    PyErr_SetString(PyExc_RuntimeError, "kiln: Event is already initialized");
    return -1;
  }
  ExecutionTarget *target = currentTarget();
  if (!target)
    return -1;
  EventHandle handle = 0;
  if (Status status = target->createEvent(timing != 0, handle); !status.ok()) {
    raiseStatus(status);
    return -1;
  }
  event->target = target;
  event->handle = handle;
  event->timing = timing != 0;
  return 0;
}

void deallocateEvent(PyObject *self) {
  EventObject *event = asEvent(self);
  if (event->target && event->handle)
    event->target->destroyEvent(event->handle);
  freeObject(self);
}

bool initialized(EventObject *event) {
  if (event->target)
    return true;
  PyErr_SetString(PyExc_RuntimeError, "kiln: Event.__init__ was not called");
  return false;
}

PyObject *recordEvent(PyObject *self, PyObject *args, PyObject *kwargs) {
  static const char *keywords[] = {"stream_handle", nullptr};
  PyObject *streamObject = nullptr;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|O:record", const_cast<char **>(keywords),
                                   &streamObject))
    return nullptr;
  StreamHandle stream;
  EventObject *event = asEvent(self);
  if (!streamFromObject(streamObject, stream) || !initialized(event))
    return nullptr;
  if (Status status = event->target->recordEvent(event->handle, stream); !status.ok())
    return raiseStatus(status);
  Py_RETURN_NONE;
}

PyObject *synchronizeEvent(PyObject *self, PyObject *) {
  EventObject *event = asEvent(self);
  if (!initialized(event))
    return nullptr;
  Status status = withoutGil([&] { return event->target->synchronizeEvent(event->handle); });
  if (!status.ok())
    return raiseStatus(status);
  Py_RETURN_NONE;
}

PyObject *queryEvent(PyObject *self, PyObject *) {
  EventObject *event = asEvent(self);
  if (!initialized(event))
    return nullptr;
  bool finished = false;
  if (Status status = event->target->queryEvent(event->handle, finished); !status.ok())
    return raiseStatus(status);
  return PyBool_FromLong(finished);
}

PyObject *elapsedTime(PyObject *self, PyObject *end) {
  EventObject *event = asEvent(self);
  if (!initialized(event))
    return nullptr;
  if (!PyObject_TypeCheck(end, eventType)) {
    PyErr_Format(PyExc_TypeError, "kiln: elapsed_time() takes an Event, not %s",
                 typeNameOf(end).c_str());
    return nullptr;
  }
  if (!initialized(asEvent(end)))
    return nullptr;
  float milliseconds = 0;
  if (Status status =
          event->target->elapsedMilliseconds(event->handle, asEvent(end)->handle, milliseconds);
      !status.ok())
    return raiseStatus(status);
  return PyFloat_FromDouble(milliseconds);
}

PyObject *eventHandle(PyObject *self, void *) {
  return PyLong_FromSize_t(asEvent(self)->handle);
}

PyObject *eventTiming(PyObject *self, void *) {
  return PyBool_FromLong(asEvent(self)->timing);
}

PyMethodDef eventMethods[] = {
    {"record", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(recordEvent)),
     METH_VARARGS | METH_KEYWORDS, "record(stream_handle=0): records the event on a stream."},
    {"synchronize", synchronizeEvent, METH_NOARGS,
     "synchronize(): waits until the event has happened."},
    {"query", queryEvent, METH_NOARGS, "query() -> bool: whether the event has happened."},
    {"elapsed_time", elapsedTime, METH_O,
     "elapsed_time(end) -> float: milliseconds from this event to `end`."},
    {nullptr, nullptr, 0, nullptr},
};

PyGetSetDef eventAccessors[] = {
    {"handle", eventHandle, nullptr, "The event's handle (int; CUevent on CUDA).", nullptr},
    {"timing", eventTiming, nullptr, "Whether the event records time.", nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr},
};

PyType_Slot eventSlots[] = {
    {Py_tp_doc, const_cast<char *>("Event(timing=True): an event of the target.")},
    {Py_tp_new, reinterpret_cast<void *>(PyType_GenericNew)},
    {Py_tp_init, reinterpret_cast<void *>(initializeEvent)},
    {Py_tp_dealloc, reinterpret_cast<void *>(deallocateEvent)},
    {Py_tp_methods, eventMethods},
    {Py_tp_getset, eventAccessors},
    {0, nullptr},
};

PyType_Spec eventSpec = {"kiln._runtime.Event", sizeof(EventObject), 0,
                         Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE, eventSlots};

} // namespace

bool addStreamTypes(PyObject *module) {
  PyObject *stream = PyType_FromSpec(&streamSpec);
  streamType = reinterpret_cast<PyTypeObject *>(stream);
  if (!stream || PyModule_AddObjectRef(module, "Stream", stream) < 0)
    return false;
  PyObject *event = PyType_FromSpec(&eventSpec);
  eventType = reinterpret_cast<PyTypeObject *>(event);
  return event && PyModule_AddObjectRef(module, "Event", event) == 0;
}

} // namespace kiln::extension
