//===- frontend/parse/lexer.cpp - Python tokenizer ------------------------===//

#include "frontend/parse/lexer.h"

#include <llvm/ADT/StringExtras.h>
#include <llvm/ADT/StringSwitch.h>
#include <llvm/Support/ConvertUTF.h>
#include <llvm/Support/Format.h>

#include <algorithm>
#include <cassert>

namespace kiln {

namespace {
struct CodePointRange {
  uint32_t low;
  uint32_t high;
};
#include "frontend/parse/unicode_identifiers.inc"

bool inRanges(llvm::ArrayRef<CodePointRange> ranges, uint32_t codePoint) {
  auto it = std::upper_bound(ranges.begin(), ranges.end(), codePoint,
                             [](uint32_t value, const CodePointRange &r) { return value < r.low; });
  return it != ranges.begin() && codePoint <= std::prev(it)->high;
}
} // namespace

llvm::StringRef describeTokenKind(TokenKind kind) {
  switch (kind) {
#define TOKEN(NAME, DESCRIPTION)                                                                   \
  case TokenKind::NAME:                                                                            \
    return DESCRIPTION;
#include "frontend/parse/token_kinds.def"
  }
  return "token";
}

bool Token::isKeyword() const {
  switch (kind) {
#define KEYWORD(NAME, SPELLING)                                                                    \
  case TokenKind::NAME:                                                                            \
    return true;
#include "frontend/parse/token_kinds.def"
  default:
    return false;
  }
}

namespace {

// CPython's limits: deeper nesting is rejected rather than risking the
// parser's stack.
constexpr unsigned maxBracketDepth = 200;
constexpr unsigned maxIndentDepth = 100;

bool isAsciiIdentifierStart(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool isAsciiIdentifierContinue(unsigned char c) {
  return isAsciiIdentifierStart(c) || (c >= '0' && c <= '9');
}

/// Decodes the UTF-8 sequence at the start of `bytes`; nothing if malformed.
std::optional<std::pair<uint32_t, unsigned>> decodeUtf8(llvm::StringRef bytes) {
  unsigned char lead = static_cast<unsigned char>(bytes[0]);
  unsigned length = llvm::getNumBytesForUTF8(lead);
  const auto *start = reinterpret_cast<const llvm::UTF8 *>(bytes.data());
  if (length > bytes.size() || !llvm::isLegalUTF8Sequence(start, start + length))
    return std::nullopt;
  uint32_t codePoint = length == 1 ? lead : lead & (0x7F >> length);
  for (unsigned i = 1; i < length; ++i)
    codePoint = (codePoint << 6) | (static_cast<unsigned char>(bytes[i]) & 0x3F);
  return std::make_pair(codePoint, length);
}
bool isDigit(char c) {
  return c >= '0' && c <= '9';
}

TokenKind keywordKind(llvm::StringRef word) {
  return llvm::StringSwitch<TokenKind>(word)
#define KEYWORD(NAME, SPELLING) .Case(SPELLING, TokenKind::NAME)
#include "frontend/parse/token_kinds.def"
      .Default(TokenKind::Identifier);
}

class Lexer {
public:
  Lexer(const SourceManager &sources, uint32_t file, DiagnosticEngine &diags)
      : file(file), text(sources.contents(file)), diags(diags) {}
  Lexer(const SourceManager &sources, uint32_t file, uint32_t begin, uint32_t end,
        DiagnosticEngine &diags)
      : file(file), text(sources.contents(file).substr(0, end)), diags(diags), pos(begin),
        expressionMode(true) {}

  std::vector<Token> run();

private:
  SourceLoc locAt(size_t offset) const { return {file, static_cast<uint32_t>(offset)}; }
  SourceRange rangeOf(size_t begin, size_t end) const { return {locAt(begin), locAt(end)}; }
  char peek(size_t ahead = 0) const { return pos + ahead < text.size() ? text[pos + ahead] : '\0'; }
  bool atEnd() const { return pos >= text.size(); }
  bool atLineBreak() const { return peek() == '\n' || peek() == '\r'; }
  void skipLineBreak() {
    if (peek() == '\r' && peek(1) == '\n')
      pos += 2;
    else
      ++pos;
  }
  void emit(TokenKind kind, size_t begin, size_t end) {
    tokens.push_back(Token{kind, rangeOf(begin, end), text.slice(begin, end)});
  }

  void handleIndentation();
  void lexToken();
  void lexIdentifierOrString();
  void lexNumber();
  void lexString(size_t begin, size_t quote);
  void lexOperator();
  /// Advances over an identifier; false (after a diagnostic) on bad UTF-8.
  bool scanIdentifier();
  void reportInvalidCharacter(size_t begin, size_t length, unsigned codePoint);

  uint32_t file;
  llvm::StringRef text;
  DiagnosticEngine &diags;
  std::vector<Token> tokens;
  size_t pos = 0;

  struct OpenBracket {
    char bracket;
    size_t offset;
    size_t tokenIndex; // of the bracket in `tokens`
  };
  std::vector<OpenBracket> brackets;
  /// Indentation columns with tabs to multiples of 8, and with tabs counted
  /// as 1, as CPython tracks them to detect inconsistent tab use.
  std::vector<unsigned> indents{0};
  std::vector<unsigned> altIndents{0};
  bool atLineStart = true;
  bool lineHasTokens = false;
  /// Lexing a lone expression: no NEWLINE, INDENT or DEDENT tokens.
  bool expressionMode = false;
  unsigned errorsBefore = 0;
  bool unindentReported = false;
};

std::vector<Token> Lexer::run() {
  errorsBefore = diags.errorCount();
  if (pos == 0 && text.starts_with("\xEF\xBB\xBF"))
    pos = 3;
  // CPython decodes the whole file before tokenizing it, so malformed UTF-8
  // anywhere, in strings and comments too, is an error: report the first
  // bad byte. (In an identifier the same byte is reported once.)
  for (size_t at = pos; at < text.size();) {
    if (static_cast<unsigned char>(text[at]) < 0x80) {
      ++at;
      continue;
    }
    std::optional<std::pair<uint32_t, unsigned>> decoded = decodeUtf8(text.substr(at));
    if (!decoded) {
      diags.report(DiagID::err_invalid_utf8, rangeOf(at, at + 1));
      break;
    }
    at += decoded->second;
  }
  if (expressionMode)
    atLineStart = false;
  while (true) {
    if (atLineStart && brackets.empty()) {
      handleIndentation();
      if (atEnd())
        break;
      if (atLineStart)
        continue; // blank or comment-only line
    }
    // Whitespace between tokens.
    while (peek() == ' ' || peek() == '\t' || peek() == '\f')
      ++pos;
    if (atEnd())
      break;
    char c = peek();
    if (c == '#') {
      while (!atEnd() && !atLineBreak())
        ++pos;
      continue;
    }
    if (atLineBreak()) {
      size_t begin = pos;
      skipLineBreak();
      if (brackets.empty() && !expressionMode) {
        if (lineHasTokens)
          emit(TokenKind::Newline, begin, begin + 1);
        atLineStart = true;
        lineHasTokens = false;
      }
      continue;
    }
    if (c == '\\') {
      size_t begin = pos;
      ++pos;
      if (atLineBreak()) {
        skipLineBreak();
        if (atEnd())
          diags.report(DiagID::err_eof_after_continuation, rangeOf(begin, begin + 1));
        continue;
      }
      diags.report(DiagID::err_char_after_continuation, rangeOf(begin, begin + 1));
      emit(TokenKind::Invalid, begin, begin + 1);
      continue;
    }
    lexToken();
    lineHasTokens = true;
  }

  size_t end = text.size();
  if (!brackets.empty()) {
    // Everything after an unclosed bracket was read as part of its
    // expression; parsing it would only produce confusing errors. Like
    // CPython, report the bracket (unless an error inside it, such as an
    // unterminated string, explains it already) and end the input there.
    const OpenBracket &outermost = brackets.front();
    const OpenBracket &innermost = brackets.back();
    if (diags.errorCount() == errorsBefore)
      diags.report(DiagID::err_bracket_never_closed,
                   rangeOf(innermost.offset, innermost.offset + 1),
                   {std::string(1, innermost.bracket)});
    tokens.resize(outermost.tokenIndex);
    emit(TokenKind::Invalid, outermost.offset, outermost.offset + 1);
    lineHasTokens = true;
  }
  if (lineHasTokens && !expressionMode)
    emit(TokenKind::Newline, end, end);
  for (size_t i = 1; i < indents.size(); ++i)
    emit(TokenKind::Dedent, end, end);
  emit(TokenKind::EndOfFile, end, end);
  return std::move(tokens);
}

void Lexer::handleIndentation() {
  unsigned column = 0;
  unsigned altColumn = 0;
  size_t begin = pos;
  while (true) {
    char c = peek();
    if (c == ' ') {
      ++column;
      ++altColumn;
    } else if (c == '\t') {
      column = (column / 8 + 1) * 8;
      ++altColumn;
    } else if (c == '\f') {
      column = altColumn = 0;
    } else if (c == '\\' && (peek(1) == '\n' || peek(1) == '\r')) {
      ++pos;
      skipLineBreak();
      continue;
    } else {
      break;
    }
    ++pos;
  }
  if (atEnd())
    return;
  if (peek() == '#' || atLineBreak()) {
    // Blank lines and comment-only lines do not affect indentation.
    while (!atEnd() && !atLineBreak())
      ++pos;
    if (!atEnd())
      skipLineBreak();
    return;
  }
  atLineStart = false;

  if (column == indents.back()) {
    if (altColumn != altIndents.back())
      diags.report(DiagID::err_inconsistent_tabs, rangeOf(begin, pos));
    return;
  }
  if (column > indents.back()) {
    if (altColumn <= altIndents.back())
      diags.report(DiagID::err_inconsistent_tabs, rangeOf(begin, pos));
    if (indents.size() > maxIndentDepth) {
      diags.report(DiagID::err_too_deeply_indented, rangeOf(begin, pos));
      return;
    }
    indents.push_back(column);
    altIndents.push_back(altColumn);
    emit(TokenKind::Indent, begin, pos);
    return;
  }
  // Dedent to an enclosing level; a column that matches none is an error.
  // The line then stays in the inner block and is dropped (an Invalid token),
  // so that one bad indentation gives one diagnostic.
  auto level = std::find(indents.begin(), indents.end(), column);
  if (level == indents.end()) {
    if (!unindentReported)
      diags.report(DiagID::err_unindent_mismatch, rangeOf(begin, pos));
    unindentReported = true;
    emit(TokenKind::Invalid, pos, pos);
    return;
  }
  while (indents.back() != column) {
    indents.pop_back();
    altIndents.pop_back();
    emit(TokenKind::Dedent, pos, pos);
  }
  if (altColumn != altIndents.back())
    diags.report(DiagID::err_inconsistent_tabs, rangeOf(begin, pos));
}

void Lexer::lexToken() {
  unsigned char c = static_cast<unsigned char>(peek());
  if (isDigit(static_cast<char>(c)) || (c == '.' && isDigit(peek(1)))) {
    lexNumber();
    return;
  }
  if (c == '"' || c == '\'') {
    lexString(pos, pos);
    return;
  }
  if (isAsciiIdentifierStart(c) || c >= 0x80) {
    lexIdentifierOrString();
    return;
  }
  lexOperator();
}

void Lexer::reportInvalidCharacter(size_t begin, size_t length, unsigned codePoint) {
  std::string shown = text.substr(begin, length).str();
  std::string hex;
  llvm::raw_string_ostream(hex) << llvm::format("U+%04X", codePoint);
  diags.report(DiagID::err_invalid_character, rangeOf(begin, begin + length), {shown, hex});
}

bool Lexer::scanIdentifier() {
  // Identifiers are ASCII letters, digits and '_', or the Unicode characters
  // of XID_Start and XID_Continue (PEP 3131). Malformed UTF-8 is an error; a
  // character that cannot be in an identifier ends it.
  bool first = true;
  while (!atEnd()) {
    unsigned char c = static_cast<unsigned char>(peek());
    if (c < 0x80) {
      if (!(first ? isAsciiIdentifierStart(c) : isAsciiIdentifierContinue(c)))
        return true;
      ++pos;
      first = false;
      continue;
    }
    std::optional<std::pair<uint32_t, unsigned>> decoded = decodeUtf8(text.substr(pos));
    if (!decoded) {
      diags.report(DiagID::err_invalid_utf8, rangeOf(pos, pos + 1));
      ++pos;
      return false;
    }
    auto [codePoint, length] = *decoded;
    if (!inRanges(first ? llvm::ArrayRef(identifierStartRanges)
                        : llvm::ArrayRef(identifierContinueRanges),
                  codePoint)) {
      if (!first)
        return true;
      reportInvalidCharacter(pos, length, codePoint);
      pos += length;
      return false;
    }
    pos += length;
    first = false;
  }
  return true;
}

void Lexer::lexIdentifierOrString() {
  size_t begin = pos;
  if (!scanIdentifier()) {
    emit(TokenKind::Invalid, begin, pos);
    return;
  }
  llvm::StringRef word = text.slice(begin, pos);
  if ((peek() == '"' || peek() == '\'') && word.size() <= 2) {
    std::string lower = word.lower();
    if (lower == "r" || lower == "u" || lower == "b" || lower == "f" || lower == "br" ||
        lower == "rb" || lower == "fr" || lower == "rf") {
      lexString(begin, pos);
      return;
    }
  }
  emit(keywordKind(word), begin, pos);
}

void Lexer::lexNumber() {
  size_t begin = pos;
  auto consumeDigits = [&](auto isValidDigit) {
    while (!atEnd()) {
      char c = peek();
      if (isValidDigit(c) || (c == '_' && isValidDigit(peek(1))))
        ++pos;
      else
        break;
    }
  };
  auto isDec = [](char c) { return isDigit(c); };
  if (peek() == '0' && (peek(1) == 'x' || peek(1) == 'X' || peek(1) == 'o' || peek(1) == 'O' ||
                        peek(1) == 'b' || peek(1) == 'B')) {
    char base = static_cast<char>(peek(1) | 0x20);
    pos += 2;
    if (peek() == '_')
      ++pos;
    if (base == 'x')
      consumeDigits([](char c) { return llvm::isHexDigit(c); });
    else if (base == 'o')
      consumeDigits([](char c) { return c >= '0' && c <= '7'; });
    else
      consumeDigits([](char c) { return c == '0' || c == '1'; });
  } else {
    consumeDigits(isDec);
    if (peek() == '.' && peek(1) != '.') {
      ++pos;
      consumeDigits(isDec);
    }
    if ((peek() == 'e' || peek() == 'E') &&
        (isDigit(peek(1)) || ((peek(1) == '+' || peek(1) == '-') && isDigit(peek(2))))) {
      pos += (peek(1) == '+' || peek(1) == '-') ? 2 : 1;
      consumeDigits(isDec);
    }
    if (peek() == 'j' || peek() == 'J')
      ++pos;
  }
  // A literal running straight into a name ("1abc", "0x1g", "1__0") is a
  // single bad token, as in CPython.
  if (!atEnd() && isAsciiIdentifierContinue(static_cast<unsigned char>(peek()))) {
    while (!atEnd() && isAsciiIdentifierContinue(static_cast<unsigned char>(peek())))
      ++pos;
    diags.report(DiagID::err_invalid_number_literal, rangeOf(begin, pos), {text.slice(begin, pos)});
    emit(TokenKind::Invalid, begin, pos);
    return;
  }
  emit(TokenKind::Number, begin, pos);
}

void Lexer::lexString(size_t begin, size_t quotePos) {
  pos = quotePos;
  char quote = peek();
  bool triple = peek(1) == quote && peek(2) == quote;
  pos += triple ? 3 : 1;
  while (true) {
    if (atEnd()) {
      diags.report(triple ? DiagID::err_unterminated_triple_string
                          : DiagID::err_unterminated_string,
                   rangeOf(begin, quotePos + 1));
      emit(TokenKind::Invalid, begin, pos);
      return;
    }
    char c = peek();
    if (c == '\\') {
      pos += 1;
      if (atLineBreak())
        skipLineBreak();
      else if (!atEnd())
        ++pos;
      continue;
    }
    if (!triple && (c == '\n' || c == '\r')) {
      diags.report(DiagID::err_unterminated_string, rangeOf(begin, quotePos + 1));
      emit(TokenKind::Invalid, begin, pos);
      return;
    }
    if (c == quote && (!triple || (peek(1) == quote && peek(2) == quote))) {
      pos += triple ? 3 : 1;
      emit(TokenKind::String, begin, pos);
      return;
    }
    ++pos;
  }
}

void Lexer::lexOperator() {
  size_t begin = pos;
  struct Spelling {
    llvm::StringLiteral text;
    TokenKind kind;
  };
  // Longest spellings first.
  static constexpr Spelling spellings[] = {
      {"**=", TokenKind::DoubleStarEqual},
      {"//=", TokenKind::DoubleSlashEqual},
      {">>=", TokenKind::RightShiftEqual},
      {"<<=", TokenKind::LeftShiftEqual},
      {"...", TokenKind::Ellipsis},
      {"->", TokenKind::Arrow},
      {":=", TokenKind::Walrus},
      {"**", TokenKind::DoubleStar},
      {"//", TokenKind::DoubleSlash},
      {"<<", TokenKind::LeftShift},
      {">>", TokenKind::RightShift},
      {"<=", TokenKind::LessEqual},
      {">=", TokenKind::GreaterEqual},
      {"==", TokenKind::EqualEqual},
      {"!=", TokenKind::NotEqual},
      {"+=", TokenKind::PlusEqual},
      {"-=", TokenKind::MinusEqual},
      {"*=", TokenKind::StarEqual},
      {"/=", TokenKind::SlashEqual},
      {"%=", TokenKind::PercentEqual},
      {"&=", TokenKind::AmpersandEqual},
      {"|=", TokenKind::PipeEqual},
      {"^=", TokenKind::CaretEqual},
      {"@=", TokenKind::AtEqual},
      {"(", TokenKind::LParen},
      {")", TokenKind::RParen},
      {"[", TokenKind::LBracket},
      {"]", TokenKind::RBracket},
      {"{", TokenKind::LBrace},
      {"}", TokenKind::RBrace},
      {",", TokenKind::Comma},
      {":", TokenKind::Colon},
      {";", TokenKind::Semicolon},
      {".", TokenKind::Dot},
      {"=", TokenKind::Equal},
      {"+", TokenKind::Plus},
      {"-", TokenKind::Minus},
      {"*", TokenKind::Star},
      {"/", TokenKind::Slash},
      {"%", TokenKind::Percent},
      {"@", TokenKind::At},
      {"&", TokenKind::Ampersand},
      {"|", TokenKind::Pipe},
      {"^", TokenKind::Caret},
      {"~", TokenKind::Tilde},
      {"<", TokenKind::Less},
      {">", TokenKind::Greater},
  };
  llvm::StringRef rest = text.substr(pos);
  for (const Spelling &spelling : spellings) {
    if (!rest.starts_with(spelling.text))
      continue;
    pos += spelling.text.size();
    TokenKind kind = spelling.kind;
    char c = spelling.text[0];
    if (kind == TokenKind::LParen || kind == TokenKind::LBracket || kind == TokenKind::LBrace) {
      if (brackets.size() >= maxBracketDepth) {
        diags.report(DiagID::err_too_many_nested_brackets, rangeOf(begin, pos));
        emit(TokenKind::Invalid, begin, pos);
        return;
      }
      brackets.push_back({c, begin, tokens.size()});
    } else if (kind == TokenKind::RParen || kind == TokenKind::RBracket ||
               kind == TokenKind::RBrace) {
      char expected = c == ')' ? '(' : c == ']' ? '[' : '{';
      if (brackets.empty()) {
        diags.report(DiagID::err_unmatched_bracket, rangeOf(begin, pos), {std::string(1, c)});
        emit(TokenKind::Invalid, begin, pos);
        return;
      }
      if (brackets.back().bracket != expected) {
        // An Invalid token keeps the parser from adding "expected ']'".
        diags.report(DiagID::err_mismatched_bracket, rangeOf(begin, pos),
                     {std::string(1, c), std::string(1, brackets.back().bracket)});
        brackets.pop_back();
        emit(TokenKind::Invalid, begin, pos);
        return;
      }
      brackets.pop_back();
    }
    emit(kind, begin, pos);
    return;
  }
  unsigned char c = static_cast<unsigned char>(peek());
  if (c == 0)
    diags.report(DiagID::err_null_byte, rangeOf(begin, begin + 1));
  else
    reportInvalidCharacter(begin, 1, c);
  ++pos;
  emit(TokenKind::Invalid, begin, pos);
}

} // namespace

std::vector<Token> tokenize(const SourceManager &sources, uint32_t file, DiagnosticEngine &diags) {
  return Lexer(sources, file, diags).run();
}

std::vector<Token> tokenizeExpression(const SourceManager &sources, uint32_t file, uint32_t begin,
                                      uint32_t end, DiagnosticEngine &diags) {
  return Lexer(sources, file, begin, end, diags).run();
}

} // namespace kiln
