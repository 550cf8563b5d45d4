//===- tests/runtime/stand_in_driver/stand_in_log.h - The call log --------===//
//
// Part of the stand-in CUDA driver of the tests. Each call the stand-in
// receives becomes one JSON object on one line of the file KILN_STAND_IN_LOG
// names (appended; nothing is written when it is unset):
//
//   {"seq":3,"thread":1,"call":"cuMemAlloc_v2","bytesize":4096,
//    "dptr":94826028212224,"result":"CUDA_SUCCESS"}
//
// Arguments and outputs are top-level keys named as in cuda.h's prototypes;
// pointers and handles are integers; "result" is the CUresult's name.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <string>

namespace kiln::stand_in {

/// One JSON object, built key by key.
class JsonObject {
public:
  /// A disabled object ignores every key: the stand-in builds no log lines
  /// when nothing would write them, so that launches stay cheap to time.
  explicit JsonObject(bool enabled = true) : enabled(enabled) {}
  bool isEnabled() const { return enabled; }
  JsonObject &number(const char *key, uint64_t value);
  JsonObject &signedNumber(const char *key, int64_t value);
  JsonObject &real(const char *key, double value);
  JsonObject &string(const char *key, const std::string &value);
  JsonObject &boolean(const char *key, bool value);
  JsonObject &null(const char *key);
  /// `json` must be valid JSON (an array or object built elsewhere).
  JsonObject &raw(const char *key, const std::string &json);
  std::string text() const { return body + "}"; }

private:
  void key(const char *name);
  bool enabled;
  std::string body = "{";
};

/// `value` as a JSON string literal.
std::string jsonString(const std::string &value);

/// Whether KILN_STAND_IN_LOG names a log file.
bool logEnabled();

/// Appends `line` and a newline to $KILN_STAND_IN_LOG, if set. Not
/// thread-safe: the stand-in calls it under its lock.
void writeLogLine(const std::string &line);

} // namespace kiln::stand_in
