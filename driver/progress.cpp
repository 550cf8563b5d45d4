//===- driver/progress.cpp - Build progress, as ninja shows it ------------===//

#include "driver/progress.h"

#include <llvm/ADT/StringExtras.h>
#include <llvm/Support/Process.h>

namespace kiln::driver {

ProgressStyle chooseProgressStyle(llvm::raw_fd_ostream &stream, bool quiet, bool verbose) {
  if (quiet)
    return ProgressStyle::Silent;
  std::optional<std::string> term = llvm::sys::Process::GetEnv("TERM");
  if (stream.is_displayed() && term != "dumb")
    return ProgressStyle::Terminal;
  return verbose ? ProgressStyle::Lines : ProgressStyle::Silent;
}

ProgressReporter::ProgressReporter(llvm::raw_ostream &stream, ProgressStyle style)
    : stream(stream), style(style) {
  unsigned columns =
      style == ProgressStyle::Terminal ? llvm::sys::Process::StandardErrColumns() : 0;
  width = columns ? columns : 80;
}

ProgressReporter::~ProgressReporter() {
  done();
}

void ProgressReporter::expect(unsigned tasks) {
  std::lock_guard<std::mutex> lock(mutex);
  total += tasks;
}

void ProgressReporter::finished(llvm::StringRef label) {
  if (style == ProgressStyle::Silent)
    return;
  std::lock_guard<std::mutex> lock(mutex);
  ++count;
  std::string line = "[" + std::to_string(count) + "/" + std::to_string(std::max(count, total)) +
                     "] " + label.str();
  if (style == ProgressStyle::Lines) {
    stream << line << '\n';
    stream.flush();
    return;
  }
  // As ninja: elide the middle of a line wider than the terminal, so that
  // it never wraps (a wrapped line cannot be rewritten).
  if (width > 8 && line.size() >= width) {
    size_t keep = width - 4;
    line = line.substr(0, keep / 2) + "..." + line.substr(line.size() - (keep - keep / 2));
  }
  stream << '\r' << line << "\x1b[K";
  stream.flush();
  lineShown = true;
}

void ProgressReporter::done() {
  std::lock_guard<std::mutex> lock(mutex);
  if (!lineShown)
    return;
  stream << "\r\x1b[K";
  stream.flush();
  lineShown = false;
}

void ProgressReporter::interject(llvm::function_ref<void(llvm::raw_ostream &)> write) {
  std::lock_guard<std::mutex> lock(mutex);
  if (lineShown) {
    stream << "\r\x1b[K";
    lineShown = false;
  }
  write(stream);
  stream.flush();
}

} // namespace kiln::driver
