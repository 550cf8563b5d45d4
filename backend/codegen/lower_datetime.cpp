//===- backend/codegen/lower_datetime.cpp - datetime64 and timedelta64 arithmetic -===//
//
// Numba's implementations (numba/cuda/np/npdatetime.py): values are int64
// counts of their unit; operands are brought to the result's unit (years
// and months of a datetime through the calendar, every other unit by a
// constant factor); NaT, the most negative int64, makes any result NaT, a
// float result NaN, and a comparison false (true for !=).
//
//===----------------------------------------------------------------------===//

#include "backend/codegen/function_lowering.h"
#include "ir/datetime_operations.h"

#include <llvm/IR/Intrinsics.h>

namespace kiln::backend {

namespace {

constexpr int64_t notATime = INT64_MIN;

bool isCoarserThanWeeks(DateTimeUnit unit) {
  return unit == DateTimeUnit::Year || unit == DateTimeUnit::Month;
}

} // namespace

llvm::Value *FunctionLowering::isTime(llvm::Value *value) {
  return builder.CreateICmpNE(value, i64(notATime));
}

llvm::Value *FunctionLowering::scaleDateTime(llvm::Value *value, DateTimeUnit from,
                                             DateTimeUnit to) {
  // The typing only lets units meet whose factor is an integer.
  int64_t factor = dateTimeConversionFactor(from, to).value_or(1);
  return factor == 1 ? value : builder.CreateMul(value, i64(factor));
}

std::pair<llvm::Value *, llvm::Value *> FunctionLowering::floorDivModConstant(llvm::Value *value,
                                                                              int64_t divisor) {
  llvm::Value *quotient = builder.CreateSDiv(value, i64(divisor));
  llvm::Value *remainder = builder.CreateSRem(value, i64(divisor));
  llvm::Value *negative = builder.CreateICmpSLT(remainder, i64(0));
  return {builder.CreateSelect(negative, builder.CreateSub(quotient, i64(1)), quotient),
          builder.CreateSelect(negative, builder.CreateAdd(remainder, i64(divisor)), remainder)};
}

llvm::Value *FunctionLowering::daysBeforeYear(llvm::Value *year) {
  // Days from 1970-01-01 to January 1st of 1970 + `year`, with leap days
  // counted from the nearest leap years as NumPy's get_datetimestruct_days.
  llvm::Value *days = builder.CreateMul(year, i64(365));
  auto add = [&](llvm::Value *a, int64_t b) { return builder.CreateAdd(a, i64(b)); };
  auto over = [&](llvm::Value *a, int64_t b) { return builder.CreateSDiv(a, i64(b)); };
  llvm::Value *from1968 = add(year, 1);
  llvm::Value *from1900 = add(from1968, 68);
  llvm::Value *after = builder.CreateAdd(
      builder.CreateSub(builder.CreateAdd(days, over(from1968, 4)), over(from1900, 100)),
      over(add(from1900, 300), 400));
  llvm::Value *from1972 = add(year, -2);
  llvm::Value *from2000 = add(from1972, -28);
  llvm::Value *before = builder.CreateAdd(
      builder.CreateSub(builder.CreateAdd(days, over(from1972, 4)), over(from2000, 100)),
      over(from2000, 400));
  return builder.CreateSelect(builder.CreateICmpSLT(year, i64(0)), before, after);
}

llvm::Value *FunctionLowering::daysBeforeMonth(llvm::Value *months) {
  auto [year, month] = floorDivModConstant(months, 12);
  static const uint64_t daysBefore[12] = {0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334};
  llvm::Value *table = llvm::ConstantDataVector::get(builder.getContext(), daysBefore);
  llvm::Value *inYear = builder.CreateExtractElement(table, month);
  llvm::Value *actual = builder.CreateAdd(year, i64(1970));
  llvm::Value *leap = builder.CreateAnd(
      builder.CreateICmpEQ(builder.CreateAnd(actual, i64(3)), i64(0)),
      builder.CreateOr(builder.CreateICmpNE(builder.CreateSRem(actual, i64(100)), i64(0)),
                       builder.CreateICmpEQ(builder.CreateSRem(actual, i64(400)), i64(0))));
  llvm::Value *leapDay = builder.CreateZExt(
      builder.CreateAnd(leap, builder.CreateICmpSGE(month, i64(2))), types.i64());
  return builder.CreateAdd(daysBeforeYear(year), builder.CreateAdd(inYear, leapDay));
}

llvm::Value *FunctionLowering::convertDatetime(llvm::Value *value, DateTimeUnit from,
                                               DateTimeUnit to) {
  if (isCoarserThanWeeks(from) && !isCoarserThanWeeks(to) && to != DateTimeUnit::Generic) {
    llvm::Value *days = from == DateTimeUnit::Year ? daysBeforeYear(value) : daysBeforeMonth(value);
    if (to == DateTimeUnit::Week)
      return floorDivModConstant(days, 7).first;
    value = days;
    from = DateTimeUnit::Day;
  }
  return scaleDateTime(value, from, to);
}

llvm::Value *FunctionLowering::timedeltaFromFloat(llvm::Value *value) {
  llvm::Value *whole =
      hooks.saturatingFloatToInteger(builder, value, types.i64(), /*isSigned=*/true);
  return builder.CreateSelect(builder.CreateFCmpUNO(value, value), i64(notATime), whole);
}

llvm::Value *FunctionLowering::lowerDateTimeOperation(const ir::Instruction &instruction) {
  using Op = ir::Opcode;
  Op op = instruction.opcode;
  llvm::Value *a = valueOf(instruction.operands[0]);
  llvm::Value *b = valueOf(instruction.operands[1]);
  const Type *aType = instruction.operands[0]->type();
  const Type *bType = instruction.operands[1]->type();
  const auto *aTime = llvm::dyn_cast<DateTimeType>(aType);
  const auto *bTime = llvm::dyn_cast<DateTimeType>(bType);
  llvm::Value *nat = i64(notATime);

  if (aTime && bTime && op != Op::Add && op != Op::Sub && op != Op::TrueDiv) {
    // A comparison, at the finer unit for datetimes, else at the unit one
    // side converts to.
    DateTimeUnit unit = finerDateTimeUnit(aTime->unit(), bTime->unit());
    if (!aTime->isDatetime() && !canCastTimedeltaUnits(aTime->unit(), bTime->unit()))
      unit = aTime->unit();
    llvm::Value *x = aTime->isDatetime() ? convertDatetime(a, aTime->unit(), unit)
                                         : scaleDateTime(a, aTime->unit(), unit);
    llvm::Value *y = bTime->isDatetime() ? convertDatetime(b, bTime->unit(), unit)
                                         : scaleDateTime(b, bTime->unit(), unit);
    static const std::map<Op, llvm::CmpInst::Predicate> predicates = {
        {Op::Eq, llvm::CmpInst::ICMP_EQ},  {Op::Ne, llvm::CmpInst::ICMP_NE},
        {Op::Lt, llvm::CmpInst::ICMP_SLT}, {Op::Le, llvm::CmpInst::ICMP_SLE},
        {Op::Gt, llvm::CmpInst::ICMP_SGT}, {Op::Ge, llvm::CmpInst::ICMP_SGE}};
    llvm::Value *compared = builder.CreateICmp(predicates.at(op), x, y);
    return builder.CreateSelect(builder.CreateAnd(isTime(a), isTime(b)), compared,
                                builder.getInt1(op == Op::Ne));
  }

  if (aTime && bTime && op == Op::TrueDiv) {
    DateTimeUnit unit =
        canCastTimedeltaUnits(aTime->unit(), bTime->unit()) ? bTime->unit() : aTime->unit();
    llvm::Type *f64 = builder.getDoubleTy();
    llvm::Value *quotient =
        builder.CreateFDiv(builder.CreateSIToFP(scaleDateTime(a, aTime->unit(), unit), f64),
                           builder.CreateSIToFP(scaleDateTime(b, bTime->unit(), unit), f64));
    return builder.CreateSelect(builder.CreateAnd(isTime(a), isTime(b)), quotient,
                                llvm::ConstantFP::getNaN(f64));
  }

  if (aTime && bTime) {
    // timedelta ± timedelta, datetime ± timedelta, timedelta + datetime,
    // datetime - datetime: both sides in the result's unit.
    DateTimeUnit unit = llvm::cast<DateTimeType>(instruction.type())->unit();
    auto inUnit = [&](llvm::Value *v, const DateTimeType *t) {
      return t->isDatetime() ? convertDatetime(v, t->unit(), unit)
                             : scaleDateTime(v, t->unit(), unit);
    };
    llvm::Value *x = inUnit(a, aTime);
    llvm::Value *y = inUnit(b, bTime);
    llvm::Value *result = op == Op::Add ? builder.CreateAdd(x, y) : builder.CreateSub(x, y);
    return builder.CreateSelect(builder.CreateAnd(isTime(a), isTime(b)), result, nat);
  }

  // A timedelta and a number: scaled or divided in the timedelta's unit.
  bool deltaFirst = aTime != nullptr;
  llvm::Value *delta = deltaFirst ? a : b;
  llvm::Value *number = deltaFirst ? b : a;
  const Type *numberType = deltaFirst ? bType : aType;
  bool real = llvm::isa<FloatType>(numberType);
  if (op == Op::Mul) {
    llvm::Value *product = real ? timedeltaFromFloat(builder.CreateFMul(
                                      builder.CreateSIToFP(delta, number->getType()), number))
                                : builder.CreateMul(delta, number);
    return builder.CreateSelect(isTime(delta), product, nat);
  }
  // Division by a number: NaT where the divisor is zero or NaN; integers
  // divide truncating, as Numba's sdiv.
  llvm::Value *usable =
      real ? builder.CreateFCmpONE(number, llvm::ConstantFP::get(number->getType(), 0.0))
           : builder.CreateICmpNE(number, i64(0));
  llvm::Value *ok = builder.CreateAnd(isTime(delta), usable);
  llvm::Value *quotient =
      real ? timedeltaFromFloat(
                 builder.CreateFDiv(builder.CreateSIToFP(delta, number->getType()), number))
           : builder.CreateSDiv(delta, builder.CreateSelect(ok, number, i64(1)));
  return builder.CreateSelect(ok, quotient, nat);
}

} // namespace kiln::backend
