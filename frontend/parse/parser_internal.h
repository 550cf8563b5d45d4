//===- frontend/parse/parser_internal.h - The parser's state ---*- C++ -*-===//
//
// Shared between parse_statements.cpp and parse_expressions.cpp; not part of
// the front end's interface.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/parse/ast.h"
#include "frontend/parse/token.h"
#include "frontend/source/diagnostics.h"

#include <llvm/ADT/SmallString.h>
#include <llvm/ADT/SmallVector.h>

#include <vector>

namespace kiln::parse {

/// Thrown-free error propagation inside the parser: a parse function that
/// fails reports a diagnostic and returns null; the statement loop then
/// skips to the next line.
class Parser {
public:
  Parser(std::vector<Token> tokens, ast::AstContext &context, DiagnosticEngine &diags)
      : tokens(std::move(tokens)), context(context), diags(diags) {}

  ast::Module parseFile(uint32_t file);
  ast::Expr *parseLoneExpression();

private:
  //===--- Token stream ---===//
  const Token &current() const { return tokens[position]; }
  const Token &peekToken(size_t ahead = 1) const {
    return tokens[std::min(position + ahead, tokens.size() - 1)];
  }
  const Token &previous() const { return tokens[position ? position - 1 : 0]; }
  bool at(TokenKind kind) const { return current().kind == kind; }
  const Token &consume() {
    const Token &token = tokens[position];
    if (position + 1 < tokens.size())
      ++position;
    return token;
  }
  bool tryConsume(TokenKind kind) {
    if (!at(kind))
      return false;
    consume();
    return true;
  }
  /// Consumes `kind` or reports "expected 'X'" and returns false.
  bool expect(TokenKind kind);
  void reportUnexpected();
  /// Where to point a "missing" diagnostic at the current token.
  SourceRange errorRange() const;
  void skipToEndOfLine();
  SourceRange rangeFrom(SourceLoc begin) const { return {begin, previous().range.end}; }

  //===--- Statements (parse_statements.cpp) ---===//
  void parseStatementInto(llvm::SmallVectorImpl<ast::Stmt *> &out);
  bool parseSimpleStatementsInto(llvm::SmallVectorImpl<ast::Stmt *> &out);
  ast::Stmt *parseSimpleStatement();
  ast::Stmt *parseCompoundStatement();
  llvm::ArrayRef<ast::Stmt *> parseBlock(llvm::StringRef what, const Token &opener);
  ast::Stmt *parseIf(SourceLoc begin);
  ast::Stmt *parseWhile();
  ast::Stmt *parseFor(SourceLoc begin, bool isAsync);
  ast::Stmt *parseDecorated();
  ast::Stmt *parseFunctionDef(SourceLoc begin, llvm::ArrayRef<ast::Expr *> decorators,
                              bool isAsync);
  ast::Stmt *parseClassDef(SourceLoc begin);
  ast::Stmt *parseWith(SourceLoc begin);
  ast::Stmt *parseTry();
  ast::Stmt *parseExpressionStatement();
  ast::Stmt *parseImport();
  ast::Stmt *parseImportFrom();
  bool parseDottedName(llvm::SmallString<64> &name);
  bool parseParameters(TokenKind closer, bool allowAnnotations,
                       llvm::SmallVectorImpl<ast::Parameter> &params);
  bool checkAssignable(ast::Expr *target, bool augmented);

  //===--- Expressions (parse_expressions.cpp) ---===//
  ast::Expr *parseTestList();         // `a, b` as a tuple, or one expression
  ast::Expr *parseTestListStarExpr(); // assignment right-hand sides
  ast::Expr *parseNamedExprTest();    // test [':=' test]
  ast::Expr *parseTest();             // conditional expression or lambda
  ast::Expr *parseTestNoCond();
  ast::Expr *parseLambda();
  ast::Expr *parseOrTest();
  ast::Expr *parseAndTest();
  ast::Expr *parseNotTest();
  ast::Expr *parseComparison();
  ast::Expr *parseStarExpr();
  ast::Expr *parseBinaryLevel(unsigned level);
  ast::Expr *parseFactor();
  ast::Expr *parsePower();
  ast::Expr *parseAwaitPrimary();
  ast::Expr *parseAtom();
  ast::Expr *parseTrailers(ast::Expr *base);
  ast::Expr *parseParenthesized();
  ast::Expr *parseListDisplay();
  ast::Expr *parseBraceDisplay();
  ast::Expr *parseCallArguments(ast::Expr *callee);
  ast::Expr *parseSubscriptIndex();
  ast::Expr *parseSliceItem();
  ast::Expr *parseStrings();
  ast::Expr *parseNumber();
  ast::Expr *parseYield();
  bool skipComprehensionClauses();
  ast::Expr *parseExprList(); // `for` targets

  /// Stamps `node` with its tree depth, rejecting trees deeper than the
  /// front end allows. Every expression node passes through here.
  template <typename T> T *finish(T *node);
  template <typename T, typename... Args> T *make(Args &&...args) {
    return finish(context.create<T>(std::forward<Args>(args)...));
  }
  template <typename T> llvm::ArrayRef<T> copy(const llvm::SmallVectorImpl<T> &items) {
    return context.copyArray(llvm::ArrayRef<T>(items));
  }

  /// Bounds recursion through nested constructs (unary chains, lambdas,
  /// parentheses) independently of the token-level bracket limit.
  class DepthGuard {
  public:
    explicit DepthGuard(Parser &parser) : parser(parser) { ++parser.nesting; }
    ~DepthGuard() { --parser.nesting; }
    bool tooDeep() const { return parser.nesting > maxNesting; }

  private:
    Parser &parser;
  };
  static constexpr unsigned maxNesting = 1000;
  /// The deepest expression tree, as CPython's compiler bounds it (it
  /// compiles `x + x + ... + x` of 2,989 terms, not 2,990). A left-associative
  /// chain is parsed in a loop, but every later stage walks the tree
  /// recursively, so its length counts here as nesting does.
  static constexpr unsigned maxExprDepth = 3000;

  std::vector<Token> tokens;
  size_t position = 0;
  ast::AstContext &context;
  DiagnosticEngine &diags;
  unsigned nesting = 0;
  /// Set after a depth diagnostic so that it is reported once per statement.
  bool depthReported = false;

  /// Reports that an expression nests too deeply at `range` (once per
  /// statement) and returns null, for the parse to give up on it.
  ast::Expr *expressionTooDeep(SourceRange range) {
    if (!depthReported)
      diags.report(DiagID::err_expression_too_deep, range);
    depthReported = true;
    return nullptr;
  }
};

template <typename T> T *Parser::finish(T *node) {
  unsigned deepest = 0;
  ast::forEachChild(node, [&](ast::Expr *child) { deepest = std::max(deepest, child->depth()); });
  node->setDepth(std::min(deepest + 1, maxExprDepth + 1));
  return node;
}

} // namespace kiln::parse
