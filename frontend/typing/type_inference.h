//===- frontend/typing/type_inference.h ------------------------*- C++ -*-===//
//
// [Note: type inference]
// Each function is typed once per tuple of argument types (a
// specialization), as Numba's dispatcher does. Typing runs over the untyped
// SSA form: arguments get the signature's types, every other value is typed
// from its operands by Numba's rules, and phis unify the types flowing in.
// Loops make this a fixed point: a phi may widen (Literal[int](0) joined
// with int64 becomes int64) and everything computed from it is retyped, until
// nothing changes. Unification only widens, so this terminates.
//
// Errors found while iterating may be transient, so each instruction keeps
// only its latest problem; after the fixed point the first problem in
// program order is reported. Diagnostics are not reported directly either:
// a specialization of a device function made while a caller's types were
// still moving may never be used, so each specialization keeps its
// diagnostics until typing of the module knows which ones are reachable.
//
// The result of typing an instruction is a Resolution: its type, and how the
// operation is to be carried out (which overload, which conversions), which
// emit_typed_ir turns into typed IR.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/resolve/builtin_symbols.h"
#include "frontend/resolve/module_scope.h"
#include "frontend/source/diagnostics.h"
#include "frontend/ssa/ssa.h"
#include "ir/types.h"

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kiln {

class Specialization;

/// How one SSA instruction was typed, and so how to compile it.
struct Resolution {
  enum class Kind : uint8_t {
    Unresolved,
    Value,            // arguments, phis, constants, tuples: the value itself
    CompileTime,      // modules, functions, dtypes, strings: no run-time value
    Constant,         // always `constant`: math.pi, arr.ndim, len(tuple)
    Operator,         // binary, unary or comparison on operands converted to operandTypes
    Truth,            // bool(x)
    Builtin,          // a builtin function, or a builtin attribute such as threadIdx.x
    Cast,             // float32(x), int(x), ...: convert the argument to the result type
    DeviceCall,       // call `callee` with arguments converted to operandTypes
    ArrayAttribute,   // shape, strides, size of an array (detail)
    ArrayItem,        // a[i, j] gives an element
    ArrayView,        // a[i, :] gives a view
    ArrayStore,       // a[i, j] = v
    ArraySliceStore,  // a[i, :] = v into the view operandTypes[0], v broadcast onto it
    PointerItem,      // p[i] of a CPointer
    PointerStore,     // p[i] = v
    TupleItem,        // t[k], k constant (index)
    TupleDynamicItem, // t[i] of a homogeneous tuple
    TupleSlice,       // t[a:b:c] (constant: the indices of the elements taken)
    RecordField,      // r.f or r['f'] (detail: the field)
    RecordStore,      // r.f = v
    RangeValue,       // range(...) with operands converted to operandTypes
    LoopOperation,    // LoopStart / LoopNext / LoopTest, IterCount / IterItem
    UfuncCall,        // a NumPy ufunc (builtin); operandTypes are its loop's types
    ArrayMethod,      // arr.reshape(...), arr.view(dtype) (detail: the method)
    Assertion,
  };

  Kind kind = Kind::Unresolved;
  const Type *result = nullptr;
  /// What each operand converts to before the operation; null keeps it.
  std::vector<const Type *> operandTypes;
  BuiltinId builtin = BuiltinId::PyAbs;
  Specialization *callee = nullptr;
  std::optional<ConstantValue> constant;
  unsigned index = 0;
  std::string detail;

  static Resolution value(const Type *type) { return make(Kind::Value, type); }
  static Resolution make(Kind kind, const Type *type) {
    Resolution r;
    r.kind = kind;
    r.result = type;
    return r;
  }
};

/// A typing failure: the diagnostic to report if it survives the fixed point.
struct TypingError {
  DiagID id;
  std::vector<std::string> args;
  /// Where to point; invalid means the instruction's own range, or that of
  /// operand `operand` when it is set.
  SourceRange range;
  int operand = -1;
  /// A consequence of an error reported elsewhere: never reported itself.
  bool silent = false;
  /// Reported only if the function reports nothing else: a variable that
  /// stays untyped may be unassigned, or may depend on an error elsewhere.
  bool unlessOtherErrors = false;
};

/// A Resolution, or why there is none.
class Typing {
public:
  Typing(Resolution resolution) : resolved(std::move(resolution)) {}
  Typing(TypingError error) : failure(std::move(error)) {}
  static Typing error(DiagID id, std::vector<std::string> args = {}, SourceRange range = {}) {
    return TypingError{id, std::move(args), range};
  }
  /// An error about the instruction's `operand`-th operand (0-based, in the
  /// order the rules see arguments).
  static Typing errorAt(int operand, DiagID id, std::vector<std::string> args = {}) {
    TypingError error{id, std::move(args), SourceRange()};
    error.operand = operand;
    return error;
  }
  /// Failure that follows from another error, already reported.
  static Typing cascade() {
    TypingError error{DiagID::err_too_many_errors, {}, SourceRange()};
    error.silent = true;
    return error;
  }

  explicit operator bool() const { return resolved.has_value(); }
  Resolution &operator*() { return *resolved; }
  Resolution *operator->() { return &*resolved; }
  const TypingError &error() const { return *failure; }

private:
  std::optional<Resolution> resolved;
  std::optional<TypingError> failure;
};

/// A function typed for one tuple of argument types.
class Specialization {
public:
  Specialization(const FunctionDecl &decl, std::vector<const Type *> argTypes)
      : decl(decl), argTypes(std::move(argTypes)) {}

  const FunctionDecl &decl;
  std::vector<const Type *> argTypes;
  /// The declared or inferred return type (none for kernels).
  const Type *returnType = nullptr;
  /// The function's SSA form, shared by all its specializations.
  const ssa::Function *ssa = nullptr;
  std::vector<const Type *> valueTypes; // by SSA instruction id
  std::vector<Resolution> resolutions;  // by SSA instruction id
  /// By SSA block id: whether the block can run. A branch whose condition
  /// typing decided (`if b is None` with b omitted or None, as Numba prunes)
  /// leaves the other side unreachable: it is neither typed nor compiled.
  std::vector<bool> reachable;
  /// The only successor a Branch can take, when typing decided its
  /// condition; null otherwise.
  const ssa::Block *decidedSuccessor(const ssa::Block &block) const;
  /// The one value a phi merges once the branches Numba prunes before its
  /// SSA form are gone (`flag = True; if DEBUG: flag = False`); null if it
  /// still merges several, as a phi of Numba's SSA form does.
  const ssa::Instr *valueBeforeSSA(const ssa::Instr &phi) const;
  /// Diagnostics of this specialization, reported only if it is reachable.
  std::vector<Diagnostic> diagnostics;
  /// Device functions this specialization calls, with a call site each.
  std::vector<std::pair<Specialization *, SourceRange>> callees;
  bool inProgress = false;
  bool failed = false;

  /// "(float32, int64)"
  std::string argumentList() const;
  const Type *typeOf(const ssa::Instr *instr) const { return valueTypes[instr->id]; }
};

class TypeInference {
public:
  TypeInference(const ModuleScope &scope, TypeContext &types, DiagnosticEngine &diags)
      : moduleScope(scope), typeContext(types), diags(diags) {}

  /// The specialization of `decl` for `argTypes`, typed on first request.
  /// `callSite` is where a caller asked for it (invalid for roots).
  Specialization *specialize(const FunctionDecl &decl, const std::vector<const Type *> &argTypes);
  /// The device function `kernel` is where device code calls it, made on
  /// first request: it specializes on its arguments, as a device function
  /// without signatures does, and may return a value.
  const FunctionDecl &deviceFunctionOf(const FunctionDecl &kernel);
  /// Whether the specialization exists already (typed, or being typed).
  bool hasSpecialization(const FunctionDecl &decl,
                         const std::vector<const Type *> &argTypes) const {
    return specializations.count(std::make_pair(&decl, argTypes)) != 0;
  }

  /// Typing a call types the callee first, on the same stack: a chain of
  /// device functions each calling the next nests that deep. Numba stops
  /// such chains with RecursionError; Kiln with a diagnostic past this many
  /// device functions below a kernel.
  static constexpr unsigned maxCallDepth = 1000;
  /// How many specializations are being typed, each inside its caller's.
  unsigned callDepth() const { return activeSpecializations; }

  /// Reports the diagnostics of `roots` and of every specialization they
  /// reach, each with notes naming the call chain.
  void reportDiagnostics(llvm::ArrayRef<Specialization *> roots);

  TypeContext &types() { return typeContext; }
  const ModuleScope &scope() const { return moduleScope; }
  DiagnosticEngine &diagnostics() { return diags; }

private:
  const ModuleScope &moduleScope;
  TypeContext &typeContext;
  DiagnosticEngine &diags;
  std::map<std::pair<const FunctionDecl *, std::vector<const Type *>>,
           std::unique_ptr<Specialization>>
      specializations;
  /// See deviceFunctionOf(), by kernel.
  std::map<const FunctionDecl *, std::unique_ptr<FunctionDecl>> kernelsAsDevice;
  /// Each function's SSA form, built once; null if building failed.
  std::map<const FunctionDecl *, std::unique_ptr<ssa::Function>> ssaFunctions;
  unsigned activeSpecializations = 0;
};

} // namespace kiln
