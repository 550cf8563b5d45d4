//===- runtime/extension/specialization_select.cpp - Picking a signature --===//
//
// The first specialization whose argument types match exactly; else (unless
// the dispatcher takes exact matches only) the one
// that converts the arguments best under Numba's rules (fewest unsafe, then
// safe, then promoting conversions; a tie is ambiguous); else a TypeError
// that lists the argument types and the compiled signatures and, when one
// argument alone stands in the way, says which and why.
//
//===----------------------------------------------------------------------===//

#include "runtime/extension/dispatcher.h"

namespace kiln::extension {

std::string describeArgument(const DispatcherState &state, unsigned index) {
  std::string text = "argument " + std::to_string(index + 1);
  if (index < state.argumentNames.size())
    text += " ('" + state.argumentNames[index] + "')";
  return text + " of '" + state.name + "'";
}

namespace {

struct Rating {
  unsigned unsafe = 0, safe = 0, promote = 0;
  bool operator<(const Rating &other) const {
    if (unsafe != other.unsafe)
      return unsafe < other.unsafe;
    if (safe != other.safe)
      return safe < other.safe;
    return promote < other.promote;
  }
  bool operator==(const Rating &other) const {
    return unsafe == other.unsafe && safe == other.safe && promote == other.promote;
  }
};

std::string argumentTypes(const CallArguments &call) {
  std::string text = "(";
  for (unsigned i = 0; i < call.count; ++i) {
    if (i)
      text += ", ";
    appendTypeName(text, &call.nodes[call.argumentStart[i]]);
  }
  return text + ")";
}

std::string compiledSignatures(const DispatcherState &state) {
  std::string text;
  for (const auto &specialization : state.specializations)
    text += (text.empty() ? "" : ", ") + specialization->signature;
  return text.empty() ? "none" : text;
}

/// Why argument `index` (alone) does not convert to what `to` says.
std::string whyNot(const DispatcherState &state, unsigned index, const TypeNode *from,
                   const TypeNode *to) {
  std::string given, wanted;
  appendTypeName(given, from);
  appendTypeName(wanted, to);
  std::string what = describeArgument(state, index);
  if (from->kind == TypeKind::Unsupported)
    return what + " has an element type kernels cannot take (a non-native byte order, or a "
                  "record with nested fields)";
  if (from->kind == TypeKind::Array && to->kind == TypeKind::Array &&
      from->element == to->element && from->ndim == to->ndim) {
    if (from->readonly && !to->readonly)
      return what + " is a read-only array, but the kernel takes a writable " + wanted +
             "; pass a writable copy (array.copy())";
    const char *order = to->layout == Layout::C ? "C" : "Fortran";
    const char *fix = to->layout == Layout::C ? "numpy.ascontiguousarray" : "numpy.asfortranarray";
    return what + " is a non-contiguous " + given + ", but the kernel was compiled for " + order +
           "-contiguous arrays (" + wanted + "); pass " + fix +
           "(...) of it, or compile a specialization with layout A ([:] instead of [::1])";
  }
  return what + " is " + given + ", but the kernel takes " + wanted + " there";
}

void raiseNoMatch(const DispatcherState &state, const CallArguments &call) {
  std::string message = "kernel '" + state.name + "' has no specialization for argument types " +
                        argumentTypes(call) + "; compiled: " + compiledSignatures(state);
  // Explain the first argument that stands in the way of the closest
  // specialization (fewest arguments that do not convert).
  const Specialization *closest = nullptr;
  unsigned closestFailing = 0, closestFirst = 0;
  for (const auto &specialization : state.specializations) {
    if (specialization->argumentStart.size() != call.count)
      continue;
    unsigned failing = 0, first = 0;
    for (unsigned i = 0; i < call.count; ++i)
      if (convertType(&call.nodes[call.argumentStart[i]],
                      &specialization->nodes[specialization->argumentStart[i]]) ==
          Conversion::None) {
        if (!failing)
          first = i;
        ++failing;
      }
    if (failing && (!closest || failing < closestFailing)) {
      closest = specialization.get();
      closestFailing = failing;
      closestFirst = first;
    }
  }
  if (closest)
    message += "\n" + whyNot(state, closestFirst, &call.nodes[call.argumentStart[closestFirst]],
                             &closest->nodes[closest->argumentStart[closestFirst]]);
  PyErr_SetString(PyExc_TypeError, message.c_str());
}

} // namespace

Specialization *selectSpecialization(const DispatcherState &state, const CallArguments &call,
                                     bool &noMatch) {
  noMatch = false;
  if (call.count != state.arity) {
    PyErr_Format(PyExc_TypeError, "kernel '%s' takes %u argument%s, but %u %s given",
                 state.name.c_str(), state.arity, state.arity == 1 ? "" : "s", call.count,
                 call.count == 1 ? "was" : "were");
    return nullptr;
  }
  Specialization *best = nullptr;
  Specialization *tied = nullptr;
  Rating bestRating;
  for (const auto &owned : state.specializations) {
    Specialization *specialization = owned.get();
    if (!specialization->usable || specialization->argumentStart.size() != call.count)
      continue;
    Rating rating;
    bool converts = true;
    for (unsigned i = 0; i < call.count && converts; ++i) {
      switch (convertType(&call.nodes[call.argumentStart[i]],
                          &specialization->nodes[specialization->argumentStart[i]])) {
      case Conversion::Exact:
        break;
      case Conversion::Promote:
        ++rating.promote;
        break;
      case Conversion::Safe:
        ++rating.safe;
        break;
      case Conversion::Unsafe:
        ++rating.unsafe;
        break;
      case Conversion::None:
        converts = false;
        break;
      }
    }
    if (!converts)
      continue;
    if (rating == Rating())
      return specialization;
    if (state.exact)
      continue;
    if (!best || rating < bestRating) {
      best = specialization;
      bestRating = rating;
      tied = nullptr;
    } else if (rating == bestRating) {
      tied = specialization;
    }
  }
  if (best && tied) {
    std::string message = "kernel '" + state.name + "': argument types " + argumentTypes(call) +
                          " convert equally well to " + best->signature + " and " +
                          tied->signature + "; pass arguments of the exact types of one";
    PyErr_SetString(PyExc_TypeError, message.c_str());
    return nullptr;
  }
  if (!best) {
    noMatch = true;
    raiseNoMatch(state, call);
  }
  return best;
}

} // namespace kiln::extension
