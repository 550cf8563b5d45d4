//===- runtime/extension/specialization_tuples.cpp - Decoding tuples ------===//
//
// The specializations a Dispatcher is given (dispatcher.cpp), decoded into
// Specializations. Each is a tuple that kiln._loader builds from the
// manifest:
//
//   (image, index, signature, entry, arg_types, params, static_shared_bytes,
//    local_bytes, raises, cooperative, max_threads_per_block, cubins, ptx,
//    fatbin[, sites])
//
// where image is the module's ModuleImage (or None: no code, for tests),
// index the specialization's row in it, arg_types kiln._types descriptors,
// params tuples (argument, role, dimension, path, type), max_threads_per_block
// the kernel's launch bound (0: none) and fatbin None or
// (offset, size, checksum) in the payload, and sites (optional) the
// "file:line" of each operation the host code's messages name.
//
// Each descriptor of arg_types becomes the argument's TypeNodes, in
// preorder: a tuple, named tuple or enum descriptor is followed by the
// nodes of its elements. A type dispatch cannot pass makes the
// specialization unusable rather than the dispatcher fail, so that it is
// still listed in messages.
//
//===----------------------------------------------------------------------===//

#include "module/manifest_format.h"
#include "runtime/extension/dispatcher.h"
#include "runtime/extension/module_image.h"

#include <string_view>

namespace kiln::extension {
namespace {

bool fail(const std::string &message) {
  PyErr_SetString(PyExc_ValueError, ("kiln: " + message).c_str());
  return false;
}

std::string_view stringOf(PyObject *object) {
  Py_ssize_t size = 0;
  const char *text =
      object && PyUnicode_Check(object) ? PyUnicode_AsUTF8AndSize(object, &size) : nullptr;
  return text ? std::string_view(text, size_t(size)) : std::string_view();
}

/// An element descriptor: ("scalar", name), ("record", key), ("chars",
/// name) for a fixed-width string or ("datetime", name) for a datetime64 or
/// timedelta64 ("datetime64[D]").
bool elementOf(PyObject *descriptor, ElementId &element, bool &known) {
  if (!PyTuple_Check(descriptor) || PyTuple_Size(descriptor) < 2)
    return fail("a bad element descriptor");
  std::string_view kind = stringOf(PyTuple_GetItem(descriptor, 0));
  std::string_view name = stringOf(PyTuple_GetItem(descriptor, 1));
  if (kind == "scalar") {
    ScalarKind scalar;
    known = scalarFromName(name, scalar);
    element = ElementId(scalar);
    return true;
  }
  if (kind == "record" || kind == "chars" || kind == "datetime") {
    element = internElementKey(name);
    known = true;
    return true;
  }
  known = false;
  return true;
}

bool appendDescriptor(PyObject *descriptor, std::vector<TypeNode> &nodes, bool &usable,
                      unsigned depth) {
  if (!PyTuple_Check(descriptor) || PyTuple_Size(descriptor) < 1 || depth > 8)
    return fail("a bad type descriptor");
  std::string_view kind = stringOf(PyTuple_GetItem(descriptor, 0));
  size_t index = nodes.size();
  nodes.emplace_back();
  TypeNode node;
  Py_ssize_t size = PyTuple_Size(descriptor);
  bool known = true;
  if (kind == "scalar" || kind == "record" || kind == "datetime") {
    if (!elementOf(descriptor, node.element, known))
      return false;
    node.kind = !known             ? TypeKind::Unsupported
                : kind == "record" ? TypeKind::Record
                                   : TypeKind::Scalar;
  } else if (kind == "pointer") {
    // ("pointer", ("scalar", "uint8")): a CPointer parameter.
    if (size != 2 || !elementOf(PyTuple_GetItem(descriptor, 1), node.element, known))
      return fail("a bad pointer descriptor");
    node.kind = known ? TypeKind::Pointer : TypeKind::Unsupported;
  } else if (kind == "array" && size == 5) {
    if (!elementOf(PyTuple_GetItem(descriptor, 1), node.element, known))
      return false;
    long ndim = PyLong_AsLong(PyTuple_GetItem(descriptor, 2));
    std::string_view layout = stringOf(PyTuple_GetItem(descriptor, 3));
    if (ndim < 0 || ndim > 64 || (layout != "C" && layout != "F" && layout != "A")) {
      PyErr_Clear();
      return fail("a bad array descriptor");
    }
    node.kind = known ? TypeKind::Array : TypeKind::Unsupported;
    node.ndim = uint8_t(ndim);
    node.layout = layout == "C" ? Layout::C : layout == "F" ? Layout::F : Layout::A;
    node.readonly = PyObject_IsTrue(PyTuple_GetItem(descriptor, 4)) == 1;
  } else if (kind == "enum" && size == 4) {
    // ("enum", "Shape", True, ("scalar", "int64")): an (Int)Enum member.
    node.kind = TypeKind::Enum;
    node.element = internEnumClass(stringOf(PyTuple_GetItem(descriptor, 1)),
                                   PyObject_IsTrue(PyTuple_GetItem(descriptor, 2)) == 1);
    node.count = 1;
    if (!appendDescriptor(PyTuple_GetItem(descriptor, 3), nodes, usable, depth + 1))
      return false;
    node.span = uint16_t(nodes.size() - index);
  } else if ((kind == "tuple" && size == 2 && PyTuple_Check(PyTuple_GetItem(descriptor, 1))) ||
             (kind == "namedtuple" && size == 3 && PyTuple_Check(PyTuple_GetItem(descriptor, 2)))) {
    PyObject *elements = PyTuple_GetItem(descriptor, size - 1);
    node.kind = TypeKind::Tuple;
    if (kind == "namedtuple")
      node.element = internNamedTuple(stringOf(PyTuple_GetItem(descriptor, 1)));
    node.count = uint16_t(PyTuple_Size(elements));
    for (Py_ssize_t i = 0; i < PyTuple_Size(elements); ++i)
      if (!appendDescriptor(PyTuple_GetItem(elements, i), nodes, usable, depth + 1))
        return false;
    node.span = uint16_t(nodes.size() - index);
  } else {
    node.kind = TypeKind::Unsupported;
  }
  if (node.kind == TypeKind::Unsupported)
    usable = false;
  nodes[index] = node;
  return true;
}

bool roleOf(std::string_view name, ParameterRole &role) {
  static const std::pair<std::string_view, ParameterRole> roles[] = {
      {"value", ParameterRole::Value},    {"real", ParameterRole::Real},
      {"imag", ParameterRole::Imaginary}, {"data", ParameterRole::Data},
      {"shape", ParameterRole::Shape},    {"stride", ParameterRole::Stride},
      {"record", ParameterRole::Record},
  };
  for (const auto &[text, value] : roles)
    if (name == text) {
      role = value;
      return true;
    }
  return false;
}

bool machineTypeOf(std::string_view name, MachineType &type) {
  static const std::pair<std::string_view, MachineType> types[] = {
      {"i8", MachineType::I8},   {"i16", MachineType::I16}, {"i32", MachineType::I32},
      {"i64", MachineType::I64}, {"u8", MachineType::U8},   {"u16", MachineType::U16},
      {"u32", MachineType::U32}, {"u64", MachineType::U64}, {"f16", MachineType::F16},
      {"f32", MachineType::F32}, {"f64", MachineType::F64}, {"ptr", MachineType::Pointer},
  };
  for (const auto &[text, value] : types)
    if (name == text) {
      type = value;
      return true;
    }
  return false;
}

/// (argument, role, dimension, path, type) -> a slot, checked against the
/// specialization's argument types.
bool parameterOf(PyObject *tuple, Specialization &specialization, ParameterSlot &slot) {
  unsigned long argument, dimension;
  const char *role, *type;
  PyObject *path;
  if (!PyArg_ParseTuple(tuple, "kskOs", &argument, &role, &dimension, &path, &type))
    return false;
  if (argument >= specialization.argumentStart.size() || !roleOf(role, slot.role) ||
      !machineTypeOf(type, slot.type) || !PyTuple_Check(path))
    return fail("a bad parameter in the manifest of '" + specialization.kernel.name + "'");
  unsigned node = specialization.argumentStart[argument];
  for (Py_ssize_t i = 0; i < PyTuple_Size(path); ++i) {
    long step = PyLong_AsLong(PyTuple_GetItem(path, i));
    const TypeNode &parent = specialization.nodes[node];
    bool steps = parent.kind == TypeKind::Tuple || parent.kind == TypeKind::Enum;
    if (!steps || step < 0 || step >= parent.count) {
      PyErr_Clear();
      return fail("a bad parameter path in the manifest of '" + specialization.kernel.name + "'");
    }
    ++node;
    for (long skip = 0; skip < step; ++skip)
      node += specialization.nodes[node].span;
  }
  const TypeNode &leaf = specialization.nodes[node];
  bool array = slot.role == ParameterRole::Data || slot.role == ParameterRole::Shape ||
               slot.role == ParameterRole::Stride;
  if ((array && leaf.kind != TypeKind::Array && leaf.kind != TypeKind::Unsupported) ||
      (array && slot.role != ParameterRole::Data && dimension >= leaf.ndim) ||
      (slot.role == ParameterRole::Record && leaf.kind != TypeKind::Record &&
       leaf.kind != TypeKind::Unsupported))
    return fail("a parameter in the manifest of '" + specialization.kernel.name +
                "' does not fit its argument's type");
  slot.argument = uint16_t(argument);
  slot.node = uint16_t(node - specialization.argumentStart[argument]);
  slot.dimension = uint8_t(dimension);
  return true;
}

bool archsOf(PyObject *sequence, std::vector<unsigned> &archs) {
  PyObject *fast = PySequence_Fast(sequence, "kiln: archs must be a sequence");
  if (!fast)
    return false;
  for (Py_ssize_t i = 0; i < fastSize(fast); ++i) {
    long arch = PyLong_AsLong(fastItem(fast, i));
    if (arch < 0) {
      Py_DECREF(fast);
      PyErr_Clear();
      return fail("a bad architecture number");
    }
    archs.push_back(unsigned(arch));
  }
  Py_DECREF(fast);
  return true;
}

/// Strings of a sequence, as "file:line" sites.
bool sitesOf(PyObject *sequence, std::vector<std::string> &sites) {
  PyObject *fast = PySequence_Fast(sequence, "kiln: sites must be a sequence");
  if (!fast)
    return false;
  for (Py_ssize_t i = 0; i < fastSize(fast); ++i) {
    PyObject *site = fastItem(fast, i);
    if (!PyUnicode_Check(site)) {
      Py_DECREF(fast);
      return fail("a site that is not a string");
    }
    sites.emplace_back(stringOf(site));
  }
  Py_DECREF(fast);
  return true;
}

std::unique_ptr<Specialization> specializationOf(const std::string &name, PyObject *tuple) {
  PyObject *image, *argTypes, *params, *cubins, *ptx, *fatbin, *sites = nullptr;
  Py_ssize_t index;
  const char *signature, *entry, *indexChecks = nullptr;
  // Memory sizes are 64-bit end to end: "I" would wrap 2**32 to 0.
  unsigned long long staticShared, localBytes;
  int raises, cooperative;
  unsigned int maxThreadsPerBlock;
  if (!PyArg_ParseTuple(tuple, "OnssOOKKppIOOO|Oz:specialization", &image, &index, &signature,
                        &entry, &argTypes, &params, &staticShared, &localBytes, &raises,
                        &cooperative, &maxThreadsPerBlock, &cubins, &ptx, &fatbin, &sites,
                        &indexChecks))
    return nullptr;
  auto specialization = std::make_unique<Specialization>();
  runtime::KernelSpec &kernel = specialization->kernel;
  kernel.name = name;
  kernel.signature = signature;
  kernel.entryName = entry;
  kernel.staticSharedBytes = staticShared;
  kernel.localBytes = localBytes;
  kernel.raises = raises != 0;
  kernel.cooperative = cooperative != 0;
  kernel.maxThreadsPerBlock = maxThreadsPerBlock;
  if (indexChecks) {
    std::string_view copies(indexChecks);
    if (!module::isIndexChecksSpelling(copies)) {
      fail("'" + name + "' has index checks '" + std::string(copies) +
           "', not 'checked', 'unchecked' or 'both'");
      return nullptr;
    }
    kernel.hasCheckedCode = copies != module::IndexChecksUnchecked;
    kernel.hasUncheckedCode = copies != module::IndexChecksChecked;
  }
  specialization->signature = signature;
  if (!archsOf(cubins, kernel.cubinArchs) || !archsOf(ptx, kernel.ptxArchs) ||
      (sites && !sitesOf(sites, kernel.sites)))
    return nullptr;
  if (image != Py_None) {
    if (!isModuleImage(image)) {
      PyErr_SetString(PyExc_TypeError, "kiln: a specialization's image must be a ModuleImage");
      return nullptr;
    }
    auto *module = reinterpret_cast<ModuleImageObject *>(image);
    if (index < 0 || size_t(index) >= module->image->specializationCount) {
      fail("specialization " + std::to_string(index) + " of '" + name +
           "' is not in its module's host entry table");
      return nullptr;
    }
    kernel.hostEntries = module->image->hostEntries[index];
    specialization->image = module;
    specialization->index = size_t(index);
    if (fatbin != Py_None) {
      unsigned long long offset, size, checksum;
      if (!PyArg_ParseTuple(fatbin, "KKK", &offset, &size, &checksum))
        return nullptr;
      specialization->fatBinaryChecksum = checksum;
      if (offset > module->payloadSize || size > module->payloadSize - offset) {
        fail("the fat binary of '" + name + "' lies outside its module's payload");
        return nullptr;
      }
      kernel.fatbin = module->payload + offset;
      kernel.fatbinSize = size;
    }
  }
  PyObject *types = PySequence_Fast(argTypes, "kiln: arg_types must be a sequence");
  if (!types)
    return nullptr;
  for (Py_ssize_t i = 0; i < fastSize(types); ++i) {
    specialization->argumentStart.push_back(uint16_t(specialization->nodes.size()));
    if (!appendDescriptor(fastItem(types, i), specialization->nodes, specialization->usable, 0)) {
      Py_DECREF(types);
      return nullptr;
    }
  }
  Py_DECREF(types);
  PyObject *slots = PySequence_Fast(params, "kiln: params must be a sequence");
  if (!slots)
    return nullptr;
  for (Py_ssize_t i = 0; i < fastSize(slots); ++i) {
    ParameterSlot slot;
    if (!parameterOf(fastItem(slots, i), *specialization, slot)) {
      Py_DECREF(slots);
      return nullptr;
    }
    specialization->parameters.push_back(slot);
  }
  Py_DECREF(slots);
  return specialization;
}

} // namespace

bool addSpecializations(DispatcherState &state, PyObject *specializations, PyObject *keep) {
  PyObject *list = PySequence_Fast(specializations, "kiln: specializations must be a sequence");
  if (!list)
    return false;
  bool ok = true;
  for (Py_ssize_t i = 0; ok && i < fastSize(list); ++i) {
    PyObject *item = fastItem(list, i);
    std::unique_ptr<Specialization> specialization = specializationOf(state.name, item);
    ok = specialization != nullptr;
    if (ok && PyTuple_Check(item) && PyTuple_Size(item) > 0)
      ok = PyList_Append(keep, PyTuple_GetItem(item, 0)) == 0;
    if (!ok)
      break;
    unsigned arity = unsigned(specialization->argumentStart.size());
    if ((!state.specializations.empty() || state.arity) && arity != state.arity) {
      ok = fail("the specializations of '" + state.name + "' take different numbers of arguments");
      break;
    }
    state.arity = arity;
    state.specializations.push_back(std::move(specialization));
  }
  Py_DECREF(list);
  return ok;
}

bool setArgumentNames(DispatcherState &state, PyObject *argNames) {
  if (argNames == Py_None)
    return true;
  PyObject *names = PySequence_Fast(argNames, "kiln: arg_names must be a sequence");
  if (!names)
    return false;
  for (Py_ssize_t i = 0; i < fastSize(names); ++i)
    state.argumentNames.emplace_back(stringOf(fastItem(names, i)));
  Py_DECREF(names);
  return true;
}

} // namespace kiln::extension
