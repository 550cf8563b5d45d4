//===- frontend/emit/emit_operators.cpp - Operators -----------------------===//

#include "frontend/emit/function_emitter.h"

namespace kiln::emit {

using ssa::Op;

ir::Value *FunctionEmitter::emitOperator(const ssa::Instr *instr, const Resolution &resolution) {
  const Type *result = plain(resolution.result);
  if (resolution.kind == Resolution::Kind::Truth) {
    // A condition tests its operand; the call bool(x) has the callee first.
    size_t tested = instr->op == Op::Call ? 1 : 0;
    return convert(valueOf(instr->operands[tested]), types.boolean());
  }
  // A call of operator.add(a, b) and the like is the operator its
  // resolution names, on the operands after the callee.
  bool called = instr->op == Op::Call;
  size_t first = called ? 1 : 0;
  if (instr->op == Op::Unary || (called && resolution.detail == "unary")) {
    ir::Value *value = operand(instr, first, resolution);
    switch (called ? ast::UnaryOp(resolution.index) : instr->unaryOp) {
    case ast::UnaryOp::Negate:
      return emit(ir::Opcode::Neg, result, {value});
    case ast::UnaryOp::Plus:
      return value;
    case ast::UnaryOp::Invert:
      return emit(ir::Opcode::Invert, result, {value});
    case ast::UnaryOp::Not:
      return emit(ir::Opcode::Not, result, {convert(value, types.boolean())});
    }
  }
  if (resolution.detail == "optional is None") {
    // `x is None` of an optional x (operator.is_ is typed as no overload).
    const ssa::Instr *tested =
        instr->operands[llvm::isa<OptionalType>(typeOf(instr->operands[0])) ? 0 : 1];
    ir::Value *isNone = emit(ir::Opcode::IsNone, types.boolean(), {valueOf(tested)});
    return instr->compareOp == ast::CompareOp::IsNot
               ? emit(ir::Opcode::Not, types.boolean(), {isNone})
               : isNone;
  }
  if (instr->op == Op::Compare || (called && resolution.detail == "compare")) {
    if (resolution.detail == "tuple_compare") {
      // Members of an enum of tuples compare their values, identity too.
      ast::CompareOp op = instr->compareOp == ast::CompareOp::Is      ? ast::CompareOp::Eq
                          : instr->compareOp == ast::CompareOp::IsNot ? ast::CompareOp::NotEq
                                                                      : instr->compareOp;
      return emitTupleCompare(op, operand(instr, 0, resolution), operand(instr, 1, resolution));
    }
    ast::CompareOp op = called ? ast::CompareOp(resolution.index) : instr->compareOp;
    ir::Value *lhs = operand(instr, first, resolution);
    ir::Value *rhs = operand(instr, first + 1, resolution);
    static const std::map<ast::CompareOp, ir::Opcode> compares = {
        {ast::CompareOp::Eq, ir::Opcode::Eq}, {ast::CompareOp::NotEq, ir::Opcode::Ne},
        {ast::CompareOp::Lt, ir::Opcode::Lt}, {ast::CompareOp::LtE, ir::Opcode::Le},
        {ast::CompareOp::Gt, ir::Opcode::Gt}, {ast::CompareOp::GtE, ir::Opcode::Ge},
        {ast::CompareOp::Is, ir::Opcode::Eq}, {ast::CompareOp::IsNot, ir::Opcode::Ne}};
    return emit(compares.at(op), types.boolean(), {lhs, rhs});
  }
  // Binary.
  if (resolution.detail == "tuple_concat") {
    std::vector<ir::Value *> elements;
    for (const ssa::Instr *side : instr->operands) {
      const auto *tuple = llvm::cast<TupleType>(plain(typeOf(side)));
      for (size_t i = 0; i < tuple->size(); ++i) {
        ir::Instruction *get =
            emit(ir::Opcode::TupleGet, tuple->elementTypes()[i], {valueOf(side)});
        get->index = static_cast<unsigned>(i);
        elements.push_back(get);
      }
    }
    return emit(ir::Opcode::TupleMake, result, elements);
  }
  // Numba's implementations cast both operands to the result type (an
  // int64 - uint64 case computes in int64, int / int in float64); only the
  // exponent of a power keeps its own type, and datetime operands their
  // units, which the operation converts.
  ast::BinaryOp op = called ? ast::BinaryOp(resolution.index) : instr->binaryOp;
  bool keepsOperandTypes = op == ast::BinaryOp::Pow || resolution.detail == "datetime";
  ir::Value *lhs = operand(instr, first, resolution);
  ir::Value *rhs = operand(instr, first + 1, resolution);
  if (resolution.detail != "datetime")
    lhs = convert(lhs, result);
  if (!keepsOperandTypes)
    rhs = convert(rhs, result);
  static const std::map<ast::BinaryOp, ir::Opcode> arithmetic = {
      {ast::BinaryOp::Add, ir::Opcode::Add},
      {ast::BinaryOp::Sub, ir::Opcode::Sub},
      {ast::BinaryOp::Mul, ir::Opcode::Mul},
      {ast::BinaryOp::TrueDiv, ir::Opcode::TrueDiv},
      {ast::BinaryOp::FloorDiv, ir::Opcode::FloorDiv},
      {ast::BinaryOp::Mod, ir::Opcode::Mod},
      {ast::BinaryOp::Pow, ir::Opcode::Pow},
      {ast::BinaryOp::LShift, ir::Opcode::Shl},
      {ast::BinaryOp::RShift, ir::Opcode::Shr},
      {ast::BinaryOp::BitAnd, ir::Opcode::And},
      {ast::BinaryOp::BitOr, ir::Opcode::Or},
      {ast::BinaryOp::BitXor, ir::Opcode::Xor}};
  return emit(arithmetic.at(op), result, {lhs, rhs});
}

ir::Value *FunctionEmitter::emitTupleCompare(ast::CompareOp op, ir::Value *lhs, ir::Value *rhs) {
  // Lexicographic, as Python compares tuples: the first unequal pair of
  // elements decides; if one tuple is a prefix of the other, length does.
  const auto *left = llvm::cast<TupleType>(lhs->type());
  const auto *right = llvm::cast<TupleType>(rhs->type());
  size_t n = std::min(left->size(), right->size());
  auto element = [&](ir::Value *tuple, const TupleType *type, size_t i) {
    ir::Instruction *get = emit(ir::Opcode::TupleGet, type->elementTypes()[i], {tuple});
    get->index = static_cast<unsigned>(i);
    return get;
  };
  auto compare = [&](ir::Opcode opcode, ir::Value *a, ir::Value *b) -> ir::Value * {
    Typing typed = typing::compareOperator(types, ast::CompareOp::Eq, a->type(), b->type());
    const Type *common = typed && !typed->operandTypes.empty() ? typed->operandTypes[0] : a->type();
    return emit(opcode, types.boolean(), {convert(a, common), convert(b, common)});
  };
  ir::Value *boolTrue = constant(types.boolean(), ConstantValue::boolean(true));
  ir::Value *boolFalse = constant(types.boolean(), ConstantValue::boolean(false));
  // Result when all compared elements are equal.
  bool lengthResult;
  switch (op) {
  case ast::CompareOp::Eq:
    lengthResult = left->size() == right->size();
    break;
  case ast::CompareOp::NotEq:
    lengthResult = left->size() != right->size();
    break;
  case ast::CompareOp::Lt:
    lengthResult = left->size() < right->size();
    break;
  case ast::CompareOp::LtE:
    lengthResult = left->size() <= right->size();
    break;
  case ast::CompareOp::Gt:
    lengthResult = left->size() > right->size();
    break;
  default:
    lengthResult = left->size() >= right->size();
    break;
  }
  ir::Value *result = lengthResult ? boolTrue : boolFalse;
  for (size_t k = n; k-- > 0;) {
    ir::Value *a = element(lhs, left, k);
    ir::Value *b = element(rhs, right, k);
    ir::Value *equal = compare(ir::Opcode::Eq, a, b);
    ir::Value *decided;
    switch (op) {
    case ast::CompareOp::Eq:
      decided = boolFalse;
      break;
    case ast::CompareOp::NotEq:
      decided = boolTrue;
      break;
    case ast::CompareOp::Lt:
    case ast::CompareOp::LtE:
      decided = compare(ir::Opcode::Lt, a, b);
      break;
    default:
      decided = compare(ir::Opcode::Gt, a, b);
      break;
    }
    result = emit(ir::Opcode::Select, types.boolean(), {equal, result, decided});
  }
  return result;
}

ir::Value *FunctionEmitter::emitMinMax(bool isMin, const Type *result,
                                       llvm::ArrayRef<ir::Value *> args) {
  std::vector<ir::Value *> items;
  if (args.size() == 1) {
    const auto *tuple = llvm::cast<TupleType>(args[0]->type());
    for (size_t i = 0; i < tuple->size(); ++i) {
      ir::Instruction *get = emit(ir::Opcode::TupleGet, tuple->elementTypes()[i], {args[0]});
      get->index = static_cast<unsigned>(i);
      items.push_back(convert(get, result));
    }
  } else {
    for (ir::Value *arg : args)
      items.push_back(convert(arg, result));
  }
  // Python keeps the first item unless a later one is strictly smaller
  // (larger): min(a, b) is `b if b < a else a`.
  ir::Value *best = items[0];
  for (size_t i = 1; i < items.size(); ++i) {
    ir::Value *better =
        emit(isMin ? ir::Opcode::Lt : ir::Opcode::Gt, types.boolean(), {items[i], best});
    best = emit(ir::Opcode::Select, result, {better, items[i], best});
  }
  return best;
}

} // namespace kiln::emit
