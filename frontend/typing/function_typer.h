//===- frontend/typing/function_typer.h - Typing one function ---*- C++ -*-===//
//
// The class behind TypeInference::specialize(), shared by the files that
// type one specialization: the fixed point over its blocks and the checks
// of its returns (infer_types.cpp), each SSA operation (infer_operations.cpp)
// and calls of device functions, overloads and named tuple classes
// (infer_calls.cpp). See [Note: type inference] in type_inference.h.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/typing/type_inference.h"

#include <llvm/ADT/ArrayRef.h>

#include <optional>
#include <utility>
#include <vector>

namespace kiln {

/// The return type a specialization's signature declares, or null.
const Type *declaredReturnType(const Specialization &spec);

/// Types one specialization of a function.
class FunctionTyper {
public:
  FunctionTyper(Specialization &spec, TypeInference &inference)
      : spec(spec), fn(*spec.ssa), inference(inference), types(inference.types()) {}

  void run();

private:
  using Instr = ssa::Instr;

  bool unwrappingOptionals = false;
  /// An instruction's type; while an operation is typed again with its
  /// optional operands unwrapped, their value types.
  const Type *typeOf(const Instr *instr) const {
    const Type *type = spec.valueTypes[instr->id];
    if (const auto *optional =
            unwrappingOptionals ? llvm::dyn_cast_or_null<OptionalType>(type) : nullptr)
      return optional->valueType();
    return type;
  }
  /// Updates an instruction's typing; returns whether its type changed.
  bool record(const Instr *instr, Typing typing);
  /// The type of an instruction's value, given its latest typing. Numba's
  /// type variables only widen: an operation typed again once a loop has
  /// widened its operands keeps the union of its types (`~x` of a uint8,
  /// then of an int64: uint64 and int64, so float64), and its value is
  /// computed in the operation's own type, then converted, as Numba's
  /// lowering casts a call's result to its variable's type. Numbers only:
  /// that is where the union changes a value.
  const Type *accumulated(const Instr *instr, const Resolution &resolution);
  /// Forgets an instruction of an unreachable block; returns whether it had
  /// a type.
  bool clear(const Instr *instr);
  /// Whether control can pass from `from` to `to`, as far as typing knows.
  bool edgeCanRun(const ssa::Block &from, const ssa::Block &to) const;
  Typing typeInstr(const Instr *instr);
  Typing typeOperation(const Instr *instr);
  /// An operation whose operands are all typed.
  Typing typeWithTypedOperands(const Instr *instr);
  /// The type of operand `i` of `instr` (see typeOf).
  const Type *operandType(const Instr *instr, size_t i) const { return typeOf(instr->operands[i]); }
  /// A module-level value the function reads: a builtin, a function, an
  /// overload set, a type or an array frozen in.
  Typing typeGlobal(const ModuleValue &value);
  /// A comparison; decided at compile time where both sides are constants.
  Typing typeCompare(const Instr *instr);
  /// `object.name`, including functions of Kiln's prelude modules and
  /// methods numba.extending.overload_method gives.
  Typing typeGetAttr(const Instr *instr);
  /// A tuple display: of classes, a tuple that exists only while typing.
  Typing typeBuildTuple(const Instr *instr);
  /// Numba's templates: an operator or builtin that takes no optional
  /// operand is typed again with their values, which the operation then
  /// unwraps (raising TypeError on None).
  Typing typeWithOptionalsUnwrapped(const Instr *instr);
  Typing typePhi(const Instr *phi);
  Typing typeCall(const Instr *call);
  /// `Point(1, 2)`, `Point(x=1, y=2)`: a named tuple of the class `cls`
  /// (see TypeContext::namedTupleClass), its elements typed as values.
  Typing typeNamedTupleCall(const Instr *call, const NamedTupleType &cls,
                            llvm::ArrayRef<const Type *> args);
  /// A call of a function numba.extending.overload implements: the
  /// implementation resolved for the arguments' types, called as a device
  /// function; else a request to the host (see OverloadSet).
  Typing typeOverloadCall(const Instr *call, const OverloadSet &overloads,
                          llvm::ArrayRef<const Type *> args);
  /// The types of a call's arguments, a starred operand's tuple items in
  /// its place (`f(*t)`); `operandOf`, if given, gets each one's operand.
  std::vector<const Type *> argumentTypes(const Instr *call,
                                          std::vector<size_t> *operandOf = nullptr) const;
  Typing typeTupleSlice(const Instr *instr, const TupleType &tuple);
  /// Types `read`, an Undefined operand, where Numba compiles it: false for
  /// a read before any assignment of the variable in the source.
  bool typeUnassignedRead(const Instr *read);
  /// A call of a kernel or device function; of a function defined inside
  /// another, given the types of what it `captures`.
  Typing typeDeviceCall(const Instr *call, const FunctionDecl &callee,
                        llvm::ArrayRef<const Type *> args, const TupleType *captures = nullptr);
  void typeReturns();
  void reportErrors(llvm::ArrayRef<ssa::Block *> order);
  void addDiagnostic(DiagID id, SourceRange range, const std::vector<std::string> &args);

  Specialization &spec;
  const ssa::Function &fn;
  TypeInference &inference;
  TypeContext &types;
  /// The latest problem typing each instruction, if it has one.
  std::vector<std::optional<TypingError>> errors;
  std::optional<TypingError> returnError;
  /// Device functions called with arguments they failed to type for.
  std::vector<std::pair<Specialization *, SourceRange>> failedCallees;
  // Reachability while an iteration types the blocks (see run()).
  std::vector<bool> processed;
  std::vector<bool> previouslyReachable;
  const ssa::Block *currentBlock = nullptr;
};

} // namespace kiln
