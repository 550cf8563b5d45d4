//===- frontend/resolve/constant_folding.h ---------------------*- C++ -*-===//
//
// Python's operators applied to constants, with Python's semantics (floor
// division and modulo, int ** negative int is a float, ...), so that Kiln
// folds constants exactly as CPython's compiler does before Numba sees the
// bytecode.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/parse/ast.h"
#include "ir/constant_value.h"

#include <optional>

namespace kiln {

/// Why folding failed, for the caller's diagnostic.
enum class FoldError : uint8_t { None, DivisionByZero, Overflow, Unsupported };

struct FoldResult {
  std::optional<ConstantValue> value;
  FoldError error = FoldError::Unsupported;
};

/// Python's binary operators on constants.
FoldResult foldBinary(ast::BinaryOp op, const ConstantValue &lhs, const ConstantValue &rhs,
                      TypeContext &types);
/// Python's unary operators on constants.
FoldResult foldUnary(ast::UnaryOp op, const ConstantValue &operand, TypeContext &types);
/// An item of a tuple constant by a constant index (`(-5, 0.5)[0]` is -5;
/// negative indices count from the end); an index out of range folds to
/// nothing, as CPython leaves the subscript to fail when it runs.
FoldResult foldSubscript(const ConstantValue &tuple, const ConstantValue &index);
/// Python's comparisons on numbers (and == / != on anything).
FoldResult foldCompare(ast::CompareOp op, const ConstantValue &lhs, const ConstantValue &rhs);

} // namespace kiln
