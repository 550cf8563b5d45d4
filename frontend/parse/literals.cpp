//===- frontend/parse/literals.cpp ----------------------------------------------===//

#include "frontend/parse/literals.h"

#include <llvm/ADT/StringExtras.h>
#include <llvm/Support/Unicode.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>

namespace kiln {

namespace {

std::optional<uint64_t> parseDigits(llvm::StringRef digits, unsigned radix) {
  uint64_t value = 0;
  for (char c : digits) {
    if (c == '_')
      continue;
    unsigned digit = llvm::hexDigitValue(c);
    if (digit >= radix)
      return std::nullopt;
    if (value > (UINT64_MAX - digit) / radix)
      return std::nullopt;
    value = value * radix + digit;
  }
  return value;
}

bool hasDigits(llvm::StringRef text) {
  return llvm::any_of(text, [](char c) { return c != '_'; });
}

/// Encodes a code point as UTF-8. Lone surrogates are encoded too, as Python
/// keeps them in str literals ("surrogatepass").
void appendUtf8(std::string &out, uint32_t codePoint) {
  auto byte = [&](uint32_t b) { out.push_back(static_cast<char>(b)); };
  if (codePoint < 0x80) {
    byte(codePoint);
  } else if (codePoint < 0x800) {
    byte(0xC0 | (codePoint >> 6));
    byte(0x80 | (codePoint & 0x3F));
  } else if (codePoint < 0x10000) {
    byte(0xE0 | (codePoint >> 12));
    byte(0x80 | ((codePoint >> 6) & 0x3F));
    byte(0x80 | (codePoint & 0x3F));
  } else {
    byte(0xF0 | (codePoint >> 18));
    byte(0x80 | ((codePoint >> 12) & 0x3F));
    byte(0x80 | ((codePoint >> 6) & 0x3F));
    byte(0x80 | (codePoint & 0x3F));
  }
}

} // namespace

std::optional<NumberValue> evaluateNumber(const Token &token, DiagnosticEngine &diags) {
  llvm::StringRef text = token.text;
  if (text.size() > 1 && text[0] == '0' && llvm::StringRef("xXoObB").contains(text[1])) {
    char base = static_cast<char>(text[1] | 0x20);
    unsigned radix = base == 'x' ? 16 : base == 'o' ? 8 : 2;
    llvm::StringRef digits = text.drop_front(2);
    if (!hasDigits(digits)) {
      diags.report(DiagID::err_invalid_number_literal, token.range, {text});
      return std::nullopt;
    }
    std::optional<uint64_t> value = parseDigits(digits, radix);
    return NumberValue{NumberValue::Kind::Integer, value.value_or(0), !value, 0};
  }

  bool imaginary = text.ends_with("j") || text.ends_with("J");
  llvm::StringRef body = imaginary ? text.drop_back() : text;
  bool isFloat = imaginary || body.find_first_of(".eE") != llvm::StringRef::npos;
  if (!isFloat) {
    if (body.size() > 1 && body[0] == '0' &&
        llvm::any_of(body, [](char c) { return c != '0' && c != '_'; })) {
      diags.report(DiagID::err_leading_zeros, token.range);
      return std::nullopt;
    }
    std::optional<uint64_t> value = parseDigits(body, 10);
    return NumberValue{NumberValue::Kind::Integer, value.value_or(0), !value, 0};
  }

  std::string cleaned;
  for (char c : body)
    if (c != '_')
      cleaned.push_back(c);
  char *end = nullptr;
  errno = 0;
  double value = std::strtod(cleaned.c_str(), &end);
  if (end != cleaned.c_str() + cleaned.size()) {
    diags.report(DiagID::err_invalid_number_literal, token.range, {text});
    return std::nullopt;
  }
  // Like CPython, a literal too large for a double is infinity, not an error.
  return NumberValue{imaginary ? NumberValue::Kind::Imaginary : NumberValue::Kind::Float, 0, false,
                     value};
}

std::optional<StringValue> evaluateString(const Token &token, DiagnosticEngine &diags) {
  llvm::StringRef text = token.text;
  size_t prefixLength = text.find_first_of("'\"");
  std::string prefix = text.take_front(prefixLength).lower();
  bool raw = prefix.find('r') != std::string::npos;
  StringValue result;
  result.isBytes = prefix.find('b') != std::string::npos;
  result.isFormatted = prefix.find('f') != std::string::npos;

  llvm::StringRef quoted = text.drop_front(prefixLength);
  size_t quoteLength =
      quoted.size() >= 6 && (quoted.starts_with("\"\"\"") || quoted.starts_with("'''")) ? 3 : 1;
  llvm::StringRef body = quoted.drop_front(quoteLength).drop_back(quoteLength);
  result.contentOffset =
      token.range.begin.offset + static_cast<uint32_t>(prefixLength + quoteLength);

  auto bodyLoc = [&](size_t i) {
    return token.range.begin.advancedBy(static_cast<uint32_t>(prefixLength + quoteLength + i));
  };

  std::string &out = result.text;
  for (size_t i = 0; i < body.size(); ++i) {
    char c = body[i];
    if (result.isBytes && static_cast<unsigned char>(c) >= 0x80) {
      diags.report(DiagID::err_bytes_non_ascii, SourceRange(bodyLoc(i), bodyLoc(i + 1)));
      return std::nullopt;
    }
    if (c != '\\' || raw || result.isFormatted) {
      out.push_back(c);
      continue;
    }
    result.isVerbatim = false;
    if (i + 1 >= body.size()) {
      out.push_back('\\');
      break;
    }
    char escape = body[++i];
    switch (escape) {
    case '\n':
      continue;
    case '\r':
      if (i + 1 < body.size() && body[i + 1] == '\n')
        ++i;
      continue;
    case '\\':
    case '\'':
    case '"':
      out.push_back(escape);
      continue;
    case 'a':
      out.push_back('\a');
      continue;
    case 'b':
      out.push_back('\b');
      continue;
    case 'f':
      out.push_back('\f');
      continue;
    case 'n':
      out.push_back('\n');
      continue;
    case 'r':
      out.push_back('\r');
      continue;
    case 't':
      out.push_back('\t');
      continue;
    case 'v':
      out.push_back('\v');
      continue;
    default:
      break;
    }
    if (escape >= '0' && escape <= '7') {
      unsigned value = 0;
      size_t digits = 0;
      while (digits < 3 && i < body.size() && body[i] >= '0' && body[i] <= '7') {
        value = value * 8 + static_cast<unsigned>(body[i] - '0');
        ++i;
        ++digits;
      }
      --i;
      if (result.isBytes)
        out.push_back(static_cast<char>(value & 0xFF));
      else
        appendUtf8(out, value);
      continue;
    }
    if (escape == 'N' && !result.isBytes) {
      size_t close = body.find('}', i);
      std::optional<char32_t> codePoint;
      if (i + 1 < body.size() && body[i + 1] == '{' && close != llvm::StringRef::npos)
        codePoint = llvm::sys::unicode::nameToCodepointStrict(body.slice(i + 2, close));
      if (!codePoint) {
        diags.report(DiagID::err_bad_string_escape, SourceRange(bodyLoc(i - 1), bodyLoc(i + 1)),
                     {"\\N"});
        return std::nullopt;
      }
      appendUtf8(out, *codePoint);
      i = close;
      continue;
    }
    unsigned width = escape == 'x'                        ? 2
                     : (escape == 'u' && !result.isBytes) ? 4
                     : (escape == 'U' && !result.isBytes) ? 8
                                                          : 0;
    if (width) {
      llvm::StringRef hex = body.substr(i + 1, width);
      uint32_t value = 0;
      if (hex.size() != width || !llvm::all_of(hex, llvm::isHexDigit) ||
          hex.getAsInteger(16, value) || value > 0x10FFFF) {
        diags.report(DiagID::err_bad_string_escape, SourceRange(bodyLoc(i - 1), bodyLoc(i + 1)),
                     {std::string("\\") + escape});
        return std::nullopt;
      }
      i += width;
      if (result.isBytes)
        out.push_back(static_cast<char>(value));
      else
        appendUtf8(out, value);
      continue;
    }
    // Unknown escapes such as "\d" keep their backslash, as in Python.
    out.push_back('\\');
    out.push_back(escape);
  }
  return result;
}

} // namespace kiln
