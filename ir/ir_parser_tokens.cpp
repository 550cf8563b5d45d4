//===- ir/ir_parser_tokens.cpp - Tokens of printed typed IR ---------------===//
//
// The lowest layer of the typed IR parser: lines without their comments,
// errors at a position, and the tokens every line is made of: numbers,
// quoted strings and locations.
//
//===----------------------------------------------------------------------===//

#include "ir/ir_parser_internal.h"

namespace kiln::ir::reader {

llvm::StringRef withoutComment(llvm::StringRef line) {
  char quote = 0;
  for (size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (quote) {
      if (c == '\\')
        ++i;
      else if (c == quote)
        quote = 0;
    } else if (c == '\'' || c == '"') {
      quote = c;
    } else if (c == '#') {
      return line.take_front(i).rtrim();
    }
  }
  return line.rtrim();
}

bool Parser::fail(Cursor at, const llvm::Twine &message) {
  at.skipSpace();
  if (failure.empty())
    failure =
        (bufferName + ":" + llvm::Twine(at.line) + ":" + llvm::Twine(at.column()) + ": " + message)
            .str();
  return false;
}

bool Parser::expect(Cursor &at, llvm::StringRef token) {
  return at.take(token) || fail(at, "expected '" + token + "'");
}

bool Parser::nextLine(Cursor &cursor) {
  while (lineIndex < lines.size()) {
    llvm::StringRef line = lines[lineIndex++];
    cursor = Cursor{withoutComment(line), unsigned(lineIndex), line.data()};
    if (!cursor.atEnd())
      return true;
  }
  return false;
}

bool Parser::endOfLine(Cursor &at) {
  return at.atEnd() || fail(at, "unexpected '" + at.rest + "'");
}

bool Parser::number(Cursor &at, uint64_t &result) {
  at.skipSpace();
  size_t length = 0;
  while (length < at.rest.size() && llvm::isDigit(at.rest[length]))
    ++length;
  if (length == 0 || at.rest.take_front(length).getAsInteger(10, result))
    return fail(at, "expected a number");
  at.rest = at.rest.drop_front(length);
  return true;
}

bool Parser::unsignedValue(Cursor &at, unsigned &result) {
  uint64_t wide = 0;
  if (!number(at, wide))
    return false;
  if (wide > UINT32_MAX)
    return fail(at, "number too large");
  result = unsigned(wide);
  return true;
}

bool Parser::signedValue(Cursor &at, int &result) {
  bool negative = at.take("-");
  unsigned magnitude;
  if (!unsignedValue(at, magnitude))
    return false;
  result = negative ? -int(magnitude) : int(magnitude);
  return true;
}

bool Parser::quoted(Cursor &at, std::string &result) {
  at.skipSpace();
  if (at.rest.empty() || (at.rest[0] != '\'' && at.rest[0] != '"'))
    return fail(at, "expected a quoted string");
  char quote = at.rest[0];
  result.clear();
  for (size_t i = 1; i < at.rest.size(); ++i) {
    char c = at.rest[i];
    if (c == quote) {
      at.rest = at.rest.drop_front(i + 1);
      return true;
    }
    if (c != '\\') {
      result += c;
      continue;
    }
    if (++i == at.rest.size())
      break;
    switch (at.rest[i]) {
    case 'n':
      result += '\n';
      break;
    case 'r':
      result += '\r';
      break;
    case 't':
      result += '\t';
      break;
    case 'x': {
      unsigned code;
      if (i + 2 >= at.rest.size() || at.rest.substr(i + 1, 2).getAsInteger(16, code))
        return fail(at, "bad \\x escape");
      result += char(code);
      i += 2;
      break;
    }
    default:
      result += at.rest[i];
    }
  }
  return fail(at, "unterminated string");
}

bool Parser::location(Cursor &at, Location &result) {
  if (!at.take("loc("))
    return true;
  return unsignedValue(at, result.line) && expect(at, ":") && unsignedValue(at, result.column) &&
         expect(at, ")");
}

} // namespace kiln::ir::reader
