//===- runtime/extension/argument_classify.cpp - Arguments to types -------===//
//
// Each argument becomes TypeNodes, as Numba's typeof types it, and
// ArgumentValues saying where its data is:
//
//   DeviceArrayBase        its C fields
//   numpy.ndarray          the buffer protocol (format, shape, strides,
//                          readonly), held until the launch ends; mapped
//                          and managed arrays (kiln.cuda's subclasses) as
//                          the device arrays they are
//   NumPy scalar           the buffer protocol, 0-d: its dtype
//   bool/int/float/complex bool, int64 (uint64 above 2**63 - 1), float64,
//                          complex128
//   tuple                  its elements, in order; a named tuple (a tuple
//                          subclass with _fields, as Numba's typeof
//                          asks) also its class's name
//   anything else          kiln.cuda.devicearray.as_device_array(obj, stream)
//                          (__cuda_array_interface__, DLPack), else a
//                          TypeError naming the argument
//
//===----------------------------------------------------------------------===//

#include "runtime/extension/device_array.h"
#include "runtime/extension/dispatcher.h"

#include <cctype>
#include <cstring>
#include <optional>

namespace kiln::extension {

static_assert(sizeof(Py_ssize_t) == sizeof(int64_t), "shapes are read as int64");

CallArguments::~CallArguments() {
  for (unsigned i = 0; i < bufferCount; ++i)
    PyBuffer_Release(&buffers[i]);
  for (unsigned i = 0; i < interopCount; ++i)
    Py_DECREF(interopArrays[i]);
}

namespace {

/// What was found out about the last few Python types seen, by type: a
/// small round-robin cache the GIL guards. It holds a reference to each
/// type it keeps, so that a freed class's address, reused by another,
/// cannot find the freed one's entry.
template <typename Value, unsigned Size> class TypeCache {
public:
  const Value *find(PyTypeObject *type) const {
    for (const Entry &entry : entries)
      if (entry.type == type)
        return &entry.value;
    return nullptr;
  }
  void add(PyTypeObject *type, Value value) {
    Entry &slot = entries[next];
    next = (next + 1) % Size;
    Py_XDECREF(reinterpret_cast<PyObject *>(slot.type));
    Py_INCREF(reinterpret_cast<PyObject *>(type));
    slot = {type, value};
  }

private:
  struct Entry {
    PyTypeObject *type = nullptr;
    Value value{};
  };
  Entry entries[Size];
  unsigned next = 0;
};

/// The class id of a named tuple (internNamedTuple of its class's name); 0
/// for a plain tuple.
ElementId namedTupleClassOf(PyObject *tuple) {
  PyTypeObject *type = Py_TYPE(tuple);
  if (type == &PyTuple_Type)
    return 0;
  static TypeCache<ElementId, 16> cache;
  if (const ElementId *known = cache.find(type))
    return *known;
  ElementId id = 0;
  if (PyObject_HasAttrString(reinterpret_cast<PyObject *>(type), "_fields"))
    id = internNamedTuple(typeName(type));
  cache.add(type, id);
  return id;
}

/// The class id of an enum.Enum member's class (internEnumClass); 0 for any
/// other object. enum is imported once, at the first object of a new type
/// that is not a number, array or tuple.
ElementId enumClassOf(PyTypeObject *type) {
  static TypeCache<ElementId, 16> cache;
  if (const ElementId *known = cache.find(type))
    return *known;
  static PyObject *enumBase = nullptr;
  static PyObject *intEnumBase = nullptr;
  if (!enumBase) {
    if (PyObject *module = PyImport_ImportModule("enum")) {
      enumBase = PyObject_GetAttrString(module, "Enum");
      intEnumBase = PyObject_GetAttrString(module, "IntEnum");
      Py_DECREF(module);
    }
    if (!enumBase || !intEnumBase) {
      PyErr_Clear();
      return 0;
    }
  }
  ElementId id = 0;
  auto *object = reinterpret_cast<PyObject *>(type);
  if (PyType_IsSubtype(type, reinterpret_cast<PyTypeObject *>(enumBase)))
    if (PyObject *name = PyObject_GetAttrString(object, "__name__")) {
      if (const char *text = utf8(name))
        id = internEnumClass(text,
                             PyType_IsSubtype(type, reinterpret_cast<PyTypeObject *>(intEnumBase)));
      Py_DECREF(name);
    }
  PyErr_Clear();
  cache.add(type, id);
  return id;
}

/// What a type is to NumPy: an ndarray (or a subclass of one, such as
/// kiln.cuda's mapped arrays), a NumPy scalar (datetime64 and timedelta64
/// apart: they give no useful buffer), or neither.
enum class NumpyKind : uint8_t { None, Array, ArraySubclass, Scalar, DateTimeScalar };

/// NumPy types by name, without importing NumPy: each new type's MRO is
/// walked once.
NumpyKind numpyKind(PyTypeObject *type) {
  static TypeCache<NumpyKind, 32> cache;
  if (const NumpyKind *known = cache.find(type))
    return *known;
  NumpyKind kind = NumpyKind::None;
  PyObject *mro = PyObject_GetAttrString(reinterpret_cast<PyObject *>(type), "__mro__");
  Py_ssize_t count = mro && PyTuple_Check(mro) ? PyTuple_Size(mro) : 0;
  for (Py_ssize_t i = 0; i < count && kind == NumpyKind::None; ++i) {
    auto *base = reinterpret_cast<PyTypeObject *>(PyTuple_GetItem(mro, i));
    std::string name = typeName(base);
    if (name == "numpy.ndarray")
      kind = i == 0 ? NumpyKind::Array : NumpyKind::ArraySubclass;
    else if (name == "numpy.datetime64" || name == "numpy.timedelta64")
      kind = NumpyKind::DateTimeScalar;
    else if (name == "numpy.generic")
      kind = NumpyKind::Scalar;
  }
  Py_XDECREF(mro);
  PyErr_Clear();
  cache.add(type, kind);
  return kind;
}

struct Classifier {
  const DispatcherState &state;
  StreamHandle stream;
  CallArguments &call;
  unsigned argument = 0;

  bool fail(PyObject *type, const std::string &message) {
    PyErr_SetString(type, message.c_str());
    return false;
  }

  bool newNode(unsigned &index) {
    if (call.nodeCount == maxTypeNodes)
      return fail(PyExc_TypeError, "kernel '" + state.name + "': the arguments hold more than " +
                                       std::to_string(maxTypeNodes) + " values");
    index = call.nodeCount++;
    call.nodes[index] = TypeNode();
    call.values[index].buffer = -1;
    return true;
  }

  bool newBuffer(unsigned &index) {
    if (call.bufferCount == maxHostBuffers)
      return fail(PyExc_TypeError, "kernel '" + state.name + "': more than " +
                                       std::to_string(maxHostBuffers) + " NumPy arguments");
    index = call.bufferCount;
    return true;
  }

  bool scalar(ScalarKind kind, unsigned &index) {
    if (!newNode(index))
      return false;
    call.nodes[index].kind = TypeKind::Scalar;
    call.nodes[index].element = ElementId(kind);
    return true;
  }

  void arrayNode(unsigned index, ElementId element, bool known, unsigned ndim, bool contiguousC,
                 bool contiguousF, bool readonly) {
    TypeNode &node = call.nodes[index];
    node.kind = known ? TypeKind::Array : TypeKind::Unsupported;
    node.element = element;
    node.ndim = uint8_t(ndim);
    node.contiguousC = contiguousC;
    node.contiguousF = contiguousF;
    node.layout = contiguousC ? Layout::C : contiguousF ? Layout::F : Layout::A;
    node.readonly = readonly;
  }

  bool deviceArray(PyObject *object) {
    auto *array = reinterpret_cast<DeviceArrayObject *>(object);
    if (!array->initialized)
      return fail(PyExc_TypeError, describeArgument(state, argument) +
                                       " is a device array whose __init__ was not called");
    unsigned index = 0;
    if (!newNode(index))
      return false;
    arrayNode(index, array->element, array->elementKnown, array->ndim, array->contiguousC,
              array->contiguousF, false);
    ArgumentValue &value = call.values[index];
    value.data = array->pointer;
    value.shape = array->shape;
    value.strides = array->strides;
    return true;
  }

  /// Whether `object`, a NumPy array, lies in memory kernels use in place
  /// (kiln.cuda's mapped and managed arrays, which carry their mapping):
  /// it then goes to the kernel as the device array its
  /// __cuda_array_interface__ describes, not as a copy. Only subclasses of
  /// ndarray are asked.
  static bool inDeviceVisibleMemory(PyObject *object) {
    PyObject *mapping = PyObject_GetAttrString(object, "_kiln_mapping");
    if (!mapping) {
      PyErr_Clear();
      return false;
    }
    bool mapped = mapping != Py_None;
    Py_DECREF(mapping);
    return mapped;
  }

  bool numpyArray(PyObject *object) {
    unsigned bufferIndex = 0, index = 0;
    if (!newBuffer(bufferIndex) || !newNode(index))
      return false;
    Py_buffer &view = call.buffers[bufferIndex];
    DateTimeElement dateTime;
    if (!getBuffer(object, false, view, dateTime))
      return false;
    ++call.bufferCount;
    if (view.ndim > 0 && (!view.shape || !view.strides))
      return fail(PyExc_TypeError, describeArgument(state, argument) +
                                       " is an array that does not give its shape and strides");
    ElementId element = dateTime.element.value_or(0);
    bool known = dateTime.isDateTime
                     ? dateTime.element.has_value()
                     : elementFromFormat(view.format, size_t(view.itemsize), element);
    bool contiguousC, contiguousF;
    const auto *shape = reinterpret_cast<const int64_t *>(view.shape);
    const auto *strides = reinterpret_cast<const int64_t *>(view.strides);
    contiguity(unsigned(view.ndim), shape, strides, view.itemsize, contiguousC, contiguousF);
    arrayNode(index, element, known, unsigned(view.ndim), contiguousC, contiguousF,
              view.readonly != 0);
    ArgumentValue &value = call.values[index];
    value.data = reinterpret_cast<uintptr_t>(view.buf);
    value.shape = shape;
    value.strides = strides;
    value.buffer = int16_t(bufferIndex);
    return true;
  }

  bool numpyScalar(PyObject *object, bool dateTimeScalar) {
    unsigned bufferIndex = 0, index = 0;
    if (!newBuffer(bufferIndex) || !newNode(index))
      return false;
    Py_buffer &view = call.buffers[bufferIndex];
    DateTimeElement dateTime;
    if (!getBuffer(object, dateTimeScalar, view, dateTime))
      return false;
    TypeNode &node = call.nodes[index];
    ArgumentValue &value = call.values[index];
    if (dateTime.isDateTime) {
      // A datetime64 or timedelta64: its int64 count.
      std::memcpy(&value.i, view.buf, sizeof value.i);
      PyBuffer_Release(&view);
      node.kind = dateTime.element ? TypeKind::Scalar : TypeKind::Unsupported;
      node.element = dateTime.element.value_or(0);
      return true;
    }
    ElementId element = 0;
    bool known = view.ndim == 0 && elementFromFormat(view.format, size_t(view.itemsize), element);
    if (known && isRecordElement(element)) {
      ++call.bufferCount; // held: the kernel gets a pointer to its bytes
      node.kind = TypeKind::Record;
      node.element = element;
      value.data = reinterpret_cast<uintptr_t>(view.buf);
      value.buffer = int16_t(bufferIndex);
      return true;
    }
    if (known)
      readScalar(ScalarKind(element), view.buf, value);
    PyBuffer_Release(&view);
    node.kind = known ? TypeKind::Scalar : TypeKind::Unsupported;
    node.element = element;
    return true;
  }

  /// Whether a buffer holds datetime64 or timedelta64 values, and their
  /// element type if Numba has one for them.
  struct DateTimeElement {
    bool isDateTime = false;
    std::optional<ElementId> element;
  };

  /// The buffer of a NumPy array or scalar. datetime64 and timedelta64
  /// values have none; the buffer is then their int64 view's, which shares
  /// their data.
  bool getBuffer(PyObject *object, bool dateTimeScalar, Py_buffer &view,
                 DateTimeElement &dateTime) {
    // A datetime64 array refuses to give a buffer; a datetime64 scalar
    // gives one whose format says nothing.
    std::string code;
    if (!dateTimeScalar) {
      if (PyObject_GetBuffer(object, &view, PyBUF_RECORDS_RO) == 0)
        return true;
      PyObject *type, *error, *traceback;
      PyErr_Fetch(&type, &error, &traceback);
      code = dtypeCode(object);
      if (code.size() < 2 || (code[1] != 'M' && code[1] != 'm')) {
        PyErr_Restore(type, error, traceback);
        return false;
      }
      Py_XDECREF(type);
      Py_XDECREF(error);
      Py_XDECREF(traceback);
    } else {
      code = dtypeCode(object);
    }
    dateTime.isDateTime = true;
    PyObject *counts = PyObject_CallMethod(object, "view", "s", "i8");
    if (!counts)
      return false;
    int got = PyObject_GetBuffer(counts, &view, PyBUF_RECORDS_RO);
    Py_DECREF(counts); // the buffer holds the view
    if (got < 0)
      return false;
    if (ElementId element; dateTimeElementFromCode(code, element))
      dateTime.element = element;
    return true;
  }

  /// NumPy's dtype.str of the value: "<f8", "<M8[D]"; empty if it has none.
  static std::string dtypeCode(PyObject *object) {
    PyObject *dtype = PyObject_GetAttrString(object, "dtype");
    PyObject *text = dtype ? PyObject_GetAttrString(dtype, "str") : nullptr;
    Py_XDECREF(dtype);
    const char *spelled = text ? utf8(text) : nullptr;
    std::string code = spelled ? spelled : "";
    Py_XDECREF(text);
    PyErr_Clear();
    return code;
  }

  static void readScalar(ScalarKind kind, const void *data, ArgumentValue &value) {
    auto read = [&](auto sample) {
      decltype(sample) result;
      std::memcpy(&result, data, sizeof result);
      return result;
    };
    value.imaginary = 0;
    switch (kind) {
    case ScalarKind::Bool:
      value.i = read(uint8_t()) != 0;
      return;
    case ScalarKind::I8:
      value.i = read(int8_t());
      return;
    case ScalarKind::I16:
      value.i = read(int16_t());
      return;
    case ScalarKind::I32:
      value.i = read(int32_t());
      return;
    case ScalarKind::I64:
      value.i = read(int64_t());
      return;
    case ScalarKind::U8:
      value.u = read(uint8_t());
      return;
    case ScalarKind::U16:
      value.u = read(uint16_t());
      return;
    case ScalarKind::U32:
      value.u = read(uint32_t());
      return;
    case ScalarKind::U64:
      value.u = read(uint64_t());
      return;
    case ScalarKind::F16:
      value.f = doubleFromHalf(read(uint16_t()));
      return;
    case ScalarKind::F32:
      value.f = read(float());
      return;
    case ScalarKind::F64:
      value.f = read(double());
      return;
    case ScalarKind::C64: {
      float parts[2];
      std::memcpy(parts, data, sizeof parts);
      value.f = parts[0];
      value.imaginary = parts[1];
      return;
    }
    case ScalarKind::C128: {
      double parts[2];
      std::memcpy(parts, data, sizeof parts);
      value.f = parts[0];
      value.imaginary = parts[1];
      return;
    }
    }
  }

  bool pythonInt(PyObject *object) {
    int overflow = 0;
    long long signedValue = PyLong_AsLongLongAndOverflow(object, &overflow);
    if (signedValue == -1 && PyErr_Occurred())
      return false;
    unsigned index = 0;
    if (!overflow) {
      if (!scalar(ScalarKind::I64, index))
        return false;
      call.values[index].i = signedValue;
      return true;
    }
    unsigned long long unsignedValue = overflow > 0 ? PyLong_AsUnsignedLongLong(object) : 0;
    if (overflow < 0 ||
        (unsignedValue == static_cast<unsigned long long>(-1) && PyErr_Occurred())) {
      PyErr_Clear();
      return fail(PyExc_OverflowError,
                  describeArgument(state, argument) + " is an int that does not fit in 64 bits");
    }
    if (!scalar(ScalarKind::U64, index))
      return false;
    call.values[index].u = unsignedValue;
    return true;
  }

  bool interop(PyObject *object) {
    static PyObject *asDeviceArray = nullptr;
    static bool looked = false;
    if (!looked) {
      looked = true;
      PyObject *module = PyImport_ImportModule("kiln.cuda.devicearray");
      if (module) {
        asDeviceArray = PyObject_GetAttrString(module, "as_device_array");
        Py_DECREF(module);
      }
      if (!asDeviceArray)
        PyErr_Clear();
    }
    if (!asDeviceArray)
      return unsupported(object);
    PyObject *array =
        PyObject_CallFunction(asDeviceArray, "OK", object, static_cast<unsigned long long>(stream));
    if (!array)
      return false;
    if (array == Py_None) {
      Py_DECREF(array);
      return unsupported(object);
    }
    if (!isDeviceArray(array) || call.interopCount == maxArguments) {
      Py_DECREF(array);
      return fail(PyExc_TypeError,
                  "kiln.cuda.devicearray.as_device_array gave no device array for " +
                      describeArgument(state, argument));
    }
    call.interopArrays[call.interopCount++] = array;
    return deviceArray(array);
  }

  /// An enum member: its class, then its value.
  bool enumMember(PyObject *object, ElementId enumClass, unsigned depth) {
    if (depth > 8)
      return fail(PyExc_TypeError, describeArgument(state, argument) + " nests values too deeply");
    unsigned index = 0;
    if (!newNode(index))
      return false;
    PyObject *value = PyObject_GetAttrString(object, "_value_");
    if (!value)
      return false;
    bool classified = classify(value, depth + 1);
    // The member holds its value for as long as the call needs it.
    Py_DECREF(value);
    if (!classified)
      return false;
    call.nodes[index].kind = TypeKind::Enum;
    call.nodes[index].element = enumClass;
    call.nodes[index].count = 1;
    call.nodes[index].span = uint16_t(call.nodeCount - index);
    return true;
  }

  bool unsupported(PyObject *object) {
    std::string what = describeArgument(state, argument);
    if (object == Py_None)
      return fail(PyExc_TypeError, what + " is None; pass a NumPy array, a device array or a "
                                          "scalar");
    if (PyList_Check(object))
      return fail(PyExc_TypeError, what + " is a list; pass a NumPy array or device array");
    return fail(PyExc_TypeError, what + " has type '" + typeNameOf(object) +
                                     "', which kernels cannot take; pass a NumPy array, a "
                                     "device array or a scalar");
  }

  bool classify(PyObject *object, unsigned depth) {
    unsigned index = 0;
    if (isDeviceArray(object))
      return deviceArray(object);
    PyTypeObject *type = Py_TYPE(object);
    if (PyBool_Check(object)) {
      if (!scalar(ScalarKind::Bool, index))
        return false;
      call.values[index].i = object == Py_True;
      return true;
    }
    if (PyLong_Check(object)) {
      // An IntEnum member is an int of its class.
      if (!PyLong_CheckExact(object))
        if (ElementId enumClass = enumClassOf(type))
          return enumMember(object, enumClass, depth);
      return pythonInt(object);
    }
    if (PyFloat_Check(object)) {
      if (!scalar(ScalarKind::F64, index))
        return false;
      call.values[index].f = PyFloat_AsDouble(object);
      return true;
    }
    if (PyComplex_Check(object)) {
      if (!scalar(ScalarKind::C128, index))
        return false;
      call.values[index].f = PyComplex_RealAsDouble(object);
      call.values[index].imaginary = PyComplex_ImagAsDouble(object);
      return true;
    }
    switch (NumpyKind kind = numpyKind(type)) {
    case NumpyKind::ArraySubclass:
      if (inDeviceVisibleMemory(object))
        return interop(object);
      return numpyArray(object);
    case NumpyKind::Array:
      return numpyArray(object);
    case NumpyKind::Scalar:
    case NumpyKind::DateTimeScalar:
      return numpyScalar(object, kind == NumpyKind::DateTimeScalar);
    case NumpyKind::None:
      break;
    }
    if (ElementId enumClass = enumClassOf(type))
      return enumMember(object, enumClass, depth);
    if (PyTuple_Check(object)) {
      if (depth > 8)
        return fail(PyExc_TypeError,
                    describeArgument(state, argument) + " nests tuples too deeply");
      if (!newNode(index))
        return false;
      Py_ssize_t count = PyTuple_Size(object);
      for (Py_ssize_t i = 0; i < count; ++i)
        if (!classify(PyTuple_GetItem(object, i), depth + 1))
          return false;
      call.nodes[index].kind = TypeKind::Tuple;
      call.nodes[index].element = namedTupleClassOf(object);
      call.nodes[index].count = uint16_t(count);
      call.nodes[index].span = uint16_t(call.nodeCount - index);
      return true;
    }
    if (object == Py_None || PyList_Check(object))
      return unsupported(object);
    return interop(object);
  }
};

} // namespace

bool classifyArguments(const DispatcherState &state, PyObject *const *args, size_t count,
                       StreamHandle stream, CallArguments &call) {
  if (count > maxArguments) {
    PyErr_Format(PyExc_TypeError, "kernel '%s' takes %u arguments, but %zu were given",
                 state.name.c_str(), state.arity, count);
    return false;
  }
  Classifier classifier{state, stream, call};
  call.count = unsigned(count);
  for (size_t i = 0; i < count; ++i) {
    classifier.argument = unsigned(i);
    call.argumentStart[i] = uint16_t(call.nodeCount);
    if (!classifier.classify(args[i], 0))
      return false;
  }
  return true;
}

} // namespace kiln::extension
