//===- runtime/extension/dispatcher.cpp - Dispatcher and Launch -----------===//
//
// Dispatcher(name, specializations, arg_names=None), the C base of
// kiln.kernel.Kernel. Each specialization is a tuple that kiln._loader
// builds from the manifest (specialization_tuples.cpp decodes them).
// Instead of the sequence of specializations, the dispatcher may be given a
// callable that returns (specializations, arg_names): kiln._loader makes
// every kernel of a module so, and the specializations are read at the
// kernel's first use, so that an import costs the same whatever the number
// of kernels.
//
// dispatcher[griddim, blockdim, stream, sharedmem] checks the
// configuration and returns a Launch; calling it dispatches and launches
// (dispatcher.h). Calling the dispatcher itself is a TypeError, as in Numba.
//
//===----------------------------------------------------------------------===//

#include "runtime/extension/dispatcher.h"

#include <cstddef>
#include <structmember.h>
#include <vector>

namespace kiln::extension {
namespace {

PyTypeObject *dispatcherType = nullptr;
PyTypeObject *launchType = nullptr;

DispatcherObject *asDispatcher(PyObject *self) {
  return reinterpret_cast<DispatcherObject *>(self);
}

//===-- Dispatcher --------------------------------------------------------===//

int initializeDispatcher(PyObject *self, PyObject *args, PyObject *kwargs) {
  static const char *keywords[] = {"name",  "specializations", "arg_names",
                                   "exact", "arity",           nullptr};
  const char *name;
  PyObject *specializations, *argNames = Py_None;
  int exact = 0;
  unsigned arity = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "sO|O$pI:Dispatcher",
                                   const_cast<char **>(keywords), &name, &specializations,
                                   &argNames, &exact, &arity))
    return -1;
  DispatcherObject *dispatcher = asDispatcher(self);
  if (dispatcher->state) {
    PyErr_SetString(PyExc_RuntimeError, "kiln: Dispatcher is already initialized");
    return -1;
  }
  auto state = std::make_unique<DispatcherState>();
  state->name = name;
  state->exact = exact != 0;
  state->arity = arity;
  PyObject *keep = PyList_New(0);
  bool deferred = PyCallable_Check(specializations);
  bool ok = keep != nullptr && (deferred || addSpecializations(*state, specializations, keep)) &&
            setArgumentNames(*state, argNames);
  if (!ok) {
    Py_XDECREF(keep);
    return -1;
  }
  replaceReference(dispatcher->keep, keep);
  if (deferred)
    replaceReference(dispatcher->pending, Py_NewRef(specializations));
  dispatcher->state = state.release();
  return 0;
}

/// Reads the specializations of a dispatcher made from a callable. The
/// callable runs Python code, so another thread may finish first; its
/// result is then dropped.
bool readPendingSpecializations(DispatcherObject *dispatcher) {
  // Our own reference: another thread may finish and drop the dispatcher's
  // while this call runs.
  PyObject *pending = Py_NewRef(dispatcher->pending);
  PyObject *made = PyObject_CallNoArgs(pending);
  Py_DECREF(pending);
  if (!made)
    return false;
  if (!dispatcher->pending) {
    Py_DECREF(made);
    return true;
  }
  PyObject *specializations, *argNames;
  DispatcherState &state = *dispatcher->state;
  bool ok = PyArg_ParseTuple(made, "OO:specializations", &specializations, &argNames) &&
            addSpecializations(state, specializations, dispatcher->keep) &&
            (!state.argumentNames.empty() || setArgumentNames(state, argNames));
  Py_DECREF(made);
  if (!ok) {
    state.specializations.clear();
    return false;
  }
  Py_CLEAR(dispatcher->pending);
  return true;
}

bool initialized(DispatcherObject *dispatcher) {
  if (!dispatcher->state) {
    PyErr_SetString(PyExc_RuntimeError, "kiln: Dispatcher.__init__ was not called");
    return false;
  }
  return !dispatcher->pending || readPendingSpecializations(dispatcher);
}

int traverseDispatcher(PyObject *self, visitproc visit, void *arg) {
  Py_VISIT(Py_TYPE(self));
  Py_VISIT(asDispatcher(self)->keep);
  Py_VISIT(asDispatcher(self)->pending);
  return 0;
}

int clearDispatcher(PyObject *self) {
  Py_CLEAR(asDispatcher(self)->keep);
  Py_CLEAR(asDispatcher(self)->pending);
  return 0;
}

void deallocateDispatcher(PyObject *self) {
  PyObject_GC_UnTrack(self);
  clearDispatcher(self);
  delete asDispatcher(self)->state;
  if (std::vector<DispatcherState *> *retired = asDispatcher(self)->retired) {
    for (DispatcherState *state : *retired)
      delete state;
    delete retired;
  }
  freeObject(self);
}

struct LaunchObject {
  PyObject_HEAD VectorcallFunction vectorcall;
  PyObject *dispatcher;
  LaunchRequest request;
};

PyObject *callLaunch(PyObject *self, PyObject *const *args, size_t nargsf, PyObject *kwnames);

PyObject *subscript(PyObject *self, PyObject *key) {
  DispatcherObject *dispatcher = asDispatcher(self);
  if (!initialized(dispatcher))
    return nullptr;
  LaunchRequest request;
  if (!parseLaunchConfig(*dispatcher->state, key, request))
    return nullptr;
  auto *launch = PyObject_GC_New(LaunchObject, launchType);
  if (!launch)
    return nullptr;
  launch->vectorcall = callLaunch;
  Py_INCREF(self);
  launch->dispatcher = self;
  launch->request = request;
  PyObject_GC_Track(launch);
  return reinterpret_cast<PyObject *>(launch);
}

PyObject *callDispatcher(PyObject *, PyObject *, PyObject *) {
  PyErr_SetString(PyExc_ValueError,
                  "launch configuration was not specified. Use the syntax:\n\n"
                  "kernel_function[blockspergrid, threadsperblock](arg0, arg1, ..., argn)\n\n"
                  "See https://numba.readthedocs.io/en/stable/cuda/kernels.html"
                  "#kernel-invocation for help.");
  return nullptr;
}

PyObject *getName(PyObject *self, void *) {
  DispatcherObject *dispatcher = asDispatcher(self);
  if (!initialized(dispatcher))
    return nullptr;
  return PyUnicode_FromString(dispatcher->state->name.c_str());
}

PyObject *getArity(PyObject *self, void *) {
  DispatcherObject *dispatcher = asDispatcher(self);
  if (!initialized(dispatcher))
    return nullptr;
  return PyLong_FromUnsignedLong(dispatcher->state->arity);
}

/// `_replace(specializations)`: the dispatcher's specializations become
/// these (for a kernel that specializes on demand and has compiled more).
PyObject *replaceSpecializations(PyObject *self, PyObject *specializations) {
  DispatcherObject *dispatcher = asDispatcher(self);
  if (!initialized(dispatcher))
    return nullptr;
  const DispatcherState &old = *dispatcher->state;
  auto state = std::make_unique<DispatcherState>();
  state->name = old.name;
  state->argumentNames = old.argumentNames;
  state->exact = old.exact;
  state->arity = old.arity;
  if (!addSpecializations(*state, specializations, dispatcher->keep))
    return nullptr;
  if (!dispatcher->retired)
    dispatcher->retired = new std::vector<DispatcherState *>();
  dispatcher->retired->push_back(dispatcher->state);
  dispatcher->state = state.release();
  Py_RETURN_NONE;
}

/// `_max_cooperative_grid_blocks(index, threads, dynamic_shared)`: how many
/// blocks a cooperative launch of specialization `index` may have.
PyObject *maxCooperativeGridBlocks(PyObject *self, PyObject *args) {
  DispatcherObject *dispatcher = asDispatcher(self);
  if (!initialized(dispatcher))
    return nullptr;
  Py_ssize_t index;
  unsigned long long threads, dynamicShared;
  if (!PyArg_ParseTuple(args, "nKK:_max_cooperative_grid_blocks", &index, &threads, &dynamicShared))
    return nullptr;
  DispatcherState &state = *dispatcher->state;
  if (index < 0 || size_t(index) >= state.specializations.size()) {
    PyErr_Format(PyExc_IndexError, "kernel '%s' has no specialization %zd", state.name.c_str(),
                 index);
    return nullptr;
  }
  if (threads == 0 || threads > 1024 || dynamicShared > UINT32_MAX) {
    PyErr_Format(PyExc_ValueError,
                 "max_cooperative_grid_blocks() of kernel '%s': a block of %llu threads with "
                 "%llu bytes of dynamic shared memory cannot be launched",
                 state.name.c_str(), threads, dynamicShared);
    return nullptr;
  }
  runtime::ExecutionTarget *target = currentTarget();
  if (!target)
    return nullptr;
  Specialization &chosen = *state.specializations[size_t(index)];
  if (target->runsFatBinaries() && !fatBinaryIntact(chosen))
    return nullptr;
  uint32_t blocks = 0;
  Status status;
  Py_BEGIN_ALLOW_THREADS status = target->maxCooperativeBlocks(
      chosen.kernel, static_cast<uint32_t>(threads), static_cast<uint32_t>(dynamicShared), blocks);
  Py_END_ALLOW_THREADS if (!status.ok()) return raiseStatus(status);
  return PyLong_FromUnsignedLong(blocks);
}

PyMethodDef dispatcherMethods[] = {
    {"_replace", replaceSpecializations, METH_O,
     "_replace(specializations): use these specializations from now on."},
    {"_max_cooperative_grid_blocks", maxCooperativeGridBlocks, METH_VARARGS,
     "_max_cooperative_grid_blocks(index, threads, dynamic_shared): how many blocks a "
     "cooperative launch of specialization `index` may have."},
    {nullptr, nullptr, 0, nullptr},
};

PyGetSetDef dispatcherAccessors[] = {
    {"__name__", getName, nullptr, "The kernel's Python name.", nullptr},
    {"arity", getArity, nullptr, "The number of arguments the kernel takes.", nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr},
};

PyType_Slot dispatcherSlots[] = {
    {Py_tp_doc,
     const_cast<char *>("Dispatcher(name, specializations, arg_names=None, *, exact=False, "
                        "arity=0): the C base of kiln.kernel.Kernel. When no specialization "
                        "fits a call and the object has a _specialize(args) method, it is "
                        "called once; if it returns true (having called _replace), the call "
                        "is dispatched again.")},
    {Py_tp_new, reinterpret_cast<void *>(PyType_GenericNew)},
    {Py_tp_init, reinterpret_cast<void *>(initializeDispatcher)},
    {Py_tp_dealloc, reinterpret_cast<void *>(deallocateDispatcher)},
    {Py_tp_traverse, reinterpret_cast<void *>(traverseDispatcher)},
    {Py_tp_clear, reinterpret_cast<void *>(clearDispatcher)},
    {Py_tp_call, reinterpret_cast<void *>(callDispatcher)},
    {Py_mp_subscript, reinterpret_cast<void *>(subscript)},
    {Py_tp_getset, dispatcherAccessors},
    {Py_tp_methods, dispatcherMethods},
    {0, nullptr},
};

PyType_Spec dispatcherSpec = {"kiln._runtime.Dispatcher", sizeof(DispatcherObject), 0,
                              Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
                              dispatcherSlots};

//===-- Launch ------------------------------------------------------------===//

LaunchObject *asLaunch(PyObject *self) {
  return reinterpret_cast<LaunchObject *>(self);
}

/// The specialization for these arguments, classified into `call`. When
/// none fits and the dispatcher has a `_specialize` method (a kernel that
/// specializes on demand), that is asked once to add one.
Specialization *chooseSpecialization(PyObject *dispatcherObject, PyObject *const *args,
                                     size_t count, const LaunchRequest &request,
                                     CallArguments &call) {
  const DispatcherState *state = asDispatcher(dispatcherObject)->state;
  if (!classifyArguments(*state, args, count, request.stream, call))
    return nullptr;
  bool noMatch = false;
  Specialization *chosen = selectSpecialization(*state, call, noMatch);
  if (chosen || !noMatch || Py_IS_TYPE(dispatcherObject, dispatcherType))
    return chosen;
  PyObject *errorType, *errorValue, *errorTraceback;
  PyErr_Fetch(&errorType, &errorValue, &errorTraceback);
  PyObject *specialize = PyObject_GetAttrString(dispatcherObject, "_specialize");
  if (!specialize) {
    PyErr_Clear();
    PyErr_Restore(errorType, errorValue, errorTraceback);
    return nullptr;
  }
  PyObject *arguments = PyTuple_New(Py_ssize_t(count));
  for (size_t i = 0; arguments && i < count; ++i)
    PyTuple_SetItem(arguments, Py_ssize_t(i), Py_NewRef(args[i]));
  PyObject *added =
      arguments ? PyObject_CallFunctionObjArgs(specialize, arguments, nullptr) : nullptr;
  Py_XDECREF(arguments);
  Py_DECREF(specialize);
  int again = added ? PyObject_IsTrue(added) : -1;
  Py_XDECREF(added);
  if (again == 0) {
    PyErr_Restore(errorType, errorValue, errorTraceback); // nothing added: the first answer
    return nullptr;
  }
  Py_XDECREF(errorType);
  Py_XDECREF(errorValue);
  Py_XDECREF(errorTraceback);
  if (again < 0)
    return nullptr;
  // The arguments' classification does not depend on the specializations.
  state = asDispatcher(dispatcherObject)->state; // _replace made a new one
  return selectSpecialization(*state, call, noMatch);
}

/// Classifies, selects and packs; launches unless `dryRun`. Returns the
/// chosen specialization's index, or -1 with an exception set.
Py_ssize_t dispatch(PyObject *self, PyObject *const *args, size_t nargsf, PyObject *kwnames,
                    bool dryRun) {
  LaunchObject *launch = asLaunch(self);
  const DispatcherState &before = *asDispatcher(launch->dispatcher)->state;
  if (kwnames && PyTuple_Size(kwnames)) {
    PyErr_Format(PyExc_TypeError, "kernel '%s' takes no keyword arguments", before.name.c_str());
    return -1;
  }
  size_t count = vectorcallArgumentCount(nargsf);
  if (count != before.arity) {
    PyErr_Format(PyExc_TypeError, "kernel '%s' takes %u argument%s, but %zu %s given",
                 before.name.c_str(), before.arity, before.arity == 1 ? "" : "s", count,
                 count == 1 ? "was" : "were");
    return -1;
  }
  CallArguments call;
  Specialization *chosen =
      chooseSpecialization(launch->dispatcher, args, count, launch->request, call);
  const DispatcherState &state = *asDispatcher(launch->dispatcher)->state;
  if (!chosen || !checkSharedMemory(state, *chosen, launch->request) ||
      !launchSpecialization(*chosen, call, launch->request, dryRun))
    return -1;
  for (size_t i = 0; i < state.specializations.size(); ++i)
    if (state.specializations[i].get() == chosen)
      return Py_ssize_t(i);
  return 0;
}

PyObject *callLaunch(PyObject *self, PyObject *const *args, size_t nargsf, PyObject *kwnames) {
  if (dispatch(self, args, nargsf, kwnames, false) < 0)
    return nullptr;
  Py_RETURN_NONE;
}

/// tp_call, for callers that pass a tuple and a dict (PyObject_Call from C,
/// Launch.__call__): the same call as through vectorcall.
PyObject *callLaunchWithTuple(PyObject *self, PyObject *args, PyObject *kwargs) {
  Py_ssize_t count = PyTuple_Size(args);
  if (count < 0)
    return nullptr;
  std::vector<PyObject *> items(static_cast<size_t>(count));
  for (Py_ssize_t i = 0; i < count; ++i)
    items[size_t(i)] = PyTuple_GetItem(args, i);
  PyObject *kwnames = nullptr;
  if (kwargs && PyDict_Size(kwargs) > 0) {
    PyObject *keys = PyDict_Keys(kwargs);
    kwnames = keys ? PySequence_Tuple(keys) : nullptr;
    Py_XDECREF(keys);
    if (!kwnames)
      return nullptr;
  }
  PyObject *result = callLaunch(self, items.data(), size_t(count), kwnames);
  Py_XDECREF(kwnames);
  return result;
}

PyObject *prepare(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
  Py_ssize_t index = dispatch(self, args, size_t(nargs), nullptr, true);
  return index < 0 ? nullptr : PyLong_FromSsize_t(index);
}

int traverseLaunch(PyObject *self, visitproc visit, void *arg) {
  Py_VISIT(Py_TYPE(self));
  Py_VISIT(asLaunch(self)->dispatcher);
  return 0;
}

int clearLaunch(PyObject *self) {
  Py_CLEAR(asLaunch(self)->dispatcher);
  return 0;
}

void deallocateLaunch(PyObject *self) {
  PyObject_GC_UnTrack(self);
  clearLaunch(self);
  freeObject(self);
}

PyObject *dim3Tuple(const runtime::Dim3 &dim) {
  return Py_BuildValue("(III)", dim.x, dim.y, dim.z);
}

PyObject *getGrid(PyObject *self, void *) {
  return dim3Tuple(asLaunch(self)->request.dims.grid);
}
PyObject *getBlock(PyObject *self, void *) {
  return dim3Tuple(asLaunch(self)->request.dims.block);
}
PyObject *getStream(PyObject *self, void *) {
  return PyLong_FromSize_t(asLaunch(self)->request.stream);
}
PyObject *getShared(PyObject *self, void *) {
  return PyLong_FromUnsignedLong(asLaunch(self)->request.dims.dynamicSharedBytes);
}
PyObject *getKernel(PyObject *self, void *) {
  return Py_NewRef(asLaunch(self)->dispatcher);
}

PyGetSetDef launchAccessors[] = {
    {"griddim", getGrid, nullptr, "The grid, as (x, y, z).", nullptr},
    {"blockdim", getBlock, nullptr, "The block, as (x, y, z).", nullptr},
    {"stream", getStream, nullptr, "The stream handle.", nullptr},
    {"sharedmem", getShared, nullptr, "Bytes of dynamic shared memory.", nullptr},
    {"kernel", getKernel, nullptr, "The kernel.", nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr},
};

PyMethodDef launchMethods[] = {
    {"prepare", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(prepare)), METH_FASTCALL,
     "prepare(*args) -> int: dispatches and packs the parameters without launching; returns "
     "the index of the chosen specialization (for tests and benchmarks)."},
    {nullptr, nullptr, 0, nullptr},
};

PyMemberDef launchMembers[] = {
    {"__vectorcalloffset__", T_PYSSIZET, Py_ssize_t(offsetof(LaunchObject, vectorcall)), READONLY,
     nullptr},
    {nullptr, 0, 0, 0, nullptr},
};

PyType_Slot launchSlots[] = {
    {Py_tp_doc, const_cast<char *>("kernel[griddim, blockdim, stream, sharedmem]: call it with "
                                   "the kernel's arguments to launch.")},
    {Py_tp_dealloc, reinterpret_cast<void *>(deallocateLaunch)},
    {Py_tp_traverse, reinterpret_cast<void *>(traverseLaunch)},
    {Py_tp_clear, reinterpret_cast<void *>(clearLaunch)},
    {Py_tp_call, reinterpret_cast<void *>(callLaunchWithTuple)},
    {Py_tp_getset, launchAccessors},
    {Py_tp_methods, launchMethods},
    {Py_tp_members, launchMembers},
    {0, nullptr},
};

PyType_Spec launchSpec = {"kiln._runtime.Launch", sizeof(LaunchObject), 0,
                          Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | vectorcallTypeFlag |
                              Py_TPFLAGS_DISALLOW_INSTANTIATION,
                          launchSlots};

} // namespace

bool addDispatcherTypes(PyObject *module) {
  PyObject *dispatcher = PyType_FromSpec(&dispatcherSpec);
  dispatcherType = reinterpret_cast<PyTypeObject *>(dispatcher);
  if (!dispatcher || PyModule_AddObjectRef(module, "Dispatcher", dispatcher) < 0)
    return false;
  PyObject *launch = PyType_FromSpec(&launchSpec);
  launchType = reinterpret_cast<PyTypeObject *>(launch);
  return launch && PyModule_AddObjectRef(module, "Launch", launch) == 0;
}

} // namespace kiln::extension
