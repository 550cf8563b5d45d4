//===- tests/ir/typed_ir_verifier_test.cpp - Typed IR invariants ----===//
//
// The verifier on typed IR built by hand, without source: each test makes
// one small function whose phis take an undefined operand and checks that
// the verifier accepts it exactly when the variable can be unbound on that
// path.
//
//===----------------------------------------------------------------------===//

#include "ir/typed_ir.h"

#include <gtest/gtest.h>

namespace kiln::ir {
namespace {

/// bb0 branches on its bool argument to bb1 or bb2, which both jump to
/// bb3; `x` is what the test makes of it.
struct Diamond {
  TypeContext types;
  Module module;
  Function *function;
  Argument *condition;
  Argument *x;
  Block *entry, *left, *right, *join;

  Diamond() {
    function = module.addFunction();
    function->symbol = "m.f$0";
    function->kind = Function::Kind::Device;
    function->returnType = types.none();
    condition = function->addArgument(types.boolean(), "c");
    x = function->addArgument(types.integer(64, true), "x");
    entry = function->addBlock();
    left = function->addBlock();
    right = function->addBlock();
    join = function->addBlock();
    entry->terminator = {Terminator::Kind::Branch, condition, left, right, {}, {}, {}};
    left->terminator = {Terminator::Kind::Jump, nullptr, join, nullptr, {}, {}, {}};
    right->terminator = {Terminator::Kind::Jump, nullptr, join, nullptr, {}, {}, {}};
    join->terminator = {Terminator::Kind::Return, nullptr, nullptr, nullptr, {}, {}, {}};
    left->predecessors = {entry};
    right->predecessors = {entry};
    join->predecessors = {left, right};
  }

  /// A phi in the join: `fromLeft` from bb1, `fromRight` from bb2.
  void mergeInJoin(Value *fromLeft, Value *fromRight) {
    Instruction *phi = function->addInstruction(join, Opcode::Phi, types.integer(64, true), {});
    phi->operands = {fromLeft, fromRight};
    phi->incoming = {left, right};
  }
  Undefined *unbound(Undefined::Cause cause) {
    return function->undefined(types.integer(64, true), "y", cause);
  }
};

TEST(TypedIRVerifierTest, RejectsAPhiThatTakesAnArgumentAsUnbound) {
  // The arguments are bound on every path: the shape of the miscompile in
  // which a loop's break path lost every variable the loop left alone.
  Diamond ir;
  ir.mergeInJoin(ir.unbound(Undefined::Cause::Unassigned), ir.x);
  std::optional<std::string> problem = verify(ir.module);
  ASSERT_TRUE(problem) << "an unbound argument was accepted";
  EXPECT_NE(problem->find("takes 'y' as unbound from bb1"), std::string::npos) << *problem;
}

TEST(TypedIRVerifierTest, RejectsAPhiThatTakesAValueDefinedAboveAsUnbound) {
  Diamond ir;
  Instruction *doubled =
      ir.function->addInstruction(ir.entry, Opcode::Add, ir.types.integer(64, true), {});
  doubled->operands = {ir.x, ir.x};
  ir.mergeInJoin(doubled, ir.unbound(Undefined::Cause::Unassigned));
  std::optional<std::string> problem = verify(ir.module);
  ASSERT_TRUE(problem) << "a value defined in the entry block was taken as unbound";
  EXPECT_NE(problem->find("from bb2"), std::string::npos) << *problem;
}

TEST(TypedIRVerifierTest, AcceptsAVariableAssignedOnOneBranchOnly) {
  Diamond ir;
  Instruction *doubled =
      ir.function->addInstruction(ir.left, Opcode::Add, ir.types.integer(64, true), {});
  doubled->operands = {ir.x, ir.x};
  ir.mergeInJoin(doubled, ir.unbound(Undefined::Cause::Unassigned));
  std::optional<std::string> problem = verify(ir.module);
  EXPECT_FALSE(problem) << *problem;
}

TEST(TypedIRVerifierTest, AcceptsAVariableThatDelUnbound) {
  Diamond ir;
  ir.mergeInJoin(ir.unbound(Undefined::Cause::Deleted), ir.x);
  std::optional<std::string> problem = verify(ir.module);
  EXPECT_FALSE(problem) << *problem;
}

TEST(TypedIRVerifierTest, RejectsAnUndefinedOperandOutsideAPhi) {
  Diamond ir;
  Instruction *sum =
      ir.function->addInstruction(ir.join, Opcode::Add, ir.types.integer(64, true), {});
  sum->operands = {ir.x, ir.unbound(Undefined::Cause::Unassigned)};
  std::optional<std::string> problem = verify(ir.module);
  ASSERT_TRUE(problem) << "an instruction read an undefined value";
  EXPECT_NE(problem->find("reads undefined variable 'y'"), std::string::npos) << *problem;
}

TEST(TypedIRVerifierTest, RejectsAPhiOperandThatWasNeverEmitted) {
  Diamond ir;
  ir.mergeInJoin(nullptr, ir.x);
  std::optional<std::string> problem = verify(ir.module);
  ASSERT_TRUE(problem) << "a phi with a missing operand was accepted";
  EXPECT_NE(problem->find("null operand"), std::string::npos) << *problem;
}

} // namespace
} // namespace kiln::ir
