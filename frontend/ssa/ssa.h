//===- frontend/ssa/ssa.h - Untyped SSA form of a function -----*- C++ -*-===//
//
// [Note: untyped SSA]
// Between the AST and the typed IR, each function is put in SSA form with
// Python's operations still generic ("a + b", "x[i]", "f(a, k=b)"), as in
// Numba's own IR. Variables become values: every assignment defines a new
// value and control-flow merges get phis (built on demand with Braun et
// al.'s algorithm, so a variable only gets a phi where a later read needs
// one, which is also where Numba unifies types). Type inference then assigns
// a type to every value, and emit_typed_ir turns the result into the typed
// IR that the back end compiles.
//
// This form is internal to the front end.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/parse/ast.h"
#include "frontend/resolve/module_scope.h"
#include "ir/constant_value.h"

#include <llvm/ADT/DenseSet.h>
#include <llvm/ADT/SmallVector.h>
#include <llvm/ADT/StringMap.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kiln::ssa {

class Block;

enum class Op : uint8_t {
  Argument,  // index: parameter position
  Constant,  // constant: the value
  Global,    // global: a module-level binding (builtin symbol, function, ...)
  Undefined, // a variable read before any assignment on some path
  Phi,       // operands[i] flows in from incoming[i]
  Binary,    // binaryOp(operands[0], operands[1]); also `x op= y`
  Unary,     // unaryOp(operands[0])
  Compare,   // compareOp(operands[0], operands[1])
  Truth,     // bool(operands[0]), for conditions
  GetAttr,   // operands[0].name
  SetAttr,   // operands[0].name = operands[1]
  GetItem,   // operands[0][operands[1]]
  SetItem,   // operands[0][operands[1]] = operands[2]
  Call,      // operands[0](operands[1..]); the last keywordNames.size() are keywords;
             // a starred operand (`f(*t)`) is a tuple whose items are arguments
  BuildTuple,
  BuildSlice, // slice(operands[0..2]); missing parts are None constants
  TupleGet,   // operands[0][index], for unpacking `a, b = t`
  // A `for` loop over operands[0] runs IterCount(iterable) times, with the
  // counter starting at LoopStart, advanced by LoopNext and checked by
  // LoopTest; IterItem(iterable, counter) is the value of each iteration.
  IterCount,
  IterItem,
  LoopStart, // operand: the count (for its type)
  LoopNext,  // operand: the counter
  LoopTest,  // counter < count
  Assert,    // assert operands[0], operands[1] (message, optional)
  Closure,   // function: a function defined in this one (or an enclosing
             // one), with the current values of its captures as operands
};

class Instr {
public:
  Instr(Op op, unsigned id, SourceRange range) : op(op), id(id), range(range) {}

  Op op;
  unsigned id;
  SourceRange range;
  Block *block = nullptr;
  llvm::SmallVector<Instr *, 3> operands;
  /// Where each operand was written, for calls: diagnostics about an
  /// argument point at it, not at its definition.
  llvm::SmallVector<SourceRange, 3> operandRanges;

  ast::BinaryOp binaryOp = ast::BinaryOp::Add;
  ast::UnaryOp unaryOp = ast::UnaryOp::Negate;
  ast::CompareOp compareOp = ast::CompareOp::Eq;
  std::string name;                       // GetAttr / SetAttr / Undefined variable
  std::vector<std::string> keywordNames;  // Call
  llvm::SmallVector<unsigned, 1> starred; // Call: the operands written `*t`, ascending
  unsigned index = 0;                     // Argument, TupleGet
  std::optional<ConstantValue> constant;  // Constant
  bool fromLiteral = false;               // Constant written as a literal in the source
  bool deleted = false;                   // Undefined: unbound by `del`, not unassigned
  const ModuleValue *global = nullptr;    // Global
  const FunctionDecl *function = nullptr; // Closure
  llvm::SmallVector<Block *, 2> incoming; // Phi

  bool isPhi() const { return op == Op::Phi; }
};

struct Terminator {
  enum class Kind : uint8_t { None, Jump, Branch, Return, Raise };
  Kind kind = Kind::None;
  Instr *value = nullptr;       // Branch condition, Return value, Raise exception
  Block *target = nullptr;      // Jump, or Branch when true
  Block *falseTarget = nullptr; // Branch when false
  SourceRange range;
};

class Block {
public:
  explicit Block(unsigned id) : id(id) {}
  unsigned id;
  std::vector<Instr *> phis;
  std::vector<Instr *> instrs;
  Terminator terminator;
  std::vector<Block *> predecessors;
  /// Each variable the block's own code assigns (true) or deletes (false)
  /// last: what the program binds, as opposed to what the phis say.
  llvm::StringMap<bool> bindings;

  bool isTerminated() const { return terminator.kind != Terminator::Kind::None; }
  llvm::SmallVector<Block *, 2> successors() const;
};

/// A source variable's value at one of its definitions: an assignment, a
/// parameter, or a phi merging several. `kiln check -v` reports the types of
/// all of them, as Numba's typemap does for x, x.1, x.2, ...
struct VariableDef {
  std::string name;
  Instr *value;
  SourceRange range;
};

class Function {
public:
  const FunctionDecl *decl = nullptr;
  std::vector<std::unique_ptr<Block>> blocks; // blocks[0] is the entry
  std::vector<std::unique_ptr<Instr>> instrs;
  std::vector<Instr *> arguments;
  /// Undefined values live outside any block, like constants in LLVM.
  std::vector<Instr *> undefinedValues;
  std::vector<VariableDef> variables;
  /// Values Numba's dead-branch pruning before its SSA form cannot
  /// evaluate, so decides no branch on: merges, values bound to a variable
  /// the function assigns more than once (it has no single definition
  /// there), and what is computed from either.
  llvm::DenseSet<const Instr *> unknownBeforeSSA;

  Block *entry() const { return blocks.front().get(); }
  /// Blocks in reverse post-order from the entry.
  std::vector<Block *> reversePostOrder() const;
  void print(llvm::raw_ostream &os) const;
};

/// Builds the SSA form of a decorated function's body. Reports diagnostics
/// for constructs kernels cannot contain; returns null if there were any.
std::unique_ptr<Function> buildSSA(const FunctionDecl &decl, const ModuleScope &scope,
                                   TypeContext &types, DiagnosticEngine &diags);

/// Checks a built function: every operand is a value still in the function,
/// and a phi takes a variable as unbound from a predecessor only if some
/// path from the entry reaches that predecessor's end without binding it
/// (else the back end would read an undefined value where the program has a
/// real one). Reports an internal error and returns false otherwise.
bool verifySSA(const Function &fn, DiagnosticEngine &diags);

} // namespace kiln::ssa
