//===- frontend/ssa/ssa_builder.h - Building the SSA form -------*- C++ -*-===//
//
// The class behind buildSSA(), shared by the files that build each part of
// a function's SSA form: the construction itself, blocks, variables and
// phis (build_ssa.cpp); the names a function reads, its locals, the
// functions defined in it and module-level values (ssa_names.cpp);
// statements (ssa_statements.cpp); conditions, branches and loops
// (ssa_control_flow.cpp); expressions (ssa_expressions.cpp). One SSABuilder
// walks one function body once.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/ssa/ssa.h"

#include <llvm/ADT/DenseMap.h>
#include <llvm/ADT/DenseSet.h>
#include <llvm/ADT/SmallPtrSet.h>
#include <llvm/ADT/StringSet.h>

#include <functional>
#include <optional>

namespace kiln::ssa {

/// Whether `value`, built from `expr`, is what CPython folds when it
/// compiles: a literal, or operators applied to literals; not a name, even
/// of a variable that holds a literal.
inline bool isLiteral(const Instr *value, const ast::Expr *expr) {
  return value->op == Op::Constant && value->fromLiteral && !llvm::isa<ast::NameExpr>(expr);
}

class SSABuilder {
public:
  SSABuilder(Function &fn, const ModuleScope &scope, TypeContext &types, DiagnosticEngine &diags)
      : fn(fn), scope(scope), types(types), diags(diags) {}

  bool build();

private:
  //===--- Blocks and instructions ---===//
  Block *newBlock() {
    fn.blocks.push_back(std::make_unique<Block>(static_cast<unsigned>(fn.blocks.size())));
    return fn.blocks.back().get();
  }
  Instr *newInstr(Op op, SourceRange range) {
    fn.instrs.push_back(
        std::make_unique<Instr>(op, static_cast<unsigned>(fn.instrs.size()), range));
    return fn.instrs.back().get();
  }
  /// Statements after a `return`, `break` or `continue` land in a fresh
  /// block that nothing jumps to; it is dropped after building.
  void ensureOpenBlock() {
    if (current->isTerminated()) {
      current = newBlock();
      sealed.insert(current);
    }
  }
  Instr *emit(Op op, SourceRange range, llvm::ArrayRef<Instr *> operands = {}) {
    ensureOpenBlock();
    Instr *instr = newInstr(op, range);
    instr->operands.assign(operands.begin(), operands.end());
    instr->block = current;
    current->instrs.push_back(instr);
    return instr;
  }
  Instr *emitConstant(ConstantValue value, SourceRange range, bool fromLiteral) {
    Instr *instr = emit(Op::Constant, range);
    instr->constant = std::move(value);
    instr->fromLiteral = fromLiteral;
    return instr;
  }
  void addEdge(Block *from, Block *to) { to->predecessors.push_back(from); }
  void jump(Block *to, SourceRange range) {
    if (current->isTerminated())
      return;
    current->terminator = {Terminator::Kind::Jump, nullptr, to, nullptr, range};
    addEdge(current, to);
  }
  void branch(Instr *condition, Block *ifTrue, Block *ifFalse, SourceRange range) {
    ensureOpenBlock();
    current->terminator = {Terminator::Kind::Branch, condition, ifTrue, ifFalse, range};
    addEdge(current, ifTrue);
    addEdge(current, ifFalse);
  }
  /// Drops the blocks nothing reaches (code after return, break or
  /// continue): the phis of live blocks forget what flowed in from them,
  /// and those left merging one value go.
  void removeUnreachableBlocks();
  void removeUnusedConstants();
  void findUnknownBeforeSSA();

  //===--- Variables (Braun et al., build_ssa.cpp) ---===//
  void writeVariable(llvm::StringRef name, Block *block, Instr *value) {
    currentDef[block][name] = value;
  }
  /// An assignment (or a `del`, binding an Undefined) in the program, as
  /// opposed to writeVariable's caching of what a read found.
  void bindVariable(llvm::StringRef name, Block *block, Instr *value) {
    writeVariable(name, block, value);
    block->bindings[name] = value->op != Op::Undefined;
  }
  Instr *readVariable(llvm::StringRef name, Block *block, SourceRange range);
  Instr *readVariableRecursive(llvm::StringRef name, Block *block, SourceRange range);
  Instr *addPhiOperands(llvm::StringRef name, Instr *phi, SourceRange range);
  Instr *tryRemoveTrivialPhi(Instr *phi);
  /// What a removed phi stands for now (following chains of removals); any
  /// other value is itself.
  Instr *resolve(Instr *value) const;
  void replaceAllUses(Instr *from, Instr *to);
  void sealBlock(Block *block);
  Instr *emitCompare(Instr *lhs, Instr *rhs, ast::CompareOp op, SourceRange range) {
    Instr *instr = emit(Op::Compare, range, {lhs, rhs});
    instr->compareOp = op;
    return instr;
  }
  Instr *undefined(llvm::StringRef name, SourceRange range) {
    Instr *instr = newInstr(Op::Undefined, range);
    instr->name = name.str();
    fn.undefinedValues.push_back(instr);
    return instr;
  }
  void assignVariable(llvm::StringRef name, Instr *value, SourceRange range) {
    ensureOpenBlock();
    bindVariable(name, current, value);
    fn.variables.push_back({name.str(), value, range});
  }

  //===--- Names (ssa_names.cpp) ---===//
  /// Sorts the names of the function `def`: its local variables, the
  /// functions defined in it and the variables that name them, and the
  /// names bound by statements kernels cannot contain.
  void collectLocalNames(const ast::FunctionDefStmt &def);
  Instr *buildName(const ast::NameExpr *name);
  /// A module-level value read as `path` (a global's name, or a dotted
  /// path into source modules): a constant frozen into the kernel, else a
  /// Global.
  Instr *buildGlobal(const ModuleValue *global, llvm::StringRef path, SourceRange range);
  /// The function `function`, defined in this one or captured by it, with
  /// its captures' current values.
  Instr *buildClosure(const FunctionDecl &function, SourceRange range);
  /// The function defined here that `value` (a lambda, or a name) makes.
  const FunctionDecl *functionMadeBy(const ast::Expr *value) const;
  void findFunctionAliases(const ast::FunctionDefStmt &def);
  /// The dotted path `expr` spells if it names a module-level value: a name
  /// no local hides, or attributes of source modules from one (`config`,
  /// `config.THRESHOLD`, `pkg.sub.clamp`); "" for anything else.
  std::string modulePath(const ast::Expr *expr) const;
  /// The module-level enum `expr` names, if it names one.
  const EnumDefinition *enumNamed(const ast::Expr *expr) const;
  /// A member of an enum the module defines, as written: `Color.RED` or
  /// `Color["RED"]`, and where a missing member is reported.
  struct EnumMemberRef {
    const EnumDefinition *enumeration;
    llvm::StringRef name;
    SourceRange nameRange;
  };
  std::optional<EnumMemberRef> enumMemberRef(const ast::Expr *expr);
  /// The member (`Color.RED`), or its value (`Color.RED.value`), frozen into
  /// the kernel like a module constant.
  Instr *buildEnumMember(const EnumMemberRef &member, SourceRange range, bool valueOnly);

  //===--- Statements (ssa_statements.cpp) ---===//
  void buildBody(llvm::ArrayRef<ast::Stmt *> body);
  void buildStmt(const ast::Stmt *stmt);
  void buildAssignTarget(const ast::Expr *target, Instr *value, SourceRange range);
  void buildAugAssign(const ast::AugAssignStmt *stmt);
  void buildReturn(const ast::ReturnStmt *stmt);
  void buildRaise(const ast::RaiseStmt *stmt);

  //===--- Conditions, branches and loops (ssa_control_flow.cpp) ---===//
  void buildCondition(const ast::Expr *test, Block *ifTrue, Block *ifFalse);
  void buildIf(const ast::IfStmt *stmt);
  void buildWhile(const ast::WhileStmt *stmt);
  void buildFor(const ast::ForStmt *stmt);
  /// What a `for` loop goes over: how many times, and the item at a
  /// counter. enumerate() and zip(), of anything a loop goes over (each
  /// other included), count with their iterables' counters, as Numba's do.
  struct IterationPlan {
    Instr *count;
    std::function<Instr *(Instr *counter)> item;
  };
  std::optional<IterationPlan> planIteration(const ast::Expr *iter);
  /// Whether `expr` calls Python's builtin `name` (no variable or global
  /// of the module hides it) with positional arguments and, at most, the
  /// keyword `keyword`.
  const ast::CallExpr *builtinCall(const ast::Expr *expr, llvm::StringRef name,
                                   llvm::StringRef keyword);
  /// The smaller of two counts, as a branch and a phi.
  Instr *smallerCount(Instr *a, Instr *b, SourceRange range);

  //===--- Expressions (ssa_expressions.cpp) ---===//
  Instr *buildExpr(const ast::Expr *expr);
  Instr *buildBinary(const ast::BinaryExpr *binary);
  Instr *buildUnary(const ast::UnaryExpr *unary);
  Instr *buildCompare(const ast::CompareExpr *compare);
  Instr *buildBoolOp(const ast::BoolOpExpr *boolOp);
  /// Whether every path of the `and` (`or`) buildBoolOp built last ends on
  /// a falsy (truthy) literal or short-circuits: CPython's compiler then
  /// knows where it goes.
  bool lastBoolOpShortCircuits = false;
  Instr *buildIfExp(const ast::IfExpExpr *ifExp);
  Instr *buildCall(const ast::CallExpr *call);
  Instr *buildSubscriptIndex(const ast::Expr *index);
  Instr *buildTuple(const ast::SequenceExpr *tuple);
  Instr *truth(Instr *value, SourceRange range) { return emit(Op::Truth, range, {value}); }
  Instr *unsupported(DiagID id, SourceRange range, std::initializer_list<DiagArg> args = {}) {
    diags.report(id, range, args);
    failed = true;
    return nullptr;
  }

  Function &fn;
  const ModuleScope &scope;
  TypeContext &types;
  DiagnosticEngine &diags;
  Block *current = nullptr;
  llvm::StringSet<> locals;
  llvm::StringSet<> unsupportedBindings;
  /// The functions defined in this one, by name, and the names of those
  /// whose definitions were reported.
  llvm::StringMap<const FunctionDecl *> nestedFunctions;
  /// The functions defined in this one, by their definitions (a `def`'s,
  /// or the one a lambda makes).
  llvm::DenseMap<const ast::FunctionDefStmt *, const FunctionDecl *> functionsByDefinition;
  /// Variables assigned once, and that a lambda or a function defined here
  /// (`f = lambda v: v * k`, `g = inner`): reading one makes the function
  /// anew, with what it captures as it is then, as the function's own name
  /// does.
  llvm::StringMap<const FunctionDecl *> functionAliases;
  llvm::StringSet<> undeclaredFunctions;
  llvm::SmallPtrSet<const FunctionDecl *, 4> closuresBeingBuilt;
  llvm::DenseMap<Block *, llvm::StringMap<Instr *>> currentDef;
  llvm::DenseSet<Block *> sealed;
  llvm::DenseMap<Block *, std::vector<std::pair<std::string, Instr *>>> incompletePhis;
  llvm::DenseSet<Instr *> phisUnderConstruction;
  /// Removed trivial phis and the values that replaced them. Callers up the
  /// recursion may still hold a removed phi; they look it up here.
  llvm::DenseMap<Instr *, Instr *> replacements;
  struct LoopTargets {
    Block *continueTarget;
    Block *breakTarget;
  };
  std::vector<LoopTargets> loops;
  unsigned hiddenCounter = 0;
  bool failed = false;
};

} // namespace kiln::ssa
