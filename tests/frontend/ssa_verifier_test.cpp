//===- tests/frontend/ssa_verifier_test.cpp -------------------------------===//
//
// The SSA form's consistency check catches the two ways SSA construction
// can silently miscompile: an operand that is no longer a value of the
// function, and a phi that takes a variable as unbound on a path where the
// program binds it. Functions are built by hand here, since the builder
// itself no longer produces either.
//
//===----------------------------------------------------------------------===//

#include "frontend/source/diagnostics.h"
#include "frontend/ssa/ssa.h"

#include <gtest/gtest.h>

namespace kiln::ssa {
namespace {

/// A function built block by block, as the SSA builder would.
class FunctionBuilder {
public:
  Block *block() {
    function.blocks.push_back(std::make_unique<Block>(function.blocks.size()));
    return function.blocks.back().get();
  }
  Instr *value(Op op, Block *block) {
    Instr *instr = detached(op);
    instr->block = block;
    (op == Op::Phi ? block->phis : block->instrs).push_back(instr);
    return instr;
  }
  /// An instruction in no block: a value the builder removed.
  Instr *detached(Op op) {
    function.instrs.push_back(std::make_unique<Instr>(op, function.instrs.size(), SourceRange()));
    return function.instrs.back().get();
  }
  Instr *undefined(llvm::StringRef name) {
    Instr *instr = detached(Op::Undefined);
    instr->name = name.str();
    function.undefinedValues.push_back(instr);
    return instr;
  }
  void jump(Block *from, Block *to) {
    from->terminator = {Terminator::Kind::Jump, nullptr, to, nullptr, SourceRange()};
    to->predecessors.push_back(from);
  }
  void branch(Block *from, Instr *condition, Block *ifTrue, Block *ifFalse) {
    from->terminator = {Terminator::Kind::Branch, condition, ifTrue, ifFalse, SourceRange()};
    ifTrue->predecessors.push_back(from);
    ifFalse->predecessors.push_back(from);
  }
  void returns(Block *from, Instr *value) {
    from->terminator = {Terminator::Kind::Return, value, nullptr, nullptr, SourceRange()};
  }

  Function function;
};

/// The diamond `if c: x = 1` then a merge that reads x, with the phi's
/// operand from the else side given by the test.
struct Diamond {
  FunctionBuilder build;
  Block *entry, *then, *otherwise, *merge;
  Instr *condition, *assigned, *phi;

  explicit Diamond(bool elseBindsX) {
    entry = build.block();
    then = build.block();
    otherwise = build.block();
    merge = build.block();
    condition = build.value(Op::Argument, entry);
    build.branch(entry, condition, then, otherwise);
    assigned = build.value(Op::Constant, then);
    then->bindings["x"] = true;
    build.jump(then, merge);
    if (elseBindsX)
      otherwise->bindings["x"] = true;
    build.jump(otherwise, merge);
    phi = build.value(Op::Phi, merge);
    phi->name = "x";
    phi->operands = {assigned, build.undefined("x")};
    phi->incoming = {then, otherwise};
    build.returns(merge, phi);
  }
};

std::string verified(const Function &function, bool &valid) {
  SourceManager sources;
  DiagnosticEngine diags(sources);
  valid = verifySSA(function, diags);
  return diags.diagnostics().empty() ? "" : diags.diagnostics().front().message;
}

TEST(SSAVerifierTest, AcceptsUnboundOperandWhereAPathBindsNothing) {
  Diamond diamond(/*elseBindsX=*/false);
  bool valid = false;
  std::string message = verified(diamond.build.function, valid);
  EXPECT_TRUE(valid) << "x really is unbound when the else side runs: " << message;
}

TEST(SSAVerifierTest, RejectsUnboundOperandWherePathBindsTheVariable) {
  Diamond diamond(/*elseBindsX=*/true);
  bool valid = true;
  std::string message = verified(diamond.build.function, valid);
  EXPECT_FALSE(valid) << "the else side binds x, so the phi's undef would replace a real value";
  EXPECT_NE(message.find("internal error"), std::string::npos) << message;
  EXPECT_NE(message.find("'x' as unbound on the path from bb2"), std::string::npos) << message;
}

TEST(SSAVerifierTest, BindingOnEveryPathToAPredecessorCounts) {
  // x is bound in the entry, so it is bound at the end of the else side
  // too, although that block itself assigns nothing.
  Diamond diamond(/*elseBindsX=*/false);
  diamond.entry->bindings["x"] = true;
  bool valid = true;
  verified(diamond.build.function, valid);
  EXPECT_FALSE(valid) << "a binding that dominates the predecessor must be seen by the check";
}

TEST(SSAVerifierTest, DeletionUnbindsAgain) {
  Diamond diamond(/*elseBindsX=*/true);
  diamond.otherwise->bindings["x"] = false; // `del x` last
  bool valid = false;
  std::string message = verified(diamond.build.function, valid);
  EXPECT_TRUE(valid) << "after `del x` the variable is unbound: " << message;
}

TEST(SSAVerifierTest, RejectsOperandRemovedFromTheFunction) {
  Diamond diamond(/*elseBindsX=*/false);
  Instr *removed = diamond.build.detached(Op::Phi);
  Instr *use = diamond.build.value(Op::Truth, diamond.merge);
  use->operands = {removed};
  bool valid = true;
  std::string message = verified(diamond.build.function, valid);
  EXPECT_FALSE(valid) << "an operand that is in no block is a dangling value";
  EXPECT_NE(message.find("left %" + std::to_string(use->id) + " using a value it removed"),
            std::string::npos)
      << message;
}

TEST(SSAVerifierTest, RejectsTerminatorUsingARemovedValue) {
  Diamond diamond(/*elseBindsX=*/false);
  diamond.build.returns(diamond.merge, diamond.build.detached(Op::Constant));
  bool valid = true;
  std::string message = verified(diamond.build.function, valid);
  EXPECT_FALSE(valid);
  EXPECT_NE(message.find("the terminator of bb3"), std::string::npos) << message;
}

} // namespace
} // namespace kiln::ssa
