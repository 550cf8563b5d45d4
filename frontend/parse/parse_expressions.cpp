//===- frontend/parse/parse_expressions.cpp - Python expressions ----------===//
//
// Precedence, loosest first, as in the Python reference (6.17):
//   lambda, if-else, or, and, not, comparisons, |, ^, &, << >>, + -,
//   * @ / // %, unary + - ~, **, await, primaries (calls, subscripts, .attr)
//
//===----------------------------------------------------------------------===//

#include "frontend/parse/literals.h"
#include "frontend/parse/parser_internal.h"

namespace kiln::parse {

using namespace ast;

namespace {

bool startsExpression(TokenKind kind) {
  switch (kind) {
  case TokenKind::Identifier:
  case TokenKind::Number:
  case TokenKind::String:
  case TokenKind::LParen:
  case TokenKind::LBracket:
  case TokenKind::LBrace:
  case TokenKind::Minus:
  case TokenKind::Plus:
  case TokenKind::Tilde:
  case TokenKind::Ellipsis:
  case TokenKind::KwNot:
  case TokenKind::KwLambda:
  case TokenKind::KwAwait:
  case TokenKind::KwNone:
  case TokenKind::KwTrue:
  case TokenKind::KwFalse:
  case TokenKind::Star:
    return true;
  default:
    return false;
  }
}

} // namespace

Expr *Parser::parseTestList() {
  SourceLoc begin = current().range.begin;
  Expr *first = parseTest();
  if (!first || !at(TokenKind::Comma))
    return first;
  llvm::SmallVector<Expr *, 4> elements{first};
  while (tryConsume(TokenKind::Comma)) {
    if (!startsExpression(current().kind))
      break;
    Expr *next = parseTest();
    if (!next)
      return nullptr;
    elements.push_back(next);
  }
  return make<SequenceExpr>(Expr::Kind::Tuple, rangeFrom(begin), copy(elements), false);
}

Expr *Parser::parseTestListStarExpr() {
  SourceLoc begin = current().range.begin;
  auto parseItem = [&]() -> Expr * {
    return at(TokenKind::Star) ? parseStarExpr() : parseNamedExprTest();
  };
  Expr *first = parseItem();
  if (!first || !at(TokenKind::Comma))
    return first;
  llvm::SmallVector<Expr *, 4> elements{first};
  while (tryConsume(TokenKind::Comma)) {
    if (!startsExpression(current().kind))
      break;
    Expr *next = parseItem();
    if (!next)
      return nullptr;
    elements.push_back(next);
  }
  return make<SequenceExpr>(Expr::Kind::Tuple, rangeFrom(begin), copy(elements), false);
}

Expr *Parser::parseNamedExprTest() {
  if (at(TokenKind::Identifier) && peekToken().is(TokenKind::Walrus)) {
    SourceLoc begin = current().range.begin;
    const Token &name = consume();
    consume(); // :=
    auto *target = make<NameExpr>(name.range, name.text);
    Expr *value = parseTest();
    if (!value)
      return nullptr;
    return make<NamedExpr>(rangeFrom(begin), target, value);
  }
  return parseTest();
}

Expr *Parser::parseTest() {
  DepthGuard guard(*this);
  if (guard.tooDeep())
    return expressionTooDeep(current().range);
  if (at(TokenKind::KwLambda))
    return parseLambda();
  SourceLoc begin = current().range.begin;
  Expr *body = parseOrTest();
  if (!body || !at(TokenKind::KwIf))
    return body;
  consume();
  Expr *test = parseOrTest();
  if (!test)
    return nullptr;
  if (!expect(TokenKind::KwElse))
    return nullptr;
  Expr *orelse = parseTest();
  if (!orelse)
    return nullptr;
  return make<IfExpExpr>(rangeFrom(begin), test, body, orelse);
}

Expr *Parser::parseTestNoCond() {
  if (at(TokenKind::KwLambda))
    return parseLambda();
  return parseOrTest();
}

Expr *Parser::parseLambda() {
  SourceRange keyword = consume().range; // lambda
  llvm::SmallVector<Parameter, 4> params;
  if (!parseParameters(TokenKind::Colon, /*allowAnnotations=*/false, params))
    return nullptr;
  if (!expect(TokenKind::Colon))
    return nullptr;
  Expr *body = parseTest();
  if (!body)
    return nullptr;
  llvm::SmallVector<Stmt *, 1> returned{context.create<ReturnStmt>(body->range(), body)};
  auto *function = context.create<FunctionDefStmt>(rangeFrom(keyword.begin), "<lambda>", keyword,
                                                   llvm::ArrayRef<Expr *>(), copy(params), nullptr,
                                                   copy(returned), /*isAsync=*/false);
  return make<LambdaExpr>(rangeFrom(keyword.begin), body, function);
}

Expr *Parser::parseOrTest() {
  SourceLoc begin = current().range.begin;
  Expr *first = parseAndTest();
  if (!first || !at(TokenKind::KwOr))
    return first;
  llvm::SmallVector<Expr *, 4> values{first};
  while (tryConsume(TokenKind::KwOr)) {
    Expr *next = parseAndTest();
    if (!next)
      return nullptr;
    values.push_back(next);
  }
  return make<BoolOpExpr>(rangeFrom(begin), BoolOpKind::Or, copy(values));
}

Expr *Parser::parseAndTest() {
  SourceLoc begin = current().range.begin;
  Expr *first = parseNotTest();
  if (!first || !at(TokenKind::KwAnd))
    return first;
  llvm::SmallVector<Expr *, 4> values{first};
  while (tryConsume(TokenKind::KwAnd)) {
    Expr *next = parseNotTest();
    if (!next)
      return nullptr;
    values.push_back(next);
  }
  return make<BoolOpExpr>(rangeFrom(begin), BoolOpKind::And, copy(values));
}

Expr *Parser::parseNotTest() {
  if (!at(TokenKind::KwNot))
    return parseComparison();
  DepthGuard guard(*this);
  if (guard.tooDeep())
    return expressionTooDeep(current().range);
  SourceLoc begin = consume().range.begin;
  Expr *operand = parseNotTest();
  if (!operand)
    return nullptr;
  return make<UnaryExpr>(rangeFrom(begin), UnaryOp::Not, operand);
}

Expr *Parser::parseComparison() {
  SourceLoc begin = current().range.begin;
  Expr *left = parseBinaryLevel(0);
  if (!left)
    return nullptr;
  llvm::SmallVector<CompareOp, 2> ops;
  llvm::SmallVector<SourceRange, 2> opRanges;
  llvm::SmallVector<Expr *, 2> comparators;
  while (true) {
    SourceRange opRange = current().range;
    CompareOp op;
    switch (current().kind) {
    case TokenKind::Less:
      op = CompareOp::Lt;
      break;
    case TokenKind::Greater:
      op = CompareOp::Gt;
      break;
    case TokenKind::LessEqual:
      op = CompareOp::LtE;
      break;
    case TokenKind::GreaterEqual:
      op = CompareOp::GtE;
      break;
    case TokenKind::EqualEqual:
      op = CompareOp::Eq;
      break;
    case TokenKind::NotEqual:
      op = CompareOp::NotEq;
      break;
    case TokenKind::KwIn:
      op = CompareOp::In;
      break;
    case TokenKind::KwIs:
      if (peekToken().is(TokenKind::KwNot)) {
        consume();
        opRange = SourceRange::join(opRange, current().range);
        op = CompareOp::IsNot;
      } else {
        op = CompareOp::Is;
      }
      break;
    case TokenKind::KwNot:
      if (!peekToken().is(TokenKind::KwIn))
        goto done;
      consume();
      opRange = SourceRange::join(opRange, current().range);
      op = CompareOp::NotIn;
      break;
    default:
      goto done;
    }
    consume();
    Expr *right = parseBinaryLevel(0);
    if (!right)
      return nullptr;
    ops.push_back(op);
    opRanges.push_back(opRange);
    comparators.push_back(right);
  }
done:
  if (ops.empty())
    return left;
  return make<CompareExpr>(rangeFrom(begin), left, copy(ops), copy(opRanges), copy(comparators));
}

Expr *Parser::parseStarExpr() {
  SourceLoc begin = consume().range.begin; // *
  Expr *value = parseBinaryLevel(0);
  if (!value)
    return nullptr;
  return make<StarredExpr>(rangeFrom(begin), value);
}

Expr *Parser::parseBinaryLevel(unsigned level) {
  constexpr unsigned factorLevel = 6;
  if (level == factorLevel)
    return parseFactor();
  SourceLoc begin = current().range.begin;
  Expr *lhs = parseBinaryLevel(level + 1);
  if (!lhs)
    return nullptr;
  while (true) {
    std::optional<BinaryOp> op;
    TokenKind kind = current().kind;
    switch (level) {
    case 0:
      if (kind == TokenKind::Pipe)
        op = BinaryOp::BitOr;
      break;
    case 1:
      if (kind == TokenKind::Caret)
        op = BinaryOp::BitXor;
      break;
    case 2:
      if (kind == TokenKind::Ampersand)
        op = BinaryOp::BitAnd;
      break;
    case 3:
      if (kind == TokenKind::LeftShift)
        op = BinaryOp::LShift;
      else if (kind == TokenKind::RightShift)
        op = BinaryOp::RShift;
      break;
    case 4:
      if (kind == TokenKind::Plus)
        op = BinaryOp::Add;
      else if (kind == TokenKind::Minus)
        op = BinaryOp::Sub;
      break;
    case 5:
      if (kind == TokenKind::Star)
        op = BinaryOp::Mul;
      else if (kind == TokenKind::At)
        op = BinaryOp::MatMul;
      else if (kind == TokenKind::Slash)
        op = BinaryOp::TrueDiv;
      else if (kind == TokenKind::DoubleSlash)
        op = BinaryOp::FloorDiv;
      else if (kind == TokenKind::Percent)
        op = BinaryOp::Mod;
      break;
    default:
      break;
    }
    if (!op)
      return lhs;
    SourceRange opRange = consume().range;
    Expr *rhs = parseBinaryLevel(level + 1);
    if (!rhs)
      return nullptr;
    lhs = make<BinaryExpr>(rangeFrom(begin), *op, opRange, lhs, rhs);
    if (lhs->depth() > maxExprDepth)
      return expressionTooDeep(lhs->range());
  }
}

Expr *Parser::parseFactor() {
  std::optional<UnaryOp> op;
  if (at(TokenKind::Minus))
    op = UnaryOp::Negate;
  else if (at(TokenKind::Plus))
    op = UnaryOp::Plus;
  else if (at(TokenKind::Tilde))
    op = UnaryOp::Invert;
  if (!op)
    return parsePower();
  DepthGuard guard(*this);
  if (guard.tooDeep())
    return expressionTooDeep(current().range);
  SourceLoc begin = consume().range.begin;
  Expr *operand = parseFactor();
  if (!operand)
    return nullptr;
  return make<UnaryExpr>(rangeFrom(begin), *op, operand);
}

Expr *Parser::parsePower() {
  SourceLoc begin = current().range.begin;
  Expr *base = parseAwaitPrimary();
  if (!base || !at(TokenKind::DoubleStar))
    return base;
  // `**` is right-associative: each one nests the next in the exponent.
  DepthGuard guard(*this);
  if (guard.tooDeep())
    return expressionTooDeep(current().range);
  SourceRange opRange = consume().range;
  // The exponent binds a unary operator: 2 ** -1.
  Expr *exponent = parseFactor();
  if (!exponent)
    return nullptr;
  return make<BinaryExpr>(rangeFrom(begin), BinaryOp::Pow, opRange, base, exponent);
}

Expr *Parser::parseAwaitPrimary() {
  if (at(TokenKind::KwAwait)) {
    DepthGuard guard(*this);
    if (guard.tooDeep())
      return expressionTooDeep(current().range);
    SourceLoc begin = consume().range.begin;
    Expr *value = parseAwaitPrimary();
    if (!value)
      return nullptr;
    return make<AwaitExpr>(rangeFrom(begin), value);
  }
  Expr *atom = parseAtom();
  if (!atom)
    return nullptr;
  return parseTrailers(atom);
}

Expr *Parser::parseTrailers(Expr *base) {
  SourceLoc begin = base->range().begin;
  while (true) {
    if (tryConsume(TokenKind::Dot)) {
      if (!at(TokenKind::Identifier)) {
        diags.report(DiagID::err_expected_attribute_name, current().range);
        return nullptr;
      }
      const Token &name = consume();
      base = make<AttributeExpr>(rangeFrom(begin), base, name.text, name.range);
    } else if (tryConsume(TokenKind::LParen)) {
      base = parseCallArguments(base);
    } else if (tryConsume(TokenKind::LBracket)) {
      Expr *index = parseSubscriptIndex();
      if (!index || !expect(TokenKind::RBracket))
        return nullptr;
      base = make<SubscriptExpr>(rangeFrom(begin), base, index);
    } else {
      return base;
    }
    if (!base)
      return nullptr;
    if (base->depth() > maxExprDepth)
      return expressionTooDeep(base->range());
  }
}

Expr *Parser::parseCallArguments(Expr *callee) {
  SourceLoc begin = callee->range().begin;
  llvm::SmallVector<Expr *, 4> args;
  llvm::SmallVector<Keyword, 2> keywords;
  while (!at(TokenKind::RParen)) {
    if (at(TokenKind::DoubleStar)) {
      SourceRange starRange = consume().range;
      Expr *value = parseTest();
      if (!value)
        return nullptr;
      keywords.push_back(Keyword{"", starRange, value});
    } else if (at(TokenKind::Star)) {
      SourceLoc starBegin = consume().range.begin;
      Expr *value = parseTest();
      if (!value)
        return nullptr;
      args.push_back(make<StarredExpr>(rangeFrom(starBegin), value));
    } else if (at(TokenKind::Identifier) && peekToken().is(TokenKind::Equal)) {
      const Token &name = consume();
      consume(); // =
      Expr *value = parseTest();
      if (!value)
        return nullptr;
      keywords.push_back(Keyword{name.text, name.range, value});
    } else {
      if (!keywords.empty()) {
        diags.report(DiagID::err_positional_after_keyword, current().range);
        return nullptr;
      }
      SourceLoc argBegin = current().range.begin;
      Expr *value = parseNamedExprTest();
      if (!value)
        return nullptr;
      if (at(TokenKind::KwFor) || (at(TokenKind::KwAsync) && peekToken().is(TokenKind::KwFor))) {
        if (!skipComprehensionClauses())
          return nullptr;
        value =
            make<ComprehensionExpr>(rangeFrom(argBegin), ComprehensionExpr::Form::Generator, value);
      }
      args.push_back(value);
    }
    if (!tryConsume(TokenKind::Comma))
      break;
  }
  if (!expect(TokenKind::RParen))
    return nullptr;
  return make<CallExpr>(rangeFrom(begin), callee, copy(args), copy(keywords));
}

Expr *Parser::parseSliceItem() {
  SourceLoc begin = current().range.begin;
  Expr *lower = nullptr;
  if (!at(TokenKind::Colon)) {
    if (at(TokenKind::Star))
      return parseStarExpr();
    lower = parseNamedExprTest();
    if (!lower || !at(TokenKind::Colon))
      return lower;
  }
  consume(); // :
  auto endsSlicePart = [&] {
    return at(TokenKind::Colon) || at(TokenKind::Comma) || at(TokenKind::RBracket);
  };
  Expr *upper = nullptr;
  if (!endsSlicePart()) {
    upper = parseTest();
    if (!upper)
      return nullptr;
  }
  Expr *step = nullptr;
  if (tryConsume(TokenKind::Colon) && !endsSlicePart()) {
    step = parseTest();
    if (!step)
      return nullptr;
  }
  return make<SliceExpr>(rangeFrom(begin), lower, upper, step);
}

Expr *Parser::parseSubscriptIndex() {
  SourceLoc begin = current().range.begin;
  if (at(TokenKind::RBracket)) {
    diags.report(DiagID::err_expected_expression, current().range);
    return nullptr;
  }
  Expr *first = parseSliceItem();
  if (!first)
    return nullptr;
  if (!at(TokenKind::Comma)) {
    // `x[*a]` indexes with a tuple, as `x[*a,]` does.
    if (llvm::isa<StarredExpr>(first))
      return make<SequenceExpr>(Expr::Kind::Tuple, rangeFrom(begin),
                                context.copyArray(llvm::ArrayRef<Expr *>(first)), false);
    return first;
  }
  llvm::SmallVector<Expr *, 4> items{first};
  while (tryConsume(TokenKind::Comma)) {
    if (at(TokenKind::RBracket))
      break;
    Expr *next = parseSliceItem();
    if (!next)
      return nullptr;
    items.push_back(next);
  }
  return make<SequenceExpr>(Expr::Kind::Tuple, rangeFrom(begin), copy(items), false);
}

bool Parser::skipComprehensionClauses() {
  // for targets in or_test [if cond]... ; repeated.
  while (at(TokenKind::KwFor) || at(TokenKind::KwAsync)) {
    tryConsume(TokenKind::KwAsync);
    if (!expect(TokenKind::KwFor))
      return false;
    if (!parseExprList())
      return false;
    if (!expect(TokenKind::KwIn))
      return false;
    if (!parseOrTest())
      return false;
    while (tryConsume(TokenKind::KwIf))
      if (!parseTestNoCond())
        return false;
  }
  return true;
}

Expr *Parser::parseExprList() {
  SourceLoc begin = current().range.begin;
  auto parseItem = [&]() -> Expr * {
    return at(TokenKind::Star) ? parseStarExpr() : parseBinaryLevel(0);
  };
  Expr *first = parseItem();
  if (!first || !at(TokenKind::Comma))
    return first;
  llvm::SmallVector<Expr *, 4> elements{first};
  while (tryConsume(TokenKind::Comma)) {
    if (!startsExpression(current().kind))
      break;
    Expr *next = parseItem();
    if (!next)
      return nullptr;
    elements.push_back(next);
  }
  return make<SequenceExpr>(Expr::Kind::Tuple, rangeFrom(begin), copy(elements), false);
}

Expr *Parser::parseParenthesized() {
  DepthGuard guard(*this);
  if (guard.tooDeep())
    return expressionTooDeep(current().range);
  SourceLoc begin = consume().range.begin; // (
  if (tryConsume(TokenKind::RParen))
    return make<SequenceExpr>(Expr::Kind::Tuple, rangeFrom(begin), llvm::ArrayRef<Expr *>(), true);
  if (at(TokenKind::KwYield)) {
    Expr *value = parseYield();
    if (!value || !expect(TokenKind::RParen))
      return nullptr;
    return value;
  }
  Expr *first = at(TokenKind::Star) ? parseStarExpr() : parseNamedExprTest();
  if (!first)
    return nullptr;
  if (at(TokenKind::KwFor) || at(TokenKind::KwAsync)) {
    if (!skipComprehensionClauses() || !expect(TokenKind::RParen))
      return nullptr;
    return make<ComprehensionExpr>(rangeFrom(begin), ComprehensionExpr::Form::Generator, first);
  }
  if (tryConsume(TokenKind::RParen)) {
    // A parenthesized expression keeps its inner node; only the range of
    // a tuple includes the parentheses.
    return first;
  }
  llvm::SmallVector<Expr *, 4> elements{first};
  while (tryConsume(TokenKind::Comma)) {
    if (at(TokenKind::RParen))
      break;
    Expr *next = at(TokenKind::Star) ? parseStarExpr() : parseNamedExprTest();
    if (!next)
      return nullptr;
    elements.push_back(next);
  }
  if (!expect(TokenKind::RParen))
    return nullptr;
  return make<SequenceExpr>(Expr::Kind::Tuple, rangeFrom(begin), copy(elements), true);
}

Expr *Parser::parseListDisplay() {
  DepthGuard guard(*this);
  if (guard.tooDeep())
    return expressionTooDeep(current().range);
  SourceLoc begin = consume().range.begin; // [
  llvm::SmallVector<Expr *, 4> elements;
  while (!at(TokenKind::RBracket)) {
    Expr *element = at(TokenKind::Star) ? parseStarExpr() : parseNamedExprTest();
    if (!element)
      return nullptr;
    if (elements.empty() && (at(TokenKind::KwFor) || at(TokenKind::KwAsync))) {
      if (!skipComprehensionClauses() || !expect(TokenKind::RBracket))
        return nullptr;
      return make<ComprehensionExpr>(rangeFrom(begin), ComprehensionExpr::Form::List, element);
    }
    elements.push_back(element);
    if (!tryConsume(TokenKind::Comma))
      break;
  }
  if (!expect(TokenKind::RBracket))
    return nullptr;
  return make<SequenceExpr>(Expr::Kind::List, rangeFrom(begin), copy(elements), true);
}

Expr *Parser::parseBraceDisplay() {
  DepthGuard guard(*this);
  if (guard.tooDeep())
    return expressionTooDeep(current().range);
  SourceLoc begin = consume().range.begin; // {
  llvm::SmallVector<Expr *, 4> keys;
  llvm::SmallVector<Expr *, 4> values;
  llvm::SmallVector<Expr *, 4> elements;
  bool isDict = false;
  while (!at(TokenKind::RBrace)) {
    if (at(TokenKind::DoubleStar)) {
      consume();
      Expr *mapping = parseBinaryLevel(0);
      if (!mapping)
        return nullptr;
      isDict = true;
      keys.push_back(nullptr);
      values.push_back(mapping);
    } else {
      Expr *item = at(TokenKind::Star) ? parseStarExpr() : parseTest();
      if (!item)
        return nullptr;
      if (tryConsume(TokenKind::Colon)) {
        Expr *value = parseTest();
        if (!value)
          return nullptr;
        isDict = true;
        if (keys.empty() && (at(TokenKind::KwFor) || at(TokenKind::KwAsync))) {
          if (!skipComprehensionClauses() || !expect(TokenKind::RBrace))
            return nullptr;
          return make<ComprehensionExpr>(rangeFrom(begin), ComprehensionExpr::Form::Dict, value);
        }
        keys.push_back(item);
        values.push_back(value);
      } else {
        if (elements.empty() && (at(TokenKind::KwFor) || at(TokenKind::KwAsync))) {
          if (!skipComprehensionClauses() || !expect(TokenKind::RBrace))
            return nullptr;
          return make<ComprehensionExpr>(rangeFrom(begin), ComprehensionExpr::Form::Set, item);
        }
        elements.push_back(item);
      }
    }
    if (!tryConsume(TokenKind::Comma))
      break;
  }
  if (!expect(TokenKind::RBrace))
    return nullptr;
  if (isDict && !elements.empty()) {
    diags.report(DiagID::err_invalid_syntax, rangeFrom(begin));
    return nullptr;
  }
  if (isDict || elements.empty())
    return make<DictExpr>(rangeFrom(begin), copy(keys), copy(values));
  return make<SequenceExpr>(Expr::Kind::Set, rangeFrom(begin), copy(elements), true);
}

Expr *Parser::parseStrings() {
  SourceLoc begin = current().range.begin;
  std::string text;
  bool isBytes = false;
  bool isFormatted = false;
  bool first = true;
  std::optional<StringValue> only;
  while (at(TokenKind::String)) {
    const Token &token = consume();
    std::optional<StringValue> value = evaluateString(token, diags);
    if (!value)
      return nullptr;
    if (!first && value->isBytes != isBytes) {
      diags.report(DiagID::err_mixed_bytes_and_str, token.range);
      return nullptr;
    }
    isBytes = value->isBytes;
    isFormatted |= value->isFormatted;
    text += value->text;
    only = first ? value : std::nullopt;
    first = false;
  }
  return make<StringLiteralExpr>(rangeFrom(begin), context.copyString(text), isBytes, isFormatted);
}

Expr *Parser::parseNumber() {
  const Token &token = consume();
  std::optional<NumberValue> value = evaluateNumber(token, diags);
  if (!value)
    return nullptr;
  switch (value->kind) {
  case NumberValue::Kind::Integer:
    return make<IntLiteralExpr>(token.range, value->integer, value->integerTooLarge);
  case NumberValue::Kind::Float:
    return make<FloatLiteralExpr>(token.range, value->real);
  case NumberValue::Kind::Imaginary:
    return make<ImaginaryLiteralExpr>(token.range, value->real);
  }
  return nullptr;
}

Expr *Parser::parseYield() {
  SourceLoc begin = consume().range.begin; // yield
  Expr *value = nullptr;
  if (tryConsume(TokenKind::KwFrom)) {
    value = parseTest();
    if (!value)
      return nullptr;
  } else if (startsExpression(current().kind)) {
    value = parseTestListStarExpr();
    if (!value)
      return nullptr;
  }
  return make<YieldExpr>(rangeFrom(begin), value);
}

Expr *Parser::parseAtom() {
  const Token &token = current();
  switch (token.kind) {
  case TokenKind::Identifier:
    consume();
    return make<NameExpr>(token.range, token.text);
  case TokenKind::Number:
    return parseNumber();
  case TokenKind::String:
    return parseStrings();
  case TokenKind::KwNone:
    consume();
    return make<NoneLiteralExpr>(token.range);
  case TokenKind::KwTrue:
  case TokenKind::KwFalse:
    consume();
    return make<BoolLiteralExpr>(token.range, token.kind == TokenKind::KwTrue);
  case TokenKind::Ellipsis:
    consume();
    return make<EllipsisLiteralExpr>(token.range);
  case TokenKind::LParen:
    return parseParenthesized();
  case TokenKind::LBracket:
    return parseListDisplay();
  case TokenKind::LBrace:
    return parseBraceDisplay();
  default:
    reportUnexpected();
    return nullptr;
  }
}

} // namespace kiln::parse
