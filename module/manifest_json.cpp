//===- module/manifest_json.cpp - JSON of untrusted manifests -------------===//
//
// A recursive-descent parser of RFC 8259 JSON whose recursion is bounded by
// the nesting limit, which is checked before each descent.
//
//===----------------------------------------------------------------------===//

#include "module/manifest_json.h"

#include <cerrno>
#include <cstdlib>

namespace kiln::module {

std::optional<int64_t> JsonValue::integer() const {
  if (kind_ == Kind::Integer)
    return integer_;
  return std::nullopt;
}

std::optional<bool> JsonValue::boolean() const {
  if (kind_ == Kind::Boolean)
    return boolean_;
  return std::nullopt;
}

std::optional<double> JsonValue::number() const {
  if (kind_ == Kind::Integer)
    return double(integer_);
  if (kind_ == Kind::Number)
    return number_;
  return std::nullopt;
}

const JsonValue *JsonValue::member(std::string_view key) const {
  for (const auto &[name, value] : members_)
    if (name == key)
      return &value;
  return nullptr;
}

class JsonParser {
public:
  JsonParser(std::string_view text, unsigned nestingLimit, const JsonOutline *outline)
      : text_(text), nestingLimit_(nestingLimit), outline_(outline) {}

  std::optional<JsonValue> parseDocument(std::string &problem) {
    JsonValue value;
    skipSpace();
    if (parseValue(value, 0)) {
      skipSpace();
      if (at_ == text_.size())
        return value;
      fail("there is more after the value");
    }
    problem = problem_;
    return std::nullopt;
  }

private:
  std::string_view text_;
  unsigned nestingLimit_;
  const JsonOutline *outline_; ///< null: build everything
  size_t at_ = 0;
  std::string problem_;

  bool fail(const std::string &what) {
    if (problem_.empty())
      problem_ = "it is not JSON: " + what + " at byte " + std::to_string(at_);
    return false;
  }

  bool atEnd() const { return at_ >= text_.size(); }
  char peek() const { return atEnd() ? '\0' : text_[at_]; }

  void skipSpace() {
    while (!atEnd() && (peek() == ' ' || peek() == '\t' || peek() == '\n' || peek() == '\r'))
      ++at_;
  }

  bool expectWord(std::string_view word) {
    if (text_.substr(at_, word.size()) != word)
      return fail("an unknown word");
    at_ += word.size();
    return true;
  }

  bool parseValue(JsonValue &value, unsigned depth) {
    value.begin_ = at_;
    if (!parseValueText(value, depth))
      return false;
    value.end_ = at_;
    return true;
  }

  bool parseValueText(JsonValue &value, unsigned depth) {
    switch (peek()) {
    case '{':
    case '[':
      if (depth >= nestingLimit_) {
        problem_ = "it nests deeper than " + std::to_string(nestingLimit_) + " levels at byte " +
                   std::to_string(at_);
        return false;
      }
      return peek() == '{' ? parseObject(value, depth + 1) : parseArray(value, depth + 1);
    case '"':
      value.kind_ = JsonValue::Kind::String;
      value.text_.clear();
      return parseString(value.text_);
    case 't':
      value.kind_ = JsonValue::Kind::Boolean;
      value.boolean_ = true;
      return expectWord("true");
    case 'f':
      value.kind_ = JsonValue::Kind::Boolean;
      return expectWord("false");
    case 'n':
      return expectWord("null");
    default:
      return parseNumber(value);
    }
  }

  bool parseArray(JsonValue &value, unsigned depth) {
    value.kind_ = JsonValue::Kind::Array;
    ++at_;
    skipSpace();
    if (peek() == ']') {
      ++at_;
      return true;
    }
    // Below the build depth, elements are checked but not kept: one scratch
    // value takes each in turn.
    JsonValue scratch;
    bool keep = !outline_ || depth < outline_->depth;
    while (true) {
      skipSpace();
      JsonValue &element = keep ? value.elements_.emplace_back() : scratch;
      if (!parseValue(element, depth))
        return false;
      skipSpace();
      if (peek() == ']') {
        ++at_;
        return true;
      }
      if (peek() != ',')
        return fail("an array lacks ',' or ']'");
      ++at_;
    }
  }

  bool parseObject(JsonValue &value, unsigned depth) {
    value.kind_ = JsonValue::Kind::Object;
    ++at_;
    skipSpace();
    if (peek() == '}') {
      ++at_;
      return true;
    }
    JsonValue scratch;
    std::string key;
    while (true) {
      skipSpace();
      key.clear();
      if (peek() != '"' || !parseString(key))
        return fail("an object's key is not a string");
      skipSpace();
      if (peek() != ':')
        return fail("an object lacks ':'");
      ++at_;
      skipSpace();
      JsonValue &member =
          keeps(depth, key) ? value.members_.emplace_back(key, JsonValue()).second : scratch;
      if (!parseValue(member, depth))
        return false;
      skipSpace();
      if (peek() == '}') {
        ++at_;
        return true;
      }
      if (peek() != ',')
        return fail("an object lacks ',' or '}'");
      ++at_;
    }
  }

  /// Whether the member `key` of an object `depth` levels deep is built.
  bool keeps(unsigned depth, std::string_view key) const {
    if (!outline_ || depth < outline_->depth)
      return true;
    if (depth > outline_->depth)
      return false;
    for (std::string_view wanted : outline_->keys)
      if (key == wanted)
        return true;
    return false;
  }

  bool hexDigits(unsigned &code) {
    if (text_.size() - at_ < 4)
      return fail("a \\u escape is cut short");
    code = 0;
    for (int i = 0; i < 4; ++i) {
      char c = text_[at_++];
      unsigned digit = c >= '0' && c <= '9'   ? unsigned(c - '0')
                       : c >= 'a' && c <= 'f' ? unsigned(c - 'a' + 10)
                       : c >= 'A' && c <= 'F' ? unsigned(c - 'A' + 10)
                                              : 16;
      if (digit == 16)
        return fail("a \\u escape has a non-hex digit");
      code = code * 16 + digit;
    }
    return true;
  }

  static void appendUtf8(std::string &out, unsigned code) {
    if (code < 0x80) {
      out += char(code);
    } else if (code < 0x800) {
      out += char(0xc0 | (code >> 6));
      out += char(0x80 | (code & 0x3f));
    } else if (code < 0x10000) {
      out += char(0xe0 | (code >> 12));
      out += char(0x80 | ((code >> 6) & 0x3f));
      out += char(0x80 | (code & 0x3f));
    } else {
      out += char(0xf0 | (code >> 18));
      out += char(0x80 | ((code >> 12) & 0x3f));
      out += char(0x80 | ((code >> 6) & 0x3f));
      out += char(0x80 | (code & 0x3f));
    }
  }

  bool parseString(std::string &out) {
    ++at_;
    while (true) {
      if (atEnd())
        return fail("a string is not closed");
      char c = text_[at_++];
      if (c == '"')
        return true;
      if (static_cast<unsigned char>(c) < 0x20)
        return fail("a string holds a control character");
      if (c != '\\') {
        // Copy the run of plain characters this one starts in one append.
        size_t start = at_ - 1;
        while (!atEnd() && text_[at_] != '"' && text_[at_] != '\\' &&
               static_cast<unsigned char>(text_[at_]) >= 0x20)
          ++at_;
        out.append(text_.data() + start, at_ - start);
        continue;
      }
      if (atEnd())
        return fail("a string is not closed");
      char escaped = text_[at_++];
      switch (escaped) {
      case '"':
      case '\\':
      case '/':
        out += escaped;
        break;
      case 'b':
        out += '\b';
        break;
      case 'f':
        out += '\f';
        break;
      case 'n':
        out += '\n';
        break;
      case 'r':
        out += '\r';
        break;
      case 't':
        out += '\t';
        break;
      case 'u': {
        unsigned code = 0;
        if (!hexDigits(code))
          return false;
        if (code >= 0xd800 && code < 0xdc00) {
          unsigned low = 0;
          if (text_.substr(at_, 2) != "\\u")
            return fail("a surrogate pair is not complete");
          at_ += 2;
          if (!hexDigits(low))
            return false;
          if (low < 0xdc00 || low >= 0xe000)
            return fail("a surrogate pair is not complete");
          code = 0x10000 + ((code - 0xd800) << 10) + (low - 0xdc00);
        } else if (code >= 0xdc00 && code < 0xe000) {
          return fail("a surrogate pair is not complete");
        }
        appendUtf8(out, code);
        break;
      }
      default:
        return fail("a string has an unknown escape");
      }
    }
  }

  bool parseNumber(JsonValue &value) {
    size_t start = at_;
    bool integral = true;
    if (peek() == '-')
      ++at_;
    if (!(peek() >= '0' && peek() <= '9'))
      return fail("a value is not JSON");
    auto digits = [&] {
      while (peek() >= '0' && peek() <= '9')
        ++at_;
    };
    digits();
    if (peek() == '.') {
      integral = false;
      ++at_;
      if (!(peek() >= '0' && peek() <= '9'))
        return fail("a number has no digits after '.'");
      digits();
    }
    if (peek() == 'e' || peek() == 'E') {
      integral = false;
      ++at_;
      if (peek() == '+' || peek() == '-')
        ++at_;
      if (!(peek() >= '0' && peek() <= '9'))
        return fail("a number has no exponent digits");
      digits();
    }
    std::string token(text_.substr(start, at_ - start));
    errno = 0;
    if (integral) {
      long long parsed = std::strtoll(token.c_str(), nullptr, 10);
      if (errno == 0) {
        value.kind_ = JsonValue::Kind::Integer;
        value.integer_ = parsed;
        return true;
      }
      errno = 0;
    }
    value.kind_ = JsonValue::Kind::Number;
    value.number_ = std::strtod(token.c_str(), nullptr);
    return true;
  }
};

std::optional<JsonValue> parseJson(std::string_view text, unsigned nestingLimit,
                                   std::string &problem) {
  return JsonParser(text, nestingLimit, nullptr).parseDocument(problem);
}

std::optional<JsonValue> parseOutline(std::string_view text, unsigned nestingLimit,
                                      const JsonOutline &outline, std::string &problem) {
  return JsonParser(text, nestingLimit, &outline).parseDocument(problem);
}

} // namespace kiln::module
