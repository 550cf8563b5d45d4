//===- frontend/parse/ast.h ------------------------------------*- C++ -*-===//
//
// [Note: the AST]
// The parser builds a Python AST for the whole module, including constructs
// kernels may not contain (lambdas, comprehensions, classes, try, with, ...),
// so that semantic analysis can reject them with a precise diagnostic rather
// than a syntax error. Nodes mirror CPython's `ast` module closely; every
// node carries the source range it was parsed from.
//
// Nodes live in an AstContext arena and are never freed one by one, so they
// must be trivially destructible: children are ArrayRefs and strings are
// StringRefs into the arena or the source buffer. Kinds are an enum with
// LLVM-style classof(), so isa<>/cast<>/dyn_cast<> work on them.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/source/source_manager.h"

#include <llvm/ADT/ArrayRef.h>
#include <llvm/ADT/STLFunctionalExtras.h>
#include <llvm/ADT/StringRef.h>
#include <llvm/Support/Allocator.h>
#include <llvm/Support/Casting.h>

#include <cstdint>
#include <type_traits>

namespace kiln::ast {

class Expr;
class Stmt;

//===----------------------------------------------------------------------===//
// Operators
//===----------------------------------------------------------------------===//

enum class BinaryOp : uint8_t {
  Add,
  Sub,
  Mul,
  MatMul,
  TrueDiv,
  FloorDiv,
  Mod,
  Pow,
  LShift,
  RShift,
  BitOr,
  BitXor,
  BitAnd
};
enum class UnaryOp : uint8_t { Negate, Plus, Invert, Not };
enum class CompareOp : uint8_t { Eq, NotEq, Lt, LtE, Gt, GtE, Is, IsNot, In, NotIn };
enum class BoolOpKind : uint8_t { And, Or };

/// Python spelling of an operator ("+", "//", "not in", ...).
llvm::StringRef spelling(BinaryOp op);
llvm::StringRef spelling(UnaryOp op);
llvm::StringRef spelling(CompareOp op);
llvm::StringRef spelling(BoolOpKind op);

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

class Expr {
public:
  enum class Kind : uint8_t {
    Name,
    IntLiteral,
    FloatLiteral,
    ImaginaryLiteral,
    StringLiteral,
    BoolLiteral,
    NoneLiteral,
    EllipsisLiteral,
    Tuple,
    List,
    Set,
    Dict,
    Attribute,
    Subscript,
    Slice,
    Call,
    Unary,
    Binary,
    BoolOp,
    Compare,
    IfExp,
    NamedExpr,
    Starred,
    Lambda,
    Comprehension,
    Yield,
    Await,
  };

  Kind kind() const { return exprKind; }
  SourceRange range() const { return sourceRange; }
  /// Height of this expression's tree. The parser bounds it, so that every
  /// recursive pass over expressions has bounded stack use.
  unsigned depth() const { return treeDepth; }
  void setDepth(unsigned d) { treeDepth = static_cast<uint16_t>(d); }

protected:
  Expr(Kind kind, SourceRange range) : exprKind(kind), sourceRange(range) {}

private:
  Kind exprKind;
  uint16_t treeDepth = 1;
  SourceRange sourceRange;
};

/// Calls `visit` on each direct child expression of `e`, in source order.
void forEachChild(const Expr *e, llvm::function_ref<void(Expr *)> visit);
/// Calls `visit` on `e` and every expression inside it, `e` first.
void forEachSubexpression(Expr *e, llvm::function_ref<void(Expr *)> visit);
/// As forEachSubexpression, but not into the bodies of lambdas (their
/// default values it visits): the expressions a function's own scope
/// evaluates.
void forEachSubexpressionInScope(Expr *e, llvm::function_ref<void(Expr *)> visit);

#define KILN_EXPR_CLASSOF(KIND)                                                                    \
  static bool classof(const Expr *e) {                                                             \
    return e->kind() == Expr::Kind::KIND;                                                          \
  }

class NameExpr : public Expr {
public:
  NameExpr(SourceRange range, llvm::StringRef id) : Expr(Kind::Name, range), id(id) {}
  llvm::StringRef id;
  KILN_EXPR_CLASSOF(Name)
};

/// An integer literal. Python integers are unbounded; Kiln keeps values up
/// to 2**64 - 1 and flags larger literals, which semantic analysis rejects
/// where they are used.
class IntLiteralExpr : public Expr {
public:
  IntLiteralExpr(SourceRange range, uint64_t value, bool tooLarge)
      : Expr(Kind::IntLiteral, range), value(value), tooLarge(tooLarge) {}
  uint64_t value;
  bool tooLarge;
  KILN_EXPR_CLASSOF(IntLiteral)
};

class FloatLiteralExpr : public Expr {
public:
  FloatLiteralExpr(SourceRange range, double value)
      : Expr(Kind::FloatLiteral, range), value(value) {}
  double value;
  KILN_EXPR_CLASSOF(FloatLiteral)
};

/// `2j`, `1.5e3J`: a complex number with zero real part.
class ImaginaryLiteralExpr : public Expr {
public:
  ImaginaryLiteralExpr(SourceRange range, double imag)
      : Expr(Kind::ImaginaryLiteral, range), imag(imag) {}
  double imag;
  KILN_EXPR_CLASSOF(ImaginaryLiteral)
};

/// A string literal after escape processing and concatenation of adjacent
/// literals. Bytes (raw bytes in `value`) and f-strings are flagged;
/// kernels support no f-strings.
class StringLiteralExpr : public Expr {
public:
  StringLiteralExpr(SourceRange range, llvm::StringRef value, bool isBytes, bool isFormatted)
      : Expr(Kind::StringLiteral, range), value(value), isBytes(isBytes), isFormatted(isFormatted) {
  }
  llvm::StringRef value;
  bool isBytes;
  bool isFormatted;
  KILN_EXPR_CLASSOF(StringLiteral)
};

class BoolLiteralExpr : public Expr {
public:
  BoolLiteralExpr(SourceRange range, bool value) : Expr(Kind::BoolLiteral, range), value(value) {}
  bool value;
  KILN_EXPR_CLASSOF(BoolLiteral)
};

class NoneLiteralExpr : public Expr {
public:
  explicit NoneLiteralExpr(SourceRange range) : Expr(Kind::NoneLiteral, range) {}
  KILN_EXPR_CLASSOF(NoneLiteral)
};

class EllipsisLiteralExpr : public Expr {
public:
  explicit EllipsisLiteralExpr(SourceRange range) : Expr(Kind::EllipsisLiteral, range) {}
  KILN_EXPR_CLASSOF(EllipsisLiteral)
};

/// Tuple, list and set displays share one shape.
class SequenceExpr : public Expr {
public:
  SequenceExpr(Kind kind, SourceRange range, llvm::ArrayRef<Expr *> elements, bool parenthesized)
      : Expr(kind, range), elements(elements), parenthesized(parenthesized) {}
  llvm::ArrayRef<Expr *> elements;
  /// False for a bare tuple such as `a, b` or the index in `x[i, j]`.
  bool parenthesized;
  static bool classof(const Expr *e) {
    return e->kind() == Kind::Tuple || e->kind() == Kind::List || e->kind() == Kind::Set;
  }
};

class DictExpr : public Expr {
public:
  DictExpr(SourceRange range, llvm::ArrayRef<Expr *> keys, llvm::ArrayRef<Expr *> values)
      : Expr(Kind::Dict, range), keys(keys), values(values) {}
  llvm::ArrayRef<Expr *> keys; // null key: `**mapping`
  llvm::ArrayRef<Expr *> values;
  KILN_EXPR_CLASSOF(Dict)
};

class AttributeExpr : public Expr {
public:
  AttributeExpr(SourceRange range, Expr *value, llvm::StringRef attr, SourceRange attrRange)
      : Expr(Kind::Attribute, range), value(value), attr(attr), attrRange(attrRange) {}
  Expr *value;
  llvm::StringRef attr;
  SourceRange attrRange;
  KILN_EXPR_CLASSOF(Attribute)
};

/// `value[index]`; a multi-dimensional index is a SequenceExpr of kind Tuple
/// (with parenthesized == false), slices are SliceExprs.
class SubscriptExpr : public Expr {
public:
  SubscriptExpr(SourceRange range, Expr *value, Expr *index)
      : Expr(Kind::Subscript, range), value(value), index(index) {}
  Expr *value;
  Expr *index;
  KILN_EXPR_CLASSOF(Subscript)
};

class SliceExpr : public Expr {
public:
  SliceExpr(SourceRange range, Expr *lower, Expr *upper, Expr *step)
      : Expr(Kind::Slice, range), lower(lower), upper(upper), step(step) {}
  Expr *lower; // each may be null
  Expr *upper;
  Expr *step;
  KILN_EXPR_CLASSOF(Slice)
};

struct Keyword {
  llvm::StringRef name; // empty for `**kwargs`
  SourceRange nameRange;
  Expr *value;
};

class CallExpr : public Expr {
public:
  CallExpr(SourceRange range, Expr *callee, llvm::ArrayRef<Expr *> args,
           llvm::ArrayRef<Keyword> keywords)
      : Expr(Kind::Call, range), callee(callee), args(args), keywords(keywords) {}
  Expr *callee;
  llvm::ArrayRef<Expr *> args; // may contain StarredExpr for `*args`
  llvm::ArrayRef<Keyword> keywords;
  KILN_EXPR_CLASSOF(Call)
};

class UnaryExpr : public Expr {
public:
  UnaryExpr(SourceRange range, UnaryOp op, Expr *operand)
      : Expr(Kind::Unary, range), op(op), operand(operand) {}
  UnaryOp op;
  Expr *operand;
  KILN_EXPR_CLASSOF(Unary)
};

class BinaryExpr : public Expr {
public:
  BinaryExpr(SourceRange range, BinaryOp op, SourceRange opRange, Expr *lhs, Expr *rhs)
      : Expr(Kind::Binary, range), op(op), opRange(opRange), lhs(lhs), rhs(rhs) {}
  BinaryOp op;
  SourceRange opRange;
  Expr *lhs;
  Expr *rhs;
  KILN_EXPR_CLASSOF(Binary)
};

/// `a and b and c`: one node per run of the same operator, as in CPython.
class BoolOpExpr : public Expr {
public:
  BoolOpExpr(SourceRange range, BoolOpKind op, llvm::ArrayRef<Expr *> values)
      : Expr(Kind::BoolOp, range), op(op), values(values) {}
  BoolOpKind op;
  llvm::ArrayRef<Expr *> values;
  KILN_EXPR_CLASSOF(BoolOp)
};

/// `a < b <= c`: ops[i] compares the previous operand with comparators[i].
class CompareExpr : public Expr {
public:
  CompareExpr(SourceRange range, Expr *left, llvm::ArrayRef<CompareOp> ops,
              llvm::ArrayRef<SourceRange> opRanges, llvm::ArrayRef<Expr *> comparators)
      : Expr(Kind::Compare, range), left(left), ops(ops), opRanges(opRanges),
        comparators(comparators) {}
  Expr *left;
  llvm::ArrayRef<CompareOp> ops;
  llvm::ArrayRef<SourceRange> opRanges;
  llvm::ArrayRef<Expr *> comparators;
  KILN_EXPR_CLASSOF(Compare)
};

class IfExpExpr : public Expr {
public:
  IfExpExpr(SourceRange range, Expr *test, Expr *body, Expr *orelse)
      : Expr(Kind::IfExp, range), test(test), body(body), orelse(orelse) {}
  Expr *test;
  Expr *body;
  Expr *orelse;
  KILN_EXPR_CLASSOF(IfExp)
};

/// `target := value`
class NamedExpr : public Expr {
public:
  NamedExpr(SourceRange range, NameExpr *target, Expr *value)
      : Expr(Kind::NamedExpr, range), target(target), value(value) {}
  NameExpr *target;
  Expr *value;
  KILN_EXPR_CLASSOF(NamedExpr)
};

class StarredExpr : public Expr {
public:
  StarredExpr(SourceRange range, Expr *value) : Expr(Kind::Starred, range), value(value) {}
  Expr *value;
  KILN_EXPR_CLASSOF(Starred)
};

class FunctionDefStmt;

/// `lambda x: x + 1`: the function `<lambda>` it makes, whose body returns
/// `body`. In a kernel or device function it compiles as a function defined
/// there (frontend/resolve/nested_functions.h).
class LambdaExpr : public Expr {
public:
  LambdaExpr(SourceRange range, Expr *body, FunctionDefStmt *function)
      : Expr(Kind::Lambda, range), body(body), function(function) {}
  Expr *body;
  FunctionDefStmt *function;
  KILN_EXPR_CLASSOF(Lambda)
};

/// Constructs that kernels cannot contain keep only what a diagnostic needs.

class ComprehensionExpr : public Expr {
public:
  enum class Form : uint8_t { List, Set, Dict, Generator };
  ComprehensionExpr(SourceRange range, Form form, Expr *element)
      : Expr(Kind::Comprehension, range), form(form), element(element) {}
  Form form;
  Expr *element;
  KILN_EXPR_CLASSOF(Comprehension)
};

class YieldExpr : public Expr {
public:
  YieldExpr(SourceRange range, Expr *value) : Expr(Kind::Yield, range), value(value) {}
  Expr *value; // may be null
  KILN_EXPR_CLASSOF(Yield)
};

class AwaitExpr : public Expr {
public:
  AwaitExpr(SourceRange range, Expr *value) : Expr(Kind::Await, range), value(value) {}
  Expr *value;
  KILN_EXPR_CLASSOF(Await)
};

#undef KILN_EXPR_CLASSOF

//===----------------------------------------------------------------------===//
// Statements
//===----------------------------------------------------------------------===//

class Stmt {
public:
  enum class Kind : uint8_t {
    FunctionDef,
    ClassDef,
    Return,
    Assign,
    AugAssign,
    AnnAssign,
    For,
    While,
    If,
    With,
    Try,
    Raise,
    Assert,
    Import,
    ImportFrom,
    Global,
    Nonlocal,
    Delete,
    Pass,
    Break,
    Continue,
    ExprStmt,
  };

  Kind kind() const { return stmtKind; }
  SourceRange range() const { return sourceRange; }

protected:
  Stmt(Kind kind, SourceRange range) : stmtKind(kind), sourceRange(range) {}

private:
  Kind stmtKind;
  SourceRange sourceRange;
};

#define KILN_STMT_CLASSOF(KIND)                                                                    \
  static bool classof(const Stmt *s) {                                                             \
    return s->kind() == Stmt::Kind::KIND;                                                          \
  }

struct Parameter {
  enum class Form : uint8_t { Positional, VarArgs, KeywordOnly, KwArgs };
  llvm::StringRef name;
  SourceRange range;
  Form form;
  Expr *annotation;   // may be null
  Expr *defaultValue; // may be null
};

class FunctionDefStmt : public Stmt {
public:
  FunctionDefStmt(SourceRange range, llvm::StringRef name, SourceRange nameRange,
                  llvm::ArrayRef<Expr *> decorators, llvm::ArrayRef<Parameter> params,
                  Expr *returns, llvm::ArrayRef<Stmt *> body, bool isAsync)
      : Stmt(Kind::FunctionDef, range), name(name), nameRange(nameRange), decorators(decorators),
        params(params), returns(returns), body(body), isAsync(isAsync) {}
  llvm::StringRef name;
  SourceRange nameRange;
  llvm::ArrayRef<Expr *> decorators;
  llvm::ArrayRef<Parameter> params;
  Expr *returns;
  llvm::ArrayRef<Stmt *> body;
  bool isAsync;
  KILN_STMT_CLASSOF(FunctionDef)
};

class ClassDefStmt : public Stmt {
public:
  ClassDefStmt(SourceRange range, llvm::StringRef name, SourceRange nameRange,
               llvm::ArrayRef<Expr *> bases, llvm::ArrayRef<Stmt *> body)
      : Stmt(Kind::ClassDef, range), name(name), nameRange(nameRange), bases(bases), body(body) {}
  llvm::StringRef name;
  SourceRange nameRange;
  /// The positional arguments of `class Name(...)` (keywords are dropped).
  llvm::ArrayRef<Expr *> bases;
  llvm::ArrayRef<Stmt *> body;
  KILN_STMT_CLASSOF(ClassDef)
};

class ReturnStmt : public Stmt {
public:
  ReturnStmt(SourceRange range, Expr *value) : Stmt(Kind::Return, range), value(value) {}
  Expr *value; // may be null
  KILN_STMT_CLASSOF(Return)
};

/// `a = b = value`: several targets share one value.
class AssignStmt : public Stmt {
public:
  AssignStmt(SourceRange range, llvm::ArrayRef<Expr *> targets, Expr *value)
      : Stmt(Kind::Assign, range), targets(targets), value(value) {}
  llvm::ArrayRef<Expr *> targets;
  Expr *value;
  KILN_STMT_CLASSOF(Assign)
};

class AugAssignStmt : public Stmt {
public:
  AugAssignStmt(SourceRange range, Expr *target, BinaryOp op, SourceRange opRange, Expr *value)
      : Stmt(Kind::AugAssign, range), target(target), op(op), opRange(opRange), value(value) {}
  Expr *target;
  BinaryOp op;
  SourceRange opRange;
  Expr *value;
  KILN_STMT_CLASSOF(AugAssign)
};

class AnnAssignStmt : public Stmt {
public:
  AnnAssignStmt(SourceRange range, Expr *target, Expr *annotation, Expr *value)
      : Stmt(Kind::AnnAssign, range), target(target), annotation(annotation), value(value) {}
  Expr *target;
  Expr *annotation;
  Expr *value; // may be null
  KILN_STMT_CLASSOF(AnnAssign)
};

class ForStmt : public Stmt {
public:
  ForStmt(SourceRange range, Expr *target, Expr *iter, llvm::ArrayRef<Stmt *> body,
          llvm::ArrayRef<Stmt *> orelse, bool isAsync)
      : Stmt(Kind::For, range), target(target), iter(iter), body(body), orelse(orelse),
        isAsync(isAsync) {}
  Expr *target;
  Expr *iter;
  llvm::ArrayRef<Stmt *> body;
  llvm::ArrayRef<Stmt *> orelse;
  bool isAsync;
  KILN_STMT_CLASSOF(For)
};

class WhileStmt : public Stmt {
public:
  WhileStmt(SourceRange range, Expr *test, llvm::ArrayRef<Stmt *> body,
            llvm::ArrayRef<Stmt *> orelse)
      : Stmt(Kind::While, range), test(test), body(body), orelse(orelse) {}
  Expr *test;
  llvm::ArrayRef<Stmt *> body;
  llvm::ArrayRef<Stmt *> orelse;
  KILN_STMT_CLASSOF(While)
};

/// `if`/`elif`/`else`; an `elif` is an IfStmt alone in the orelse list.
class IfStmt : public Stmt {
public:
  IfStmt(SourceRange range, Expr *test, llvm::ArrayRef<Stmt *> body, llvm::ArrayRef<Stmt *> orelse)
      : Stmt(Kind::If, range), test(test), body(body), orelse(orelse) {}
  Expr *test;
  llvm::ArrayRef<Stmt *> body;
  llvm::ArrayRef<Stmt *> orelse;
  KILN_STMT_CLASSOF(If)
};

/// `with`, `try`, `global`, `nonlocal`: parsed so that they can be rejected
/// precisely; only the keyword's range and the nested body matter.
class BlockStmt : public Stmt {
public:
  BlockStmt(Kind kind, SourceRange range, SourceRange keywordRange, llvm::ArrayRef<Stmt *> body)
      : Stmt(kind, range), keywordRange(keywordRange), body(body) {}
  SourceRange keywordRange;
  llvm::ArrayRef<Stmt *> body;
  static bool classof(const Stmt *s) {
    return s->kind() == Kind::With || s->kind() == Kind::Try || s->kind() == Kind::Global ||
           s->kind() == Kind::Nonlocal;
  }
};

class RaiseStmt : public Stmt {
public:
  RaiseStmt(SourceRange range, Expr *exception, Expr *cause)
      : Stmt(Kind::Raise, range), exception(exception), cause(cause) {}
  Expr *exception; // may be null (bare re-raise)
  Expr *cause;     // may be null
  KILN_STMT_CLASSOF(Raise)
};

class AssertStmt : public Stmt {
public:
  AssertStmt(SourceRange range, Expr *test, Expr *message)
      : Stmt(Kind::Assert, range), test(test), message(message) {}
  Expr *test;
  Expr *message; // may be null
  KILN_STMT_CLASSOF(Assert)
};

/// One `name [as alias]` of an import statement. For `import a.b.c` the
/// name is the dotted path.
struct ImportAlias {
  llvm::StringRef name;
  llvm::StringRef asName; // empty when absent
  SourceRange range;
};

class ImportStmt : public Stmt {
public:
  ImportStmt(SourceRange range, llvm::ArrayRef<ImportAlias> names)
      : Stmt(Kind::Import, range), names(names) {}
  llvm::ArrayRef<ImportAlias> names;
  KILN_STMT_CLASSOF(Import)
};

class ImportFromStmt : public Stmt {
public:
  ImportFromStmt(SourceRange range, llvm::StringRef module, SourceRange moduleRange, unsigned level,
                 llvm::ArrayRef<ImportAlias> names, bool isStar)
      : Stmt(Kind::ImportFrom, range), module(module), moduleRange(moduleRange), level(level),
        names(names), isStar(isStar) {}
  llvm::StringRef module; // empty for `from . import x`
  SourceRange moduleRange;
  unsigned level; // number of leading dots
  llvm::ArrayRef<ImportAlias> names;
  bool isStar;
  KILN_STMT_CLASSOF(ImportFrom)
};

class DeleteStmt : public Stmt {
public:
  DeleteStmt(SourceRange range, llvm::ArrayRef<Expr *> targets)
      : Stmt(Kind::Delete, range), targets(targets) {}
  llvm::ArrayRef<Expr *> targets;
  KILN_STMT_CLASSOF(Delete)
};

/// `pass`, `break`, `continue`.
class SimpleStmt : public Stmt {
public:
  SimpleStmt(Kind kind, SourceRange range) : Stmt(kind, range) {}
  static bool classof(const Stmt *s) {
    return s->kind() == Kind::Pass || s->kind() == Kind::Break || s->kind() == Kind::Continue;
  }
};

class ExprStmt : public Stmt {
public:
  ExprStmt(SourceRange range, Expr *value) : Stmt(Kind::ExprStmt, range), value(value) {}
  Expr *value;
  KILN_STMT_CLASSOF(ExprStmt)
};

/// The statement lists a compound statement runs in its own scope: a loop's
/// body and `else`, a branch's body and `else`, the body of `with` and
/// `try`; none for other statements (functions and classes have scopes of
/// their own).
llvm::SmallVector<llvm::ArrayRef<Stmt *>, 2> nestedBodies(const Stmt *stmt);

/// Calls `visit` on every statement in `body` and, after each compound
/// statement, on those in its bodies (loops, branches, `with`, `try`), in
/// source order; not on those of the functions and classes it defines,
/// which have scopes of their own.
void forEachStatement(llvm::ArrayRef<Stmt *> body, llvm::function_ref<void(const Stmt *)> visit);

/// Whether forEachExpression goes into the bodies of the functions defined
/// in the statements, lambdas' included (their decorators and defaults it
/// visits either way).
enum class FunctionBodies : uint8_t { Visit, Skip };

/// Calls `visit` on every expression of the statements in `body` and of the
/// statements nested in them (bodies of loops, branches, `with`, `try`,
/// functions and classes), each before the expressions inside it, in source
/// order.
void forEachExpression(llvm::ArrayRef<Stmt *> body, llvm::function_ref<void(Expr *)> visit,
                       FunctionBodies functionBodies = FunctionBodies::Visit);

#undef KILN_STMT_CLASSOF

/// A parsed source file.
struct Module {
  uint32_t file = 0;
  llvm::ArrayRef<Stmt *> body;
};

//===----------------------------------------------------------------------===//
// Arena
//===----------------------------------------------------------------------===//

/// Owns the nodes of one or more parsed files.
class AstContext {
public:
  template <typename T, typename... Args> T *create(Args &&...args) {
    static_assert(std::is_trivially_destructible_v<T>, "AST nodes are never destroyed");
    void *memory = allocator.Allocate(sizeof(T), alignof(T));
    return new (memory) T(std::forward<Args>(args)...);
  }

  template <typename T> llvm::ArrayRef<T> copyArray(llvm::ArrayRef<T> items) {
    static_assert(std::is_trivially_destructible_v<T>, "AST arrays are never destroyed");
    if (items.empty())
      return {};
    T *memory = allocator.Allocate<T>(items.size());
    std::uninitialized_copy(items.begin(), items.end(), memory);
    return {memory, items.size()};
  }

  llvm::StringRef copyString(llvm::StringRef text) {
    if (text.empty())
      return {};
    char *memory = allocator.Allocate<char>(text.size());
    std::copy(text.begin(), text.end(), memory);
    return {memory, text.size()};
  }

private:
  llvm::BumpPtrAllocator allocator;
};

} // namespace kiln::ast
