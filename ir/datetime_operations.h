//===- ir/datetime_operations.h - datetime64 arithmetic ---------*- C++ -*-===//
//
// What each operator gives for datetime64 and timedelta64 operands, as
// Numba's templates type them (numba/cuda/typing/npdatetime.py): the one
// statement of the rules, which the front end's typing applies and the
// verifier checks typed IR against. Timedeltas add, subtract and compare
// when one unit converts to the other, scale by an int64 or a float and
// divide into a float64; datetimes move by timedeltas, subtract into a
// timedelta and compare at any units. Numba types `td // td` but cannot
// compile it, and has no `%` for timedeltas; neither is a rule here.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/typed_ir.h"

#include <optional>

namespace kiln::ir {

struct DateTimeOperationResult {
  enum class Kind : uint8_t { Datetime, Timedelta, Float64, Boolean };
  Kind kind;
  DateTimeUnit unit = DateTimeUnit::Generic;

  /// Whether `type` is the result described.
  bool describes(const Type *type) const;
};

/// The result of `lhs op rhs` (op: Add, Sub, Mul, TrueDiv, FloorDiv or a
/// comparison) where either operand is a datetime64 or timedelta64, with
/// integer operands already int64; none where Numba has no such operation.
std::optional<DateTimeOperationResult> dateTimeOperationResult(Opcode op, const Type *lhs,
                                                               const Type *rhs);

} // namespace kiln::ir
