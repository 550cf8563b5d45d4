//===- frontend/resolve/module_evaluator.h ---------------------*- C++ -*-===//
//
// Evaluates the expressions Python would run at import time: constants and
// constant arithmetic, NumPy scalar constructors, Numba type expressions
// (float32[:, ::1], void(int32, float64[:])), signature strings, decorator
// arguments. The same evaluator reads signature strings, but there names
// resolve in numba.types only, exactly as Numba evaluates them.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/resolve/constant_folding.h"
#include "frontend/resolve/module_scope.h"

#include <optional>

namespace kiln {

/// The Numba type Python's int, float and complex stand for in NumPy
/// ("int64", "float64", "complex128").
std::optional<llvm::StringRef> numbaTypeForPythonType(llvm::StringRef name);

class ModuleEvaluator {
public:
  ModuleEvaluator(const ModuleScope &scope, SourceManager &sources, ast::AstContext &astContext,
                  TypeContext &types, DiagnosticEngine &diags)
      : scope(scope), sources(sources), astContext(astContext), types(types), diags(diags) {}

  /// Evaluates `expr` with module-level names in scope. Reports a diagnostic
  /// and returns nothing if it cannot be evaluated.
  std::optional<ModuleValue> evaluate(const ast::Expr *expr);

  /// Reads `expr` (a decorator argument) as one signature or a list of them:
  /// "void(float32[:])", void(float32[:]), (float32[:], int64), or a list.
  /// `what` names the decorator for diagnostics.
  std::optional<std::vector<Signature>> signatures(const ast::Expr *expr);

  /// Parses and evaluates the signature text at [begin, end) of `file`, as a
  /// Numba signature string.
  std::optional<Signature> signatureFromText(uint32_t file, uint32_t begin, uint32_t end);

  /// A Numba type written as a value: float32, float32[:], UniTuple(...).
  const Type *asType(const ModuleValue &value, SourceRange range, bool report = true);

private:
  std::optional<ModuleValue> evaluateName(const ast::NameExpr *name);
  std::optional<ModuleValue> evaluateAttribute(const ast::AttributeExpr *attr);
  std::optional<ModuleValue> evaluateSubscript(const ast::SubscriptExpr *sub);
  std::optional<ModuleValue> evaluateCall(const ast::CallExpr *call);
  std::optional<ModuleValue> evaluateBinary(const ast::BinaryExpr *binary);
  std::optional<ModuleValue> evaluateUnary(const ast::UnaryExpr *unary);
  std::optional<ModuleValue> callSymbol(const Symbol &symbol, const ast::CallExpr *call,
                                        llvm::ArrayRef<ModuleValue> args);
  /// A NumPy scalar constructor or Numba type called: np.float32(2.5) makes
  /// a scalar, float32(float32, float32) a signature.
  std::optional<ModuleValue> callType(const Type *type, const ast::CallExpr *call,
                                      llvm::ArrayRef<ModuleValue> args);
  /// The few Python and math functions module constants are built with,
  /// called on constants.
  std::optional<ModuleValue> callConstantFunction(const Symbol &symbol, const ast::CallExpr *call,
                                                  llvm::ArrayRef<ModuleValue> args);
  /// math.sqrt(2.0), math.log(x, base), math.floor(x), ...
  std::optional<ModuleValue> foldMathCall(const Symbol &symbol, const ast::CallExpr *call,
                                          llvm::ArrayRef<ModuleValue> args,
                                          llvm::ArrayRef<ConstantValue> values);
  /// float(x), int(x), abs(x), min(a, b), len(t), round(x, n), ...
  std::optional<ModuleValue> foldBuiltinCall(const Symbol &symbol, const ast::CallExpr *call,
                                             llvm::ArrayRef<ModuleValue> args,
                                             llvm::ArrayRef<ConstantValue> values);
  /// Whether `call` passes `symbol` `count` arguments (`args`) and no
  /// keywords; reports the wrong count if not.
  bool requireArgs(const Symbol &symbol, const ast::CallExpr *call,
                   llvm::ArrayRef<ModuleValue> args, size_t count);
  std::optional<ConstantValue> constantOf(const ast::Expr *expr, const ModuleValue &value);
  /// Whether NumPy converts `value` to the scalar type `type` without
  /// raising (np.int8(300) overflows); reports the error if not.
  bool checkScalarConversion(const ConstantValue &value, const Type *type,
                             const ast::CallExpr *call);
  std::optional<ModuleValue> reportFoldError(FoldError error, const ast::Expr *expr);

  // Numba types and signatures (module_evaluator_signatures.cpp).

  /// The scalar type a DType symbol names, or the xoroshiro128p record.
  const Type *dtypeOf(const Symbol &symbol) const;
  /// A name in a signature string, which names a numba.types member.
  std::optional<ModuleValue> evaluateSignatureName(const ast::NameExpr *name);
  /// `base[:, ::1]`: an array type of the dtype `base` (Numba's
  /// Type.__getitem__).
  std::optional<ModuleValue> evaluateArrayType(const ModuleValue &base,
                                               const ast::SubscriptExpr *sub);
  /// numba.types.Record(fields, size, aligned) in a signature.
  std::optional<ModuleValue> evaluateRecordType(const ast::CallExpr *call);
  /// A Record field's type NestedArray(dtype, shape): fills `field`'s type
  /// and shape; false if `expr` is not one.
  bool nestedArrayField(const ast::Expr *expr, RecordType::Field &field);
  /// A numba.types constructor called: UniTuple(int32, 3), Array(...), ...
  std::optional<ModuleValue> callTypeMaker(const Symbol &symbol, const ast::CallExpr *call,
                                           llvm::ArrayRef<ModuleValue> args);
  /// UniTuple(T, n).
  std::optional<ModuleValue> makeUniTupleType(const Symbol &symbol, const ast::CallExpr *call,
                                              llvm::ArrayRef<ModuleValue> args);
  /// NamedTuple((T, ...), "Class", ("field", ...)).
  std::optional<ModuleValue> makeNamedTupleType(const Symbol &symbol, const ast::CallExpr *call,
                                                llvm::ArrayRef<ModuleValue> args);
  /// Tuple((T, ...)) or Tuple(()).
  std::optional<ModuleValue> makeTupleType(const Symbol &symbol, const ast::CallExpr *call,
                                           llvm::ArrayRef<ModuleValue> args);
  /// EnumMember("Class", T) or IntEnumMember("Class", T).
  std::optional<ModuleValue> makeEnumMemberType(const Symbol &symbol, const ast::CallExpr *call,
                                                llvm::ArrayRef<ModuleValue> args);
  /// CPointer(T) of a scalar T.
  std::optional<ModuleValue> makePointerType(const Symbol &symbol, const ast::CallExpr *call,
                                             llvm::ArrayRef<ModuleValue> args);
  /// NPDatetime("unit") or NPTimedelta("unit").
  std::optional<ModuleValue> makeDateTimeType(const Symbol &symbol, const ast::CallExpr *call,
                                              llvm::ArrayRef<ModuleValue> args);
  /// CharSeq(n) or UnicodeCharSeq(n).
  std::optional<ModuleValue> makeCharSeqType(const Symbol &symbol, const ast::CallExpr *call,
                                             llvm::ArrayRef<ModuleValue> args);
  /// Array(dtype, ndim, "C" | "F" | "A").
  std::optional<ModuleValue> makeArrayType(const Symbol &symbol, const ast::CallExpr *call,
                                           llvm::ArrayRef<ModuleValue> args);
  std::optional<Signature> asSignature(const ModuleValue &value, const ast::Expr *expr);

  // NumPy dtypes (module_evaluator_dtypes.cpp).

  /// The type of a NumPy dtype string ("f4", "<i8", "S3", "datetime64[D]"),
  /// or null.
  const Type *dtypeNamed(llvm::StringRef spelled) const;
  /// What np.dtype(x) makes of `value`, the value of `spec`: a dtype string,
  /// a scalar type, Python's float, int, bool or complex, a record or an
  /// existing dtype; null (reported) for anything else.
  const Type *dtypeOfValue(const ModuleValue &value, const ast::Expr *spec);
  /// np.dtype(spec, align=False).
  std::optional<ModuleValue> makeNumpyDtype(const ast::CallExpr *call);
  /// np.dtype([(name, type), (name, type, shape), ...]), laid out as NumPy
  /// lays it out.
  std::optional<ModuleValue> makeStructuredDtype(const ast::SequenceExpr *fieldList, bool aligned);
  /// numba.from_dtype(dtype).
  std::optional<ModuleValue> makeNumbaTypeOfDtype(const Symbol &symbol, const ast::CallExpr *call,
                                                  llvm::ArrayRef<ModuleValue> args);
  std::optional<Signature> parseSignatureString(const ast::StringLiteralExpr *literal);

  const ModuleScope &scope;
  SourceManager &sources;
  ast::AstContext &astContext;
  TypeContext &types;
  DiagnosticEngine &diags;
  /// True while evaluating a signature string: names are numba.types names.
  bool inSignatureString = false;
};

} // namespace kiln
