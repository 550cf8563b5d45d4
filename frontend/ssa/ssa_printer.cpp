//===- frontend/ssa/ssa_printer.cpp - Textual untyped SSA -----------------===//
//
// For debugging the front end (`kiln build --emit ssa`):
//
//   bb0:
//     %0 = arg 0 (x)
//     %3 = call %1(%2)
//     branch %4, bb1, bb2
//
//===----------------------------------------------------------------------===//

#include "frontend/ssa/ssa.h"

namespace kiln::ssa {

namespace {

llvm::StringRef opName(Op op) {
  switch (op) {
  case Op::Argument:
    return "arg";
  case Op::Constant:
    return "const";
  case Op::Global:
    return "global";
  case Op::Undefined:
    return "undef";
  case Op::Phi:
    return "phi";
  case Op::Binary:
    return "binary";
  case Op::Unary:
    return "unary";
  case Op::Compare:
    return "compare";
  case Op::Truth:
    return "truth";
  case Op::GetAttr:
    return "getattr";
  case Op::SetAttr:
    return "setattr";
  case Op::GetItem:
    return "getitem";
  case Op::SetItem:
    return "setitem";
  case Op::Call:
    return "call";
  case Op::BuildTuple:
    return "tuple";
  case Op::BuildSlice:
    return "slice";
  case Op::TupleGet:
    return "tuple_get";
  case Op::IterCount:
    return "iter_count";
  case Op::IterItem:
    return "iter_item";
  case Op::LoopStart:
    return "loop_start";
  case Op::LoopNext:
    return "loop_next";
  case Op::LoopTest:
    return "loop_test";
  case Op::Assert:
    return "assert";
  case Op::Closure:
    return "closure";
  }
  return "?";
}

void printValue(const Instr *instr, llvm::raw_ostream &os) {
  if (instr->op == Op::Undefined)
    os << "undef(" << instr->name << ")";
  else
    os << '%' << instr->id;
}

} // namespace

void Function::print(llvm::raw_ostream &os) const {
  os << "function " << decl->name << '\n';
  for (const auto &block : blocks) {
    os << "bb" << block->id << ":";
    if (!block->predecessors.empty()) {
      os << "  ; preds:";
      for (const Block *predecessor : block->predecessors)
        os << " bb" << predecessor->id;
    }
    os << '\n';
    auto printInstr = [&](const Instr *instr) {
      os << "  %" << instr->id << " = " << opName(instr->op);
      switch (instr->op) {
      case Op::Binary:
        os << ' ' << ast::spelling(instr->binaryOp);
        break;
      case Op::Unary:
        os << ' ' << ast::spelling(instr->unaryOp);
        break;
      case Op::Compare:
        os << ' ' << ast::spelling(instr->compareOp);
        break;
      case Op::Constant:
        os << ' ' << instr->constant->repr();
        break;
      case Op::Global:
      case Op::GetAttr:
      case Op::SetAttr:
        os << ' ' << instr->name;
        break;
      case Op::Closure:
        os << ' ' << instr->function->name;
        break;
      case Op::Argument:
      case Op::TupleGet:
        os << ' ' << instr->index;
        break;
      default:
        break;
      }
      for (size_t i = 0; i < instr->operands.size(); ++i) {
        os << (i ? ", " : " ");
        if (llvm::is_contained(instr->starred, i))
          os << '*';
        printValue(instr->operands[i], os);
        if (instr->op == Op::Phi)
          os << " from bb" << instr->incoming[i]->id;
      }
      for (const std::string &keyword : instr->keywordNames)
        os << " kw:" << keyword;
      os << '\n';
    };
    for (const Instr *phi : block->phis)
      printInstr(phi);
    for (const Instr *instr : block->instrs)
      printInstr(instr);
    const Terminator &t = block->terminator;
    switch (t.kind) {
    case Terminator::Kind::None:
      os << "  <unterminated>\n";
      break;
    case Terminator::Kind::Jump:
      os << "  jump bb" << t.target->id << '\n';
      break;
    case Terminator::Kind::Branch:
      os << "  branch ";
      printValue(t.value, os);
      os << ", bb" << t.target->id << ", bb" << t.falseTarget->id << '\n';
      break;
    case Terminator::Kind::Return:
      os << "  return ";
      printValue(t.value, os);
      os << '\n';
      break;
    case Terminator::Kind::Raise:
      os << "  raise ";
      printValue(t.value, os);
      os << '\n';
      break;
    }
  }
}

} // namespace kiln::ssa
