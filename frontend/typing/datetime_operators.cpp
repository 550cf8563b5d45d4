//===- frontend/typing/datetime_operators.cpp - datetime64 operators ------===//
//
// Operators on datetime64 and timedelta64 values, typed by the rules of
// ir/datetime_operations.h. Operands keep their own units, which the
// lowering converts, passing NaT on; an integer that scales a timedelta is
// taken as int64, as Numba's templates take it.
//
//===----------------------------------------------------------------------===//

#include "frontend/typing/typing_rules.h"
#include "ir/datetime_operations.h"

namespace kiln::typing {

namespace {

const Type *resultType(TypeContext &types, const ir::DateTimeOperationResult &result) {
  using Kind = ir::DateTimeOperationResult::Kind;
  switch (result.kind) {
  case Kind::Datetime:
    return types.datetime(result.unit);
  case Kind::Timedelta:
    return types.timedelta(result.unit);
  case Kind::Float64:
    return types.float64();
  case Kind::Boolean:
    return types.boolean();
  }
  return nullptr;
}

/// The operand as the operation takes it: integers as int64.
const Type *operandType(TypeContext &types, const Type *type) {
  if (llvm::isa<IntegerType, IntegerLiteralType>(type))
    return types.int64();
  return types.unliteral(type);
}

std::optional<Resolution> dateTimeOperation(TypeContext &types, ir::Opcode op, const Type *lhs,
                                            const Type *rhs) {
  lhs = operandType(types, lhs);
  rhs = operandType(types, rhs);
  std::optional<ir::DateTimeOperationResult> result = ir::dateTimeOperationResult(op, lhs, rhs);
  if (!result)
    return std::nullopt;
  Resolution resolution = Resolution::make(Resolution::Kind::Operator, resultType(types, *result));
  resolution.operandTypes = {lhs, rhs};
  resolution.detail = "datetime";
  return resolution;
}

} // namespace

bool involvesDateTime(const Type *lhs, const Type *rhs) {
  return llvm::isa<DateTimeType>(lhs) || (rhs && llvm::isa<DateTimeType>(rhs));
}

/// The datetime operation of the opcode `table` gives for `op`, or Numba's
/// "no overload" error.
template <typename Op, size_t N>
static Typing typedByTable(TypeContext &types, const std::pair<Op, ir::Opcode> (&table)[N], Op op,
                           const Type *lhs, const Type *rhs) {
  for (const auto &[astOp, opcode] : table)
    if (astOp == op)
      if (std::optional<Resolution> resolution = dateTimeOperation(types, opcode, lhs, rhs))
        return *resolution;
  return Typing::error(DiagID::err_no_binary_overload,
                       {ast::spelling(op).str(), lhs->str(), rhs->str()});
}

Typing dateTimeBinary(TypeContext &types, ast::BinaryOp op, const Type *lhs, const Type *rhs) {
  static const std::pair<ast::BinaryOp, ir::Opcode> opcodes[] = {
      {ast::BinaryOp::Add, ir::Opcode::Add},
      {ast::BinaryOp::Sub, ir::Opcode::Sub},
      {ast::BinaryOp::Mul, ir::Opcode::Mul},
      {ast::BinaryOp::TrueDiv, ir::Opcode::TrueDiv},
      {ast::BinaryOp::FloorDiv, ir::Opcode::FloorDiv}};
  return typedByTable(types, opcodes, op, lhs, rhs);
}

Typing dateTimeUnary(TypeContext &, ast::UnaryOp op, const Type *operand) {
  const auto *value = llvm::dyn_cast<DateTimeType>(operand);
  if (value && !value->isDatetime() && (op == ast::UnaryOp::Negate || op == ast::UnaryOp::Plus)) {
    Resolution resolution = Resolution::make(Resolution::Kind::Operator, operand);
    resolution.operandTypes = {operand};
    return resolution;
  }
  return Typing::error(DiagID::err_no_unary_overload, {ast::spelling(op).str(), operand->str()});
}

Typing dateTimeCompare(TypeContext &types, ast::CompareOp op, const Type *lhs, const Type *rhs) {
  static const std::pair<ast::CompareOp, ir::Opcode> opcodes[] = {
      {ast::CompareOp::Eq, ir::Opcode::Eq}, {ast::CompareOp::NotEq, ir::Opcode::Ne},
      {ast::CompareOp::Lt, ir::Opcode::Lt}, {ast::CompareOp::LtE, ir::Opcode::Le},
      {ast::CompareOp::Gt, ir::Opcode::Gt}, {ast::CompareOp::GtE, ir::Opcode::Ge}};
  return typedByTable(types, opcodes, op, lhs, rhs);
}

} // namespace kiln::typing
