//===- tests/runtime/stand_in_driver/stand_in_log.cpp - The call log ------===//

#include "tests/runtime/stand_in_driver/stand_in_log.h"

#include <cstdio>
#include <cstdlib>

namespace kiln::stand_in {

std::string jsonString(const std::string &value) {
  std::string text = "\"";
  for (char c : value) {
    unsigned char byte = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      text += '\\';
      text += c;
    } else if (byte < 0x20) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\u%04x", byte);
      text += escaped;
    } else {
      text += c;
    }
  }
  return text + "\"";
}

void JsonObject::key(const char *name) {
  if (body.size() > 1)
    body += ',';
  body += jsonString(name) + ":";
}

JsonObject &JsonObject::number(const char *name, uint64_t value) {
  if (!enabled)
    return *this;
  key(name);
  body += std::to_string(value);
  return *this;
}

JsonObject &JsonObject::signedNumber(const char *name, int64_t value) {
  if (!enabled)
    return *this;
  key(name);
  body += std::to_string(value);
  return *this;
}

JsonObject &JsonObject::real(const char *name, double value) {
  if (!enabled)
    return *this;
  key(name);
  char text[32];
  std::snprintf(text, sizeof text, "%.17g", value);
  body += text;
  return *this;
}

JsonObject &JsonObject::string(const char *name, const std::string &value) {
  if (!enabled)
    return *this;
  key(name);
  body += jsonString(value);
  return *this;
}

JsonObject &JsonObject::boolean(const char *name, bool value) {
  if (!enabled)
    return *this;
  key(name);
  body += value ? "true" : "false";
  return *this;
}

JsonObject &JsonObject::null(const char *name) {
  if (!enabled)
    return *this;
  key(name);
  body += "null";
  return *this;
}

JsonObject &JsonObject::raw(const char *name, const std::string &json) {
  if (!enabled)
    return *this;
  key(name);
  body += json;
  return *this;
}

bool logEnabled() {
  return std::getenv("KILN_STAND_IN_LOG") != nullptr;
}

void writeLogLine(const std::string &line) {
  static FILE *file = nullptr;
  static std::string openPath;
  const char *path = std::getenv("KILN_STAND_IN_LOG");
  if (!path || !*path)
    return;
  if (!file || openPath != path) {
    if (file)
      std::fclose(file);
    file = std::fopen(path, "a");
    openPath = path;
    if (!file)
      return;
  }
  std::fputs(line.c_str(), file);
  std::fputc('\n', file);
  std::fflush(file);
}

} // namespace kiln::stand_in
