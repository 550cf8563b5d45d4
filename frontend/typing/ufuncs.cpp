//===- frontend/typing/ufuncs.cpp - Typing of NumPy ufuncs ----------------===//
//
// NumPy's ufuncs called in kernels, as Numba types them
// (typing/npydecl.py, Numpy_rules_ufunc; np/numpy_support.py,
// ufunc_find_matching_loop). A call passes the inputs, then optionally the
// output array:
//
//   np.sin(x)          scalar inputs: a scalar, of the loop's output type
//   np.sin(a, out)     scalar or array inputs, broadcast onto `out`, which
//                      is also the call's value
//
// The loop is NumPy's: the first of the ufunc's loops (builtins.def lists
// them in NumPy's order) to which every input casts safely and whose
// output casts to the output array's dtype within its kind. As in Numba,
// an integer input may cast to any float or complex loop when the inputs
// mix integers with floats, so np.arctan2(float32, int32) computes in
// float32. Arrays without an output array would need an allocation, which
// kernels cannot make.
//
//===----------------------------------------------------------------------===//

#include "frontend/typing/typing_rules.h"

namespace kiln::typing {

namespace {

struct UfuncLoop {
  llvm::StringRef inputs;  // type codes: "ff"
  llvm::StringRef outputs; // "f"
};

std::vector<UfuncLoop> loopsOf(const Symbol &ufunc) {
  std::vector<UfuncLoop> loops;
  llvm::SmallVector<llvm::StringRef, 16> spellings;
  llvm::StringRef(ufunc.detail).split(spellings, ' ', -1, false);
  for (llvm::StringRef spelling : spellings) {
    auto [inputs, outputs] = spelling.split("->");
    loops.push_back({inputs, outputs});
  }
  return loops;
}

/// NumPy's order of kinds for same-kind casts: bool, unsigned, signed,
/// float, complex.
unsigned kindOrder(const Type *type) {
  if (llvm::isa<BooleanType>(type))
    return 0;
  if (const auto *integer = llvm::dyn_cast<IntegerType>(type))
    return integer->signedness() ? 2 : 1;
  return llvm::isa<FloatType>(type) ? 3 : 4;
}

/// The bits of a number's precision: an integer's width, a float's, or
/// that of a complex number's parts.
unsigned precisionOf(const Type *type) {
  if (const auto *integer = llvm::dyn_cast<IntegerType>(type))
    return integer->bitwidth();
  if (const auto *floating = llvm::dyn_cast<FloatType>(type))
    return floating->bitwidth();
  return llvm::cast<ComplexType>(type)->bitwidth() / 2;
}

} // namespace

bool ufuncCastsSafely(const Type *from, const Type *to) {
  if (from == to || llvm::isa<BooleanType>(from))
    return true;
  if (llvm::isa<BooleanType>(to))
    return false;
  if (const auto *integer = llvm::dyn_cast<IntegerType>(from)) {
    if (const auto *target = llvm::dyn_cast<IntegerType>(to)) {
      if (integer->signedness() == target->signedness())
        return target->bitwidth() >= integer->bitwidth();
      return target->signedness() && target->bitwidth() > integer->bitwidth();
    }
    // A float holds an integer exactly up to its mantissa, except that
    // NumPy counts 64-bit integers as safe in float64.
    unsigned precision = precisionOf(to);
    return precision == 64 || integer->bitwidth() * 2 <= precision;
  }
  if (llvm::isa<FloatType>(from))
    return !llvm::isa<IntegerType>(to) && precisionOf(to) >= precisionOf(from);
  return llvm::isa<ComplexType>(to) && precisionOf(to) >= precisionOf(from);
}

bool ufuncCastsWithinKind(const Type *from, const Type *to) {
  return ufuncCastsSafely(from, to) || kindOrder(from) <= kindOrder(to);
}

Typing callUfunc(TypeContext &types, const Symbol &ufunc, llvm::ArrayRef<const Type *> args,
                 llvm::ArrayRef<std::string> keywords) {
  std::string name = ufunc.displayName();
  if (!keywords.empty())
    return Typing::error(DiagID::err_unexpected_keyword_argument, {name, keywords.front()});
  std::vector<UfuncLoop> loops = loopsOf(ufunc);
  size_t inputCount = loops.front().inputs.size();
  size_t outputCount = loops.front().outputs.size();
  if (args.size() != inputCount && args.size() != inputCount + outputCount)
    return Typing::error(DiagID::err_wrong_argument_count,
                         {name, countOf(inputCount, "argument"), std::to_string(args.size())});

  std::vector<const Type *> elements;
  unsigned inputRank = 0;
  bool anyArray = false;
  for (size_t i = 0; i < inputCount; ++i) {
    const Type *arg = types.unliteral(args[i]);
    if (const auto *array = llvm::dyn_cast<ArrayType>(arg)) {
      anyArray = true;
      inputRank = std::max(inputRank, array->rank());
      arg = array->elementType();
    }
    if (!arg->isScalar())
      return Typing::error(DiagID::err_no_call_overload, {name, argumentList(args)});
    elements.push_back(arg);
  }
  std::vector<const Type *> outputElements;
  for (size_t i = inputCount; i < args.size(); ++i) {
    const auto *array = llvm::dyn_cast<ArrayType>(args[i]);
    if (!array)
      return Typing::errorAt(static_cast<int>(i), DiagID::err_ufunc_output_not_array,
                             {name, args[i]->str()});
    if (array->isReadonly())
      return Typing::errorAt(static_cast<int>(i), DiagID::err_readonly_array_store, {array->str()});
    if (array->rank() < inputRank)
      return Typing::errorAt(static_cast<int>(i), DiagID::err_ufunc_output_rank,
                             {name, std::to_string(array->rank()), std::to_string(inputRank)});
    if (!array->elementType()->isScalar())
      return Typing::error(DiagID::err_no_call_overload, {name, argumentList(args)});
    outputElements.push_back(array->elementType());
  }
  if (anyArray && outputElements.empty())
    return Typing::error(DiagID::err_ufunc_needs_output, {name});

  bool mixedInputs =
      llvm::any_of(elements, [](const Type *t) { return llvm::isa<IntegerType>(t); }) &&
      llvm::any_of(elements, [](const Type *t) {
        return llvm::isa<FloatType>(t) || llvm::isa<ComplexType>(t);
      });
  auto castsTo = [&](const Type *from, const Type *to, bool withinKind) {
    if (mixedInputs && llvm::isa<IntegerType>(from) &&
        (llvm::isa<FloatType>(to) || llvm::isa<ComplexType>(to)))
      return true;
    return withinKind ? ufuncCastsWithinKind(from, to) : ufuncCastsSafely(from, to);
  };
  for (const UfuncLoop &loop : loops) {
    bool viable = true;
    for (size_t i = 0; viable && i < inputCount; ++i)
      viable = castsTo(elements[i], types.scalarOfTypeCode(loop.inputs[i]), false);
    for (size_t i = 0; viable && i < outputElements.size(); ++i)
      viable = castsTo(types.scalarOfTypeCode(loop.outputs[i]), outputElements[i], true);
    if (!viable)
      continue;
    std::vector<const Type *> loopTypes;
    for (char code : loop.inputs)
      loopTypes.push_back(types.scalarOfTypeCode(code));
    for (char code : loop.outputs)
      loopTypes.push_back(types.scalarOfTypeCode(code));
    const Type *result = outputElements.empty() ? loopTypes.back() : args[inputCount];
    Resolution resolution = Resolution::make(Resolution::Kind::UfuncCall, result);
    resolution.builtin = ufunc.id;
    resolution.operandTypes = std::move(loopTypes);
    return resolution;
  }
  return Typing::error(DiagID::err_no_call_overload, {name, argumentList(args)});
}

} // namespace kiln::typing
