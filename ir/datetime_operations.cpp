//===- ir/datetime_operations.cpp - datetime64 arithmetic -----------------===//

#include "ir/datetime_operations.h"

namespace kiln::ir {

namespace {

using Result = DateTimeOperationResult;

const DateTimeType *timedeltaOf(const Type *type) {
  const auto *value = llvm::dyn_cast_or_null<DateTimeType>(type);
  return value && !value->isDatetime() ? value : nullptr;
}

const DateTimeType *datetimeOf(const Type *type) {
  const auto *value = llvm::dyn_cast_or_null<DateTimeType>(type);
  return value && value->isDatetime() ? value : nullptr;
}

/// Either unit converts to the other.
bool compatibleUnits(const DateTimeType *a, const DateTimeType *b) {
  return canCastTimedeltaUnits(a->unit(), b->unit()) || canCastTimedeltaUnits(b->unit(), a->unit());
}

/// A number a timedelta scales by: int64, or a float.
bool isScale(const Type *type) {
  const auto *integer = llvm::dyn_cast<IntegerType>(type);
  return (integer && integer->bitwidth() == 64 && integer->signedness()) ||
         llvm::isa<FloatType>(type);
}

bool isComparison(Opcode op) {
  return op == Opcode::Eq || op == Opcode::Ne || op == Opcode::Lt || op == Opcode::Le ||
         op == Opcode::Gt || op == Opcode::Ge;
}

} // namespace

bool DateTimeOperationResult::describes(const Type *type) const {
  switch (kind) {
  case Kind::Float64: {
    const auto *real = llvm::dyn_cast<FloatType>(type);
    return real && real->bitwidth() == 64;
  }
  case Kind::Boolean:
    return llvm::isa<BooleanType>(type);
  case Kind::Datetime:
    return datetimeOf(type) && datetimeOf(type)->unit() == unit;
  case Kind::Timedelta:
    return timedeltaOf(type) && timedeltaOf(type)->unit() == unit;
  }
  return false;
}

std::optional<DateTimeOperationResult> dateTimeOperationResult(Opcode op, const Type *lhs,
                                                               const Type *rhs) {
  const DateTimeType *leftDelta = timedeltaOf(lhs), *rightDelta = timedeltaOf(rhs);
  const DateTimeType *leftTime = datetimeOf(lhs), *rightTime = datetimeOf(rhs);
  if (isComparison(op)) {
    if ((leftTime && rightTime) ||
        (leftDelta && rightDelta && compatibleUnits(leftDelta, rightDelta)))
      return Result{Result::Kind::Boolean};
    return std::nullopt;
  }
  switch (op) {
  case Opcode::Add:
  case Opcode::Sub:
    if (leftDelta && rightDelta) {
      if (canCastTimedeltaUnits(leftDelta->unit(), rightDelta->unit()))
        return Result{Result::Kind::Timedelta, rightDelta->unit()};
      if (canCastTimedeltaUnits(rightDelta->unit(), leftDelta->unit()))
        return Result{Result::Kind::Timedelta, leftDelta->unit()};
      return std::nullopt;
    }
    if (op == Opcode::Sub && leftTime && rightTime)
      return Result{Result::Kind::Timedelta,
                    finerDateTimeUnit(leftTime->unit(), rightTime->unit())};
    // datetime + timedelta, timedelta + datetime, datetime - timedelta
    if (const DateTimeType *time = leftTime ? leftTime : op == Opcode::Add ? rightTime : nullptr)
      if (const DateTimeType *delta = leftTime ? rightDelta : leftDelta)
        if (std::optional<DateTimeUnit> unit =
                combineDatetimeTimedeltaUnits(time->unit(), delta->unit()))
          return Result{Result::Kind::Datetime, *unit};
    return std::nullopt;
  case Opcode::Mul:
    if (leftDelta && isScale(rhs))
      return Result{Result::Kind::Timedelta, leftDelta->unit()};
    if (rightDelta && isScale(lhs))
      return Result{Result::Kind::Timedelta, rightDelta->unit()};
    return std::nullopt;
  case Opcode::TrueDiv:
    if (leftDelta && rightDelta && compatibleUnits(leftDelta, rightDelta))
      return Result{Result::Kind::Float64};
    [[fallthrough]];
  case Opcode::FloorDiv:
    if (leftDelta && isScale(rhs))
      return Result{Result::Kind::Timedelta, leftDelta->unit()};
    return std::nullopt;
  default:
    return std::nullopt;
  }
}

} // namespace kiln::ir
