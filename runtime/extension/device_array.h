//===- runtime/extension/device_array.h - DeviceArrayBase -------*- C++ -*-===//
//
// DeviceArrayBase(shape, strides, dtype, format, pointer, owner,
// stream_handle=0): an array in the target's memory, the C base of
// kiln.cuda.DeviceNDArray. Dispatch reads its fields directly.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/extension/argument_types.h"
#include "runtime/extension/runtime_module.h"

namespace kiln::extension {

/// NumPy's limit.
constexpr unsigned maxArrayDimensions = 64;

struct DeviceArrayObject {
  PyObject_HEAD PyObject *shapeTuple;
  PyObject *stridesTuple;
  PyObject *dtype;
  PyObject *format;
  PyObject *owner;
  DevicePointer pointer;
  StreamHandle stream;
  int64_t itemSize;
  int64_t size;
  bool initialized;
  /// The element type dispatch sees; false when it cannot match any
  /// signature (a byte order or record layout Kiln does not handle).
  bool elementKnown;
  ElementId element;
  bool contiguousC;
  bool contiguousF;
  unsigned ndim;
  int64_t shape[maxArrayDimensions];
  int64_t strides[maxArrayDimensions];
};

extern PyTypeObject *deviceArrayType;

inline bool isDeviceArray(PyObject *object) {
  return PyObject_TypeCheck(object, deviceArrayType);
}

/// Whether an array of this shape and these strides (bytes) is C / F
/// contiguous, as NumPy's flags say (dimensions of size 1 do not count).
void contiguity(unsigned ndim, const int64_t *shape, const int64_t *strides, int64_t itemSize,
                bool &contiguousC, bool &contiguousF);

} // namespace kiln::extension
