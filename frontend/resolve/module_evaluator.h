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
  /// numba.types.Record(fields, size, aligned) in a signature.
  std::optional<ModuleValue> evaluateRecordType(const ast::CallExpr *call);
  /// A Record field's type NestedArray(dtype, shape): fills `field`'s type
  /// and shape; false if `expr` is not one.
  bool nestedArrayField(const ast::Expr *expr, RecordType::Field &field);
  std::optional<ModuleValue> evaluateBinary(const ast::BinaryExpr *binary);
  std::optional<ModuleValue> evaluateUnary(const ast::UnaryExpr *unary);
  std::optional<ModuleValue> callSymbol(const Symbol &symbol, const ast::CallExpr *call,
                                        llvm::ArrayRef<ModuleValue> args);
  std::optional<ModuleValue> callType(const Type *type, const ast::CallExpr *call,
                                      llvm::ArrayRef<ModuleValue> args);
  std::optional<Signature> asSignature(const ModuleValue &value, const ast::Expr *expr);
  std::optional<Signature> parseSignatureString(const ast::StringLiteralExpr *literal);
  std::optional<ConstantValue> constantOf(const ast::Expr *expr, const ModuleValue &value);
  /// Whether NumPy converts `value` to the scalar type `type` without
  /// raising (np.int8(300) overflows); reports the error if not.
  bool checkScalarConversion(const ConstantValue &value, const Type *type,
                             const ast::CallExpr *call);
  std::optional<ModuleValue> reportFoldError(FoldError error, const ast::Expr *expr);

  const ModuleScope &scope;
  SourceManager &sources;
  ast::AstContext &astContext;
  TypeContext &types;
  DiagnosticEngine &diags;
  /// True while evaluating a signature string: names are numba.types names.
  bool inSignatureString = false;
};

} // namespace kiln
