//===- runtime/extension/launch_config.cpp - kernel[griddim, blockdim, ...] ===//
//
// griddim and blockdim are ints or tuples of one to three ints; stream is 0,
// None, an int handle or a stream object; sharedmem a byte count. Checked
// against the device's limits (those the CPU engine also enforces) before
// any argument is touched: bad values are ValueErrors, wrong types
// TypeErrors.
//
//===----------------------------------------------------------------------===//

#include "runtime/extension/dispatcher.h"

#include <climits>

namespace kiln::extension {
namespace {

constexpr uint32_t maxBlockDim[3] = {1024, 1024, 64};
constexpr uint32_t maxGridDim[3] = {0x7fffffff, 65535, 65535};

/// Raises `type` with Numba's wording, "griddim must be <must>, got
/// [...]", the configuration shown as the list Numba makes of it.
bool rejectDim3(const DispatcherState &state, PyObject *type, PyObject *object, const char *what,
                const char *must) {
  PyObject *items = PyTuple_Check(object) || PyList_Check(object) ? PySequence_List(object)
                                                                  : Py_BuildValue("[O]", object);
  if (items) {
    PyErr_Format(type, "kernel '%s': %s must be %s, got %R", state.name.c_str(), what, must, items);
    Py_DECREF(items);
  }
  return false;
}

bool parseDim3(const DispatcherState &state, PyObject *object, const char *what, runtime::Dim3 &dim,
               unsigned &given) {
  uint64_t values[3] = {1, 1, 1};
  PyObject *items[3] = {object, nullptr, nullptr};
  given = 1;
  // An int, the common case, is known by its type alone: the limited API's
  // PyTuple_Check and PyList_Check each call into CPython.
  if (!PyLong_CheckExact(object) && (PyTuple_Check(object) || PyList_Check(object))) {
    Py_ssize_t count = PySequence_Size(object);
    if (count < 1 || count > 3)
      return rejectDim3(state, PyExc_ValueError, object, what, "a sequence of 1, 2 or 3 integers");
    given = unsigned(count);
    for (Py_ssize_t i = 0; i < count; ++i)
      items[i] = fastItem(object, i);
  }
  for (unsigned i = 0; i < given; ++i) {
    PyObject *index = PyLong_CheckExact(items[i]) ? Py_NewRef(items[i]) : PyNumber_Index(items[i]);
    if (!index) {
      PyErr_Clear();
      return rejectDim3(state, PyExc_TypeError, object, what, "a sequence of integers");
    }
    // Beyond 64 bits the sign tells too large from below 1.
    int overflow = 0;
    long long value = PyLong_AsLongLongAndOverflow(index, &overflow);
    Py_DECREF(index);
    if (overflow > 0)
      value = LLONG_MAX;
    else if (overflow < 0)
      value = LLONG_MIN;
    if (value < 1) {
      PyErr_Format(PyExc_ValueError,
                   "kernel '%s': %s %R has a dimension below 1; every dimension must be at "
                   "least 1",
                   state.name.c_str(), what, object);
      return false;
    }
    values[i] = uint64_t(value);
  }
  const uint32_t *limits = std::string_view(what) == "griddim" ? maxGridDim : maxBlockDim;
  for (unsigned i = 0; i < 3; ++i)
    if (values[i] > limits[i]) {
      PyErr_Format(PyExc_ValueError, "kernel '%s': %s %R exceeds the limit %u of dimension %c",
                   state.name.c_str(), what, object, limits[i], "xyz"[i]);
      return false;
    }
  dim.x = uint32_t(values[0]);
  dim.y = uint32_t(values[1]);
  dim.z = uint32_t(values[2]);
  return true;
}

} // namespace

bool parseLaunchConfig(const DispatcherState &state, PyObject *key, LaunchRequest &request) {
  Py_ssize_t size = PyTuple_CheckExact(key) || PyTuple_Check(key) ? PyTuple_Size(key) : 0;
  if (size < 2 || size > 4) {
    PyErr_Format(PyExc_ValueError,
                 "kernel '%s': a launch configuration is kernel[griddim, blockdim], "
                 "kernel[griddim, blockdim, stream] or kernel[griddim, blockdim, stream, "
                 "sharedmem], not kernel[%R]",
                 state.name.c_str(), key);
    return false;
  }
  ExecutionTarget *target = currentTarget();
  if (!target)
    return false;
  const runtime::DeviceInfo &device = currentDeviceInfo();
  unsigned given;
  if (!parseDim3(state, PyTuple_GetItem(key, 0), "griddim", request.dims.grid, given) ||
      !parseDim3(state, PyTuple_GetItem(key, 1), "blockdim", request.dims.block, given))
    return false;
  uint64_t threads = uint64_t(request.dims.block.x) * request.dims.block.y * request.dims.block.z;
  if (threads > uint64_t(device.maxThreadsPerBlock)) {
    PyErr_Format(PyExc_ValueError,
                 "kernel '%s': blockdim %R has %llu threads, more than the %d a block can hold",
                 state.name.c_str(), PyTuple_GetItem(key, 1),
                 static_cast<unsigned long long>(threads), device.maxThreadsPerBlock);
    return false;
  }
  request.stream = 0;
  if (size > 2 && !streamFromObject(PyTuple_GetItem(key, 2), request.stream))
    return false;
  request.dims.dynamicSharedBytes = 0;
  if (size > 3) {
    PyObject *shared = PyTuple_GetItem(key, 3);
    PyObject *index = PyNumber_Index(shared);
    if (!index) {
      PyErr_Clear();
      PyErr_Format(PyExc_TypeError, "kernel '%s': sharedmem must be an int, not %R",
                   state.name.c_str(), shared);
      return false;
    }
    int overflow = 0;
    long long bytes = PyLong_AsLongLongAndOverflow(index, &overflow);
    Py_DECREF(index);
    if (overflow)
      bytes = overflow > 0 ? LLONG_MAX : LLONG_MIN;
    if (bytes < 0 || bytes > device.maxSharedMemoryPerBlock) {
      PyErr_Format(PyExc_ValueError,
                   "kernel '%s': sharedmem %R must be between 0 and the %d bytes of shared "
                   "memory a block can use",
                   state.name.c_str(), shared, device.maxSharedMemoryPerBlock);
      return false;
    }
    request.dims.dynamicSharedBytes = uint32_t(bytes);
  }
  return true;
}

bool checkSharedMemory(const DispatcherState &state, const Specialization &chosen,
                       const LaunchRequest &request) {
  uint64_t total = uint64_t(chosen.kernel.staticSharedBytes) + request.dims.dynamicSharedBytes;
  int limit = currentDeviceInfo().maxSharedMemoryPerBlock;
  if (total <= uint64_t(limit))
    return true;
  PyErr_Format(PyExc_ValueError,
               "kernel '%s': %u bytes of dynamic shared memory plus its %llu static bytes exceed "
               "the %d bytes a block can use",
               state.name.c_str(), request.dims.dynamicSharedBytes,
               static_cast<unsigned long long>(chosen.kernel.staticSharedBytes), limit);
  return false;
}

} // namespace kiln::extension
