//===- module/manifest_json.h - JSON of untrusted manifests -----*- C++ -*-===//
//
// The manifest of a built module is JSON that came with a file anyone may
// have edited, so the reader shared by the runtime and the driver parses it
// with a depth limit (a manifest nests five levels; a forged one of 100,000
// brackets must be an error, not a stack overflow) and without LLVM, which
// the runtime does not have.
//
// Plain C++: no LLVM, no Python, no exceptions.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kiln::module {

/// A parsed JSON value. Numbers written without a fraction or exponent that
/// fit in int64 are integers; other numbers are doubles.
class JsonValue {
public:
  enum class Kind : uint8_t { Null, Boolean, Integer, Number, String, Array, Object };

  Kind kind() const { return kind_; }
  std::optional<int64_t> integer() const;
  std::optional<bool> boolean() const;
  /// The value of an integer or any other number.
  std::optional<double> number() const;
  const std::string *string() const { return kind_ == Kind::String ? &text_ : nullptr; }
  const std::vector<JsonValue> *array() const {
    return kind_ == Kind::Array ? &elements_ : nullptr;
  }
  /// The member `key` of an object; null when this is not an object or has
  /// no such member.
  const JsonValue *member(std::string_view key) const;
  bool isObject() const { return kind_ == Kind::Object; }
  /// Where the value lies in the parsed text: [begin, end) in bytes, so that
  /// a reader may hand on one part of a document without printing it again.
  size_t sourceBegin() const { return begin_; }
  size_t sourceEnd() const { return end_; }

private:
  friend class JsonParser;
  Kind kind_ = Kind::Null;
  bool boolean_ = false;
  int64_t integer_ = 0;
  double number_ = 0;
  size_t begin_ = 0, end_ = 0;
  std::string text_;
  std::vector<JsonValue> elements_;
  std::vector<std::pair<std::string, JsonValue>> members_;
};

/// The deepest nesting of arrays and objects a manifest may have.
constexpr unsigned ManifestNestingLimit = 32;

/// Parses `text` as one JSON value nested at most `nestingLimit` deep. On
/// failure returns nothing and sets `problem` ("it nests deeper than 32
/// levels at byte 1040", "it is not JSON: a string is not closed at byte 7").
std::optional<JsonValue> parseJson(std::string_view text, unsigned nestingLimit,
                                   std::string &problem);

/// What parseOutline() builds of a document: arrays and objects down to
/// `depth` levels and, of the objects `depth` levels deep, only the members
/// named in `keys`.
struct JsonOutline {
  unsigned depth = 0;
  std::vector<std::string_view> keys;
};

/// Parses `text` as parseJson() does, checking all of it as thoroughly, but
/// builds only `outline`; what lies outside it is kept as its kind and
/// source range alone (arrays and objects empty), so that a reader that
/// needs a document's outline does not pay for building the rest.
std::optional<JsonValue> parseOutline(std::string_view text, unsigned nestingLimit,
                                      const JsonOutline &outline, std::string &problem);

} // namespace kiln::module
