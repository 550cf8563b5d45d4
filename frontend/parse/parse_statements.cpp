//===- frontend/parse/parse_statements.cpp - Python statements ------------===//
//
// Statements, blocks and the module. After a syntax error the statement is
// dropped and parsing resumes at the next line, so one run reports several
// errors; errors in a block's header drop the whole block.
//
//===----------------------------------------------------------------------===//

#include "frontend/parse/lexer.h"
#include "frontend/parse/parser.h"
#include "frontend/parse/parser_internal.h"

#include <llvm/ADT/SmallString.h>

namespace kiln {

namespace parse {

using namespace ast;

//===--- Token stream helpers ---===//

SourceRange Parser::errorRange() const {
  // Something missing at the end of a line is reported right after the last
  // token, not after a trailing comment.
  if ((at(TokenKind::Newline) || at(TokenKind::EndOfFile) || at(TokenKind::Dedent)) && position > 0)
    return SourceRange(previous().range.end, previous().range.end);
  return current().range;
}

bool Parser::expect(TokenKind kind) {
  if (tryConsume(kind))
    return true;
  if (at(TokenKind::Invalid))
    return false; // the lexer already explained this token
  diags.report(DiagID::err_expected_token, errorRange(),
               {describeTokenKind(kind), describeTokenKind(current().kind)});
  return false;
}

void Parser::reportUnexpected() {
  const Token &token = current();
  switch (token.kind) {
  case TokenKind::Invalid:
    return; // the lexer already reported it
  case TokenKind::Indent:
    diags.report(DiagID::err_unexpected_indent, token.range);
    return;
  case TokenKind::Newline:
  case TokenKind::EndOfFile:
  case TokenKind::Dedent:
    diags.report(DiagID::err_expected_expression, errorRange());
    return;
  default:
    diags.report(DiagID::err_invalid_syntax, token.range);
    return;
  }
}

void Parser::skipToEndOfLine() {
  auto skipBlock = [&] {
    unsigned depth = 1;
    consume(); // indent
    while (depth && !at(TokenKind::EndOfFile)) {
      TokenKind inner = consume().kind;
      depth += inner == TokenKind::Indent;
      depth -= inner == TokenKind::Dedent;
    }
  };
  while (!at(TokenKind::EndOfFile)) {
    if (at(TokenKind::Indent)) {
      skipBlock();
      return;
    }
    if (consume().kind == TokenKind::Newline) {
      // A broken compound statement's body would otherwise be reported as an
      // unexpected indent.
      if (at(TokenKind::Indent))
        skipBlock();
      return;
    }
  }
}

//===--- Module ---===//

Module Parser::parseFile(uint32_t file) {
  llvm::SmallVector<Stmt *, 32> body;
  while (!at(TokenKind::EndOfFile) && !diags.errorLimitReached()) {
    if (at(TokenKind::Newline)) {
      consume();
      continue;
    }
    if (at(TokenKind::Dedent)) {
      consume(); // left over after an indentation error
      continue;
    }
    parseStatementInto(body);
  }
  if (!at(TokenKind::EndOfFile))
    diags.stopAtErrorLimit(); // the rest of the file is not parsed
  return Module{file, copy(body)};
}

Expr *Parser::parseLoneExpression() {
  Expr *expr = parseTestList();
  if (!expr)
    return nullptr;
  if (!at(TokenKind::EndOfFile)) {
    reportUnexpected();
    return nullptr;
  }
  return expr;
}

//===--- Statements ---===//

void Parser::parseStatementInto(llvm::SmallVectorImpl<Stmt *> &out) {
  unsigned errorsBefore = diags.errorCount();
  size_t sizeBefore = out.size();
  depthReported = false;
  if (at(TokenKind::Indent)) {
    diags.report(DiagID::err_unexpected_indent, current().range);
    skipToEndOfLine();
    return;
  }
  bool ok;
  if (Stmt *compound = parseCompoundStatement()) {
    out.push_back(compound);
    ok = true;
  } else if (diags.errorCount() != errorsBefore) {
    ok = false;
  } else {
    ok = parseSimpleStatementsInto(out);
  }
  if (!ok || diags.errorCount() != errorsBefore) {
    out.resize(sizeBefore);
    if (!ok)
      skipToEndOfLine();
  }
}

bool Parser::parseSimpleStatementsInto(llvm::SmallVectorImpl<Stmt *> &out) {
  while (true) {
    Stmt *stmt = parseSimpleStatement();
    if (!stmt)
      return false;
    out.push_back(stmt);
    if (!tryConsume(TokenKind::Semicolon))
      break;
    if (at(TokenKind::Newline) || at(TokenKind::EndOfFile))
      break;
  }
  if (at(TokenKind::EndOfFile))
    return true;
  if (!at(TokenKind::Newline)) {
    reportUnexpected();
    return false;
  }
  consume();
  return true;
}

Stmt *Parser::parseCompoundStatement() {
  SourceLoc begin = current().range.begin;
  switch (current().kind) {
  case TokenKind::KwIf:
    return parseIf(begin);
  case TokenKind::KwWhile:
    return parseWhile();
  case TokenKind::KwFor:
    return parseFor(begin, false);
  case TokenKind::KwDef:
    return parseFunctionDef(begin, {}, false);
  case TokenKind::KwClass:
    return parseClassDef(begin);
  case TokenKind::KwWith:
    return parseWith(begin);
  case TokenKind::KwTry:
    return parseTry();
  case TokenKind::At:
    return parseDecorated();
  case TokenKind::KwAsync:
    consume();
    if (at(TokenKind::KwDef))
      return parseFunctionDef(begin, {}, true);
    if (at(TokenKind::KwFor))
      return parseFor(begin, true);
    if (at(TokenKind::KwWith))
      return parseWith(begin);
    reportUnexpected();
    return nullptr;
  default:
    return nullptr;
  }
}

llvm::ArrayRef<Stmt *> Parser::parseBlock(llvm::StringRef what, const Token &opener) {
  if (!expect(TokenKind::Colon)) {
    skipToEndOfLine(); // and the block that follows
    return {};
  }
  llvm::SmallVector<Stmt *, 8> body;
  if (!at(TokenKind::Newline)) {
    // `if x: y = 1; z = 2` on one line.
    if (!parseSimpleStatementsInto(body))
      skipToEndOfLine();
    return copy(body);
  }
  consume(); // newline
  if (!at(TokenKind::Indent)) {
    LineColumn line = diags.sourceManager().lineColumn(opener.range.begin);
    diags.report(DiagID::err_expected_indented_block, current().range,
                 {what, static_cast<unsigned>(line.line)});
    return {};
  }
  consume(); // indent
  while (!at(TokenKind::Dedent) && !at(TokenKind::EndOfFile) && !diags.errorLimitReached()) {
    if (at(TokenKind::Newline)) {
      consume();
      continue;
    }
    parseStatementInto(body);
  }
  tryConsume(TokenKind::Dedent);
  return copy(body);
}

Stmt *Parser::parseIf(SourceLoc begin) {
  const Token &keyword = consume(); // if or elif
  Expr *test = parseNamedExprTest();
  if (!test)
    return nullptr;
  llvm::StringRef what = keyword.is(TokenKind::KwIf) ? "'if' statement" : "'elif' statement";
  llvm::ArrayRef<Stmt *> body = parseBlock(what, keyword);
  llvm::ArrayRef<Stmt *> orelse;
  if (at(TokenKind::KwElif)) {
    SourceLoc elifBegin = current().range.begin;
    Stmt *elif = parseIf(elifBegin);
    if (!elif)
      return nullptr;
    orelse = context.copyArray(llvm::ArrayRef<Stmt *>(elif));
  } else if (at(TokenKind::KwElse)) {
    const Token &elseToken = consume();
    orelse = parseBlock("'else' statement", elseToken);
  }
  return context.create<IfStmt>(rangeFrom(begin), test, body, orelse);
}

Stmt *Parser::parseWhile() {
  SourceLoc begin = current().range.begin;
  const Token &keyword = consume();
  Expr *test = parseNamedExprTest();
  if (!test)
    return nullptr;
  llvm::ArrayRef<Stmt *> body = parseBlock("'while' statement", keyword);
  llvm::ArrayRef<Stmt *> orelse;
  if (at(TokenKind::KwElse)) {
    const Token &elseToken = consume();
    orelse = parseBlock("'else' statement", elseToken);
  }
  return context.create<WhileStmt>(rangeFrom(begin), test, body, orelse);
}

Stmt *Parser::parseFor(SourceLoc begin, bool isAsync) {
  const Token &keyword = consume(); // for
  Expr *target = parseExprList();
  if (!target || !checkAssignable(target, false))
    return nullptr;
  if (!expect(TokenKind::KwIn))
    return nullptr;
  Expr *iter = parseTestListStarExpr();
  if (!iter)
    return nullptr;
  llvm::ArrayRef<Stmt *> body = parseBlock("'for' statement", keyword);
  llvm::ArrayRef<Stmt *> orelse;
  if (at(TokenKind::KwElse)) {
    const Token &elseToken = consume();
    orelse = parseBlock("'else' statement", elseToken);
  }
  return context.create<ForStmt>(rangeFrom(begin), target, iter, body, orelse, isAsync);
}

Stmt *Parser::parseDecorated() {
  SourceLoc begin = current().range.begin;
  llvm::SmallVector<Expr *, 2> decorators;
  while (tryConsume(TokenKind::At)) {
    Expr *decorator = parseNamedExprTest();
    if (!decorator)
      return nullptr;
    if (!at(TokenKind::Newline)) {
      reportUnexpected();
      return nullptr;
    }
    consume();
    decorators.push_back(decorator);
  }
  if (at(TokenKind::KwDef))
    return parseFunctionDef(begin, copy(decorators), false);
  if (at(TokenKind::KwAsync) && peekToken().is(TokenKind::KwDef)) {
    consume();
    return parseFunctionDef(begin, copy(decorators), true);
  }
  if (at(TokenKind::KwClass))
    return parseClassDef(begin);
  diags.report(DiagID::err_decorator_without_function, current().range);
  return nullptr;
}

bool Parser::parseParameters(TokenKind closer, bool allowAnnotations,
                             llvm::SmallVectorImpl<Parameter> &params) {
  bool keywordOnly = false;
  bool sawDefault = false;
  while (!at(closer)) {
    if (tryConsume(TokenKind::Slash)) {
      // Positional-only marker: parameters before it are positional anyway.
    } else if (at(TokenKind::Star) || at(TokenKind::DoubleStar)) {
      bool isKwArgs = consume().is(TokenKind::DoubleStar);
      if (!isKwArgs && (at(TokenKind::Comma) || at(closer))) {
        keywordOnly = true; // bare `*`
      } else {
        if (!at(TokenKind::Identifier)) {
          reportUnexpected();
          return false;
        }
        const Token &name = consume();
        Expr *annotation = nullptr;
        if (allowAnnotations && tryConsume(TokenKind::Colon))
          if (!(annotation = parseTest()))
            return false;
        params.push_back(Parameter{name.text, name.range,
                                   isKwArgs ? Parameter::Form::KwArgs : Parameter::Form::VarArgs,
                                   annotation, nullptr});
        keywordOnly = true;
      }
    } else if (at(TokenKind::Identifier)) {
      const Token &name = consume();
      Expr *annotation = nullptr;
      if (allowAnnotations && tryConsume(TokenKind::Colon))
        if (!(annotation = parseTest()))
          return false;
      Expr *defaultValue = nullptr;
      if (tryConsume(TokenKind::Equal)) {
        if (!(defaultValue = parseTest()))
          return false;
        sawDefault = true;
      } else if (sawDefault && !keywordOnly) {
        diags.report(DiagID::err_non_default_after_default, name.range);
        return false;
      }
      params.push_back(
          Parameter{name.text, name.range,
                    keywordOnly ? Parameter::Form::KeywordOnly : Parameter::Form::Positional,
                    annotation, defaultValue});
    } else {
      reportUnexpected();
      return false;
    }
    if (!tryConsume(TokenKind::Comma))
      break;
  }
  for (size_t i = 0; i < params.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      if (params[i].name == params[j].name) {
        diags.report(DiagID::err_duplicate_parameter, params[i].range, {params[i].name});
        return false;
      }
  return true;
}

Stmt *Parser::parseFunctionDef(SourceLoc begin, llvm::ArrayRef<Expr *> decorators, bool isAsync) {
  const Token &keyword = consume(); // def
  if (!at(TokenKind::Identifier)) {
    diags.report(DiagID::err_expected_function_name, current().range);
    return nullptr;
  }
  const Token &name = consume();
  if (!expect(TokenKind::LParen))
    return nullptr;
  llvm::SmallVector<Parameter, 8> params;
  if (!parseParameters(TokenKind::RParen, true, params) || !expect(TokenKind::RParen))
    return nullptr;
  Expr *returns = nullptr;
  if (tryConsume(TokenKind::Arrow) && !(returns = parseTest()))
    return nullptr;
  llvm::ArrayRef<Stmt *> body = parseBlock("function definition", keyword);
  return context.create<FunctionDefStmt>(rangeFrom(begin), name.text, name.range, decorators,
                                         copy(params), returns, body, isAsync);
}

Stmt *Parser::parseClassDef(SourceLoc begin) {
  const Token &keyword = consume(); // class
  if (!at(TokenKind::Identifier)) {
    reportUnexpected();
    return nullptr;
  }
  const Token &name = consume();
  llvm::ArrayRef<Expr *> bases;
  if (tryConsume(TokenKind::LParen)) {
    Expr *callee = make<NameExpr>(name.range, name.text);
    Expr *arguments = parseCallArguments(callee);
    if (!arguments)
      return nullptr;
    if (const auto *call = llvm::dyn_cast<CallExpr>(arguments))
      bases = call->args;
  }
  llvm::ArrayRef<Stmt *> body = parseBlock("class definition", keyword);
  return context.create<ClassDefStmt>(rangeFrom(begin), name.text, name.range, bases, body);
}

Stmt *Parser::parseWith(SourceLoc begin) {
  const Token &keyword = consume(); // with
  // `with (a as b, c as d):` puts the items in parentheses. Kiln rejects
  // `with` anyway, so a parenthesized group followed by ':' is read as items.
  bool parenthesizedItems = false;
  if (at(TokenKind::LParen)) {
    unsigned depth = 0;
    size_t ahead = 0;
    do {
      TokenKind kind = peekToken(ahead++).kind;
      depth +=
          kind == TokenKind::LParen || kind == TokenKind::LBracket || kind == TokenKind::LBrace;
      depth -=
          kind == TokenKind::RParen || kind == TokenKind::RBracket || kind == TokenKind::RBrace;
    } while (depth && peekToken(ahead).isNot(TokenKind::EndOfFile));
    parenthesizedItems = peekToken(ahead).is(TokenKind::Colon);
  }
  if (parenthesizedItems)
    consume(); // (
  // The items only need to parse.
  do {
    if (parenthesizedItems && at(TokenKind::RParen))
      break;
    Expr *item = parseTest();
    if (!item)
      return nullptr;
    if (tryConsume(TokenKind::KwAs) && !parseBinaryLevel(0))
      return nullptr;
  } while (tryConsume(TokenKind::Comma));
  if (parenthesizedItems && !expect(TokenKind::RParen))
    return nullptr;
  llvm::ArrayRef<Stmt *> body = parseBlock("'with' statement", keyword);
  return context.create<BlockStmt>(Stmt::Kind::With, rangeFrom(begin), keyword.range, body);
}

Stmt *Parser::parseTry() {
  SourceLoc begin = current().range.begin;
  const Token &keyword = consume(); // try
  llvm::SmallVector<Stmt *, 8> all;
  llvm::append_range(all, parseBlock("'try' statement", keyword));
  bool sawHandler = false;
  while (at(TokenKind::KwExcept)) {
    const Token &except = consume();
    sawHandler = true;
    tryConsume(TokenKind::Star); // except*
    if (!at(TokenKind::Colon)) {
      if (!parseTest())
        return nullptr;
      if (tryConsume(TokenKind::KwAs) && !expect(TokenKind::Identifier))
        return nullptr;
    }
    llvm::append_range(all, parseBlock("'except' statement", except));
  }
  if (at(TokenKind::KwElse)) {
    const Token &elseToken = consume();
    llvm::append_range(all, parseBlock("'else' statement", elseToken));
  }
  if (at(TokenKind::KwFinally)) {
    const Token &finally = consume();
    sawHandler = true;
    llvm::append_range(all, parseBlock("'finally' statement", finally));
  }
  if (!sawHandler) {
    diags.report(DiagID::err_try_without_handler, keyword.range);
    return nullptr;
  }
  return context.create<BlockStmt>(Stmt::Kind::Try, rangeFrom(begin), keyword.range, copy(all));
}

bool Parser::parseDottedName(llvm::SmallString<64> &name) {
  if (!at(TokenKind::Identifier)) {
    diags.report(DiagID::err_expected_module_name, current().range);
    return false;
  }
  name = consume().text;
  while (at(TokenKind::Dot)) {
    consume();
    if (!at(TokenKind::Identifier)) {
      diags.report(DiagID::err_expected_module_name, current().range);
      return false;
    }
    name += ".";
    name += consume().text;
  }
  return true;
}

Stmt *Parser::parseImport() {
  SourceLoc begin = consume().range.begin; // import
  llvm::SmallVector<ImportAlias, 2> names;
  do {
    SourceLoc nameBegin = current().range.begin;
    llvm::SmallString<64> dotted;
    if (!parseDottedName(dotted))
      return nullptr;
    llvm::StringRef asName;
    if (tryConsume(TokenKind::KwAs)) {
      if (!at(TokenKind::Identifier)) {
        reportUnexpected();
        return nullptr;
      }
      asName = consume().text;
    }
    names.push_back(ImportAlias{context.copyString(dotted), asName, rangeFrom(nameBegin)});
  } while (tryConsume(TokenKind::Comma));
  return context.create<ImportStmt>(rangeFrom(begin), copy(names));
}

Stmt *Parser::parseImportFrom() {
  SourceLoc begin = consume().range.begin; // from
  // The module's range covers the dots of a relative import: `.helpers`.
  SourceLoc moduleBegin = current().range.begin;
  unsigned level = 0;
  while (at(TokenKind::Dot) || at(TokenKind::Ellipsis))
    level += consume().is(TokenKind::Ellipsis) ? 3 : 1;
  llvm::SmallString<64> module;
  if (!at(TokenKind::KwImport) || level == 0)
    if (!parseDottedName(module))
      return nullptr;
  SourceRange moduleRange = rangeFrom(moduleBegin);
  if (!expect(TokenKind::KwImport))
    return nullptr;
  if (tryConsume(TokenKind::Star))
    return context.create<ImportFromStmt>(rangeFrom(begin), context.copyString(module), moduleRange,
                                          level, llvm::ArrayRef<ImportAlias>(), true);
  bool parenthesized = tryConsume(TokenKind::LParen);
  llvm::SmallVector<ImportAlias, 4> names;
  do {
    if (parenthesized && at(TokenKind::RParen))
      break;
    if (!at(TokenKind::Identifier)) {
      reportUnexpected();
      return nullptr;
    }
    const Token &name = consume();
    llvm::StringRef asName;
    if (tryConsume(TokenKind::KwAs)) {
      if (!at(TokenKind::Identifier)) {
        reportUnexpected();
        return nullptr;
      }
      asName = consume().text;
    }
    names.push_back(ImportAlias{name.text, asName, rangeFrom(name.range.begin)});
  } while (tryConsume(TokenKind::Comma));
  if (parenthesized && !expect(TokenKind::RParen))
    return nullptr;
  return context.create<ImportFromStmt>(rangeFrom(begin), context.copyString(module), moduleRange,
                                        level, copy(names), false);
}

bool Parser::checkAssignable(Expr *target, bool augmented) {
  switch (target->kind()) {
  case Expr::Kind::Name:
  case Expr::Kind::Attribute:
  case Expr::Kind::Subscript:
    return true;
  case Expr::Kind::Tuple:
  case Expr::Kind::List:
    if (augmented) {
      diags.report(DiagID::err_augmented_assign_to_tuple, target->range());
      return false;
    }
    for (Expr *element : llvm::cast<SequenceExpr>(target)->elements)
      if (!checkAssignable(element, false))
        return false;
    return true;
  case Expr::Kind::Starred:
    if (augmented)
      break;
    return checkAssignable(llvm::cast<StarredExpr>(target)->value, false);
  default:
    break;
  }
  llvm::StringRef what;
  switch (target->kind()) {
  case Expr::Kind::Call:
    what = "function call";
    break;
  case Expr::Kind::IntLiteral:
  case Expr::Kind::FloatLiteral:
  case Expr::Kind::ImaginaryLiteral:
  case Expr::Kind::StringLiteral:
  case Expr::Kind::BoolLiteral:
  case Expr::Kind::NoneLiteral:
  case Expr::Kind::EllipsisLiteral:
    what = "literal";
    break;
  case Expr::Kind::Compare:
    what = "comparison";
    break;
  case Expr::Kind::Lambda:
    what = "lambda";
    break;
  case Expr::Kind::IfExp:
    what = "conditional expression";
    break;
  default:
    what = "expression";
    break;
  }
  diags.report(DiagID::err_cannot_assign_to, target->range(), {what});
  return false;
}

Stmt *Parser::parseExpressionStatement() {
  SourceLoc begin = current().range.begin;
  Expr *first = at(TokenKind::KwYield) ? parseYield() : parseTestListStarExpr();
  if (!first)
    return nullptr;

  // Annotated assignment: `x: float32 = 0`.
  if (at(TokenKind::Colon)) {
    consume();
    if (!checkAssignable(first, true))
      return nullptr;
    Expr *annotation = parseTest();
    if (!annotation)
      return nullptr;
    Expr *value = nullptr;
    if (tryConsume(TokenKind::Equal) && !(value = parseTestListStarExpr()))
      return nullptr;
    return context.create<AnnAssignStmt>(rangeFrom(begin), first, annotation, value);
  }

  // Augmented assignment.
  std::optional<BinaryOp> augmented;
  switch (current().kind) {
  case TokenKind::PlusEqual:
    augmented = BinaryOp::Add;
    break;
  case TokenKind::MinusEqual:
    augmented = BinaryOp::Sub;
    break;
  case TokenKind::StarEqual:
    augmented = BinaryOp::Mul;
    break;
  case TokenKind::AtEqual:
    augmented = BinaryOp::MatMul;
    break;
  case TokenKind::SlashEqual:
    augmented = BinaryOp::TrueDiv;
    break;
  case TokenKind::DoubleSlashEqual:
    augmented = BinaryOp::FloorDiv;
    break;
  case TokenKind::PercentEqual:
    augmented = BinaryOp::Mod;
    break;
  case TokenKind::DoubleStarEqual:
    augmented = BinaryOp::Pow;
    break;
  case TokenKind::LeftShiftEqual:
    augmented = BinaryOp::LShift;
    break;
  case TokenKind::RightShiftEqual:
    augmented = BinaryOp::RShift;
    break;
  case TokenKind::AmpersandEqual:
    augmented = BinaryOp::BitAnd;
    break;
  case TokenKind::PipeEqual:
    augmented = BinaryOp::BitOr;
    break;
  case TokenKind::CaretEqual:
    augmented = BinaryOp::BitXor;
    break;
  default:
    break;
  }
  if (augmented) {
    SourceRange opRange = consume().range;
    if (!checkAssignable(first, true))
      return nullptr;
    Expr *value = at(TokenKind::KwYield) ? parseYield() : parseTestList();
    if (!value)
      return nullptr;
    return context.create<AugAssignStmt>(rangeFrom(begin), first, *augmented, opRange, value);
  }

  if (!at(TokenKind::Equal))
    return context.create<ExprStmt>(rangeFrom(begin), first);

  // `a = b = value`
  llvm::SmallVector<Expr *, 2> targets{first};
  Expr *value = nullptr;
  while (tryConsume(TokenKind::Equal)) {
    value = at(TokenKind::KwYield) ? parseYield() : parseTestListStarExpr();
    if (!value)
      return nullptr;
    if (at(TokenKind::Equal))
      targets.push_back(value);
  }
  for (Expr *target : targets)
    if (!checkAssignable(target, false))
      return nullptr;
  return context.create<AssignStmt>(rangeFrom(begin), copy(targets), value);
}

Stmt *Parser::parseSimpleStatement() {
  SourceLoc begin = current().range.begin;
  switch (current().kind) {
  case TokenKind::KwPass:
    consume();
    return context.create<SimpleStmt>(Stmt::Kind::Pass, rangeFrom(begin));
  case TokenKind::KwBreak:
    consume();
    return context.create<SimpleStmt>(Stmt::Kind::Break, rangeFrom(begin));
  case TokenKind::KwContinue:
    consume();
    return context.create<SimpleStmt>(Stmt::Kind::Continue, rangeFrom(begin));
  case TokenKind::KwReturn: {
    consume();
    Expr *value = nullptr;
    if (!at(TokenKind::Newline) && !at(TokenKind::Semicolon) && !at(TokenKind::EndOfFile))
      if (!(value = parseTestListStarExpr()))
        return nullptr;
    return context.create<ReturnStmt>(rangeFrom(begin), value);
  }
  case TokenKind::KwRaise: {
    consume();
    Expr *exception = nullptr;
    Expr *cause = nullptr;
    if (!at(TokenKind::Newline) && !at(TokenKind::Semicolon) && !at(TokenKind::EndOfFile)) {
      if (!(exception = parseTest()))
        return nullptr;
      if (tryConsume(TokenKind::KwFrom) && !(cause = parseTest()))
        return nullptr;
    }
    return context.create<RaiseStmt>(rangeFrom(begin), exception, cause);
  }
  case TokenKind::KwAssert: {
    consume();
    Expr *test = parseTest();
    if (!test)
      return nullptr;
    Expr *message = nullptr;
    if (tryConsume(TokenKind::Comma) && !(message = parseTest()))
      return nullptr;
    return context.create<AssertStmt>(rangeFrom(begin), test, message);
  }
  case TokenKind::KwDel: {
    consume();
    Expr *targets = parseExprList();
    if (!targets)
      return nullptr;
    llvm::SmallVector<Expr *, 2> list;
    if (auto *tuple = llvm::dyn_cast<SequenceExpr>(targets); tuple && !tuple->parenthesized)
      list.append(tuple->elements.begin(), tuple->elements.end());
    else
      list.push_back(targets);
    return context.create<DeleteStmt>(rangeFrom(begin), copy(list));
  }
  case TokenKind::KwGlobal:
  case TokenKind::KwNonlocal: {
    const Token &keyword = consume();
    do {
      if (!expect(TokenKind::Identifier))
        return nullptr;
    } while (tryConsume(TokenKind::Comma));
    return context.create<BlockStmt>(keyword.is(TokenKind::KwGlobal) ? Stmt::Kind::Global
                                                                     : Stmt::Kind::Nonlocal,
                                     rangeFrom(begin), keyword.range, llvm::ArrayRef<Stmt *>());
  }
  case TokenKind::KwImport:
    return parseImport();
  case TokenKind::KwFrom:
    return parseImportFrom();
  case TokenKind::KwElse:
  case TokenKind::KwElif:
  case TokenKind::KwExcept:
  case TokenKind::KwFinally:
    diags.report(DiagID::err_dangling_clause, current().range, {current().text});
    return nullptr;
  default:
    return parseExpressionStatement();
  }
}

} // namespace parse

ast::Module parseModule(const SourceManager &sources, uint32_t file, ast::AstContext &context,
                        DiagnosticEngine &diags) {
  parse::Parser parser(tokenize(sources, file, diags), context, diags);
  return parser.parseFile(file);
}

ast::Expr *parseExpression(const SourceManager &sources, uint32_t file, uint32_t begin,
                           uint32_t end, ast::AstContext &context, DiagnosticEngine &diags) {
  unsigned errorsBefore = diags.errorCount();
  parse::Parser parser(tokenizeExpression(sources, file, begin, end, diags), context, diags);
  ast::Expr *expr = parser.parseLoneExpression();
  return diags.errorCount() == errorsBefore ? expr : nullptr;
}

} // namespace kiln
