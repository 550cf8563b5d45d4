//===- runtime/cpu_engine/print_output.cpp - print() in kernels -----------===//

#include "runtime/cpu_engine/print_output.h"

#include <cstdarg>
#include <mutex>

namespace kiln::cpu_engine {

namespace {

std::mutex &printMutex() {
  static std::mutex mutex;
  return mutex;
}

[[gnu::format(printf, 2, 3)]] void appendFormat(std::string &out, const char *format, ...) {
  char buffer[64];
  va_list args;
  va_start(args, format);
  int length = std::vsnprintf(buffer, sizeof buffer, format, args);
  va_end(args);
  if (length < 0)
    return;
  if (static_cast<size_t>(length) < sizeof buffer) {
    out.append(buffer, static_cast<size_t>(length));
    return;
  }
  // %f of a large double runs to hundreds of digits.
  size_t start = out.size();
  out.resize(start + static_cast<size_t>(length) + 1);
  va_start(args, format);
  std::vsnprintf(out.data() + start, static_cast<size_t>(length) + 1, format, args);
  va_end(args);
  out.resize(start + static_cast<size_t>(length));
}

void appendItem(std::string &out, const KilnPrintItem &item) {
  switch (item.kind) {
  case KILN_PRINT_INT64:
    appendFormat(out, "%lld", static_cast<long long>(item.value.i64));
    return;
  case KILN_PRINT_UINT64:
    appendFormat(out, "%llu", static_cast<unsigned long long>(item.value.u64));
    return;
  case KILN_PRINT_FLOAT64:
    appendFormat(out, "%f", item.value.f64);
    return;
  case KILN_PRINT_BOOL:
    out += item.value.i64 ? "True" : "False";
    return;
  case KILN_PRINT_STRING:
    out += item.value.string ? item.value.string : "(null)";
    return;
  case KILN_PRINT_NONE:
    out += "None";
    return;
  case KILN_PRINT_COMPLEX128:
    // The GPU target's format for complex numbers.
    appendFormat(out, "(%f%+fj)", item.value.f64, item.imag);
    return;
  default:
    appendFormat(out, "<print item of unknown kind %u>", item.kind);
    return;
  }
}

} // namespace

std::string formatPrintLine(const KilnPrintItem *items, uint32_t count) {
  std::string line;
  for (uint32_t i = 0; i < count; ++i) {
    if (i && !(items[i].flags & KILN_PRINT_JOINED))
      line += ' ';
    appendItem(line, items[i]);
  }
  line += '\n';
  return line;
}

void PrintOutput::writeLine(const std::string &line) {
  std::lock_guard<std::mutex> lock(printMutex());
  std::fwrite(line.data(), 1, line.size(), stream);
}

void PrintOutput::flush() {
  std::lock_guard<std::mutex> lock(printMutex());
  std::fflush(stream);
}

} // namespace kiln::cpu_engine
