//===- tests/frontend/diagnostics_test.cpp - Invalid programs -------------===//
//
// Every file in tests/frontend/invalid/ is a kernel module Kiln must reject.
// Its expected diagnostics are written in the file itself, as in clang's
// -verify tests:
//
//   x = y +             # expect-error: invalid syntax
//   # expect-error@12: unterminated string literal
//   import os           # expect-warning: import of 'os' is ignored
//
// `expect-error: TEXT` expects an error on the same line whose message
// contains TEXT; `expect-error@N: TEXT` on line N. Every reported error and
// warning must be expected, and every expectation met.
//
//===----------------------------------------------------------------------===//

#include "frontend/frontend.h"

#include <gtest/gtest.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/Path.h>
#include <llvm/Support/raw_ostream.h>

#include <algorithm>
#include <regex>
#include <string>
#include <vector>

namespace kiln {
namespace {

struct Expectation {
  Severity severity;
  unsigned line;
  std::string text;
  bool met = false;
};

std::vector<std::string> invalidPrograms() {
  std::vector<std::string> files;
  std::error_code error;
  std::string directory = std::string(KILN_SOURCE_DIR) + "/tests/frontend/invalid";
  for (llvm::sys::fs::directory_iterator it(directory, error), end; it != end && !error;
       it.increment(error))
    if (llvm::sys::path::extension(it->path()) == ".py")
      files.push_back(it->path());
  std::sort(files.begin(), files.end());
  return files;
}

std::vector<Expectation> readExpectations(const std::string &text) {
  static const std::regex pattern(R"(#\s*expect-(error|warning)(@(\d+))?:\s*(.*?)\s*$)");
  std::vector<Expectation> expectations;
  unsigned line = 0;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos)
      end = text.size();
    ++line;
    std::string content = text.substr(start, end - start);
    std::smatch match;
    if (std::regex_search(content, match, pattern)) {
      Severity severity = match[1] == "error" ? Severity::Error : Severity::Warning;
      unsigned at = match[3].matched ? static_cast<unsigned>(std::stoul(match[3])) : line;
      expectations.push_back({severity, at, match[4], false});
    }
    start = end + 1;
  }
  return expectations;
}

class InvalidProgramTest : public ::testing::TestWithParam<std::string> {};

TEST_P(InvalidProgramTest, ReportsExactlyTheExpectedDiagnostics) {
  const std::string &path = GetParam();
  auto buffer = llvm::MemoryBuffer::getFile(path);
  ASSERT_TRUE(bool(buffer)) << "cannot read " << path;
  std::string text = (*buffer)->getBuffer().str();
  std::vector<Expectation> expectations = readExpectations(text);
  ASSERT_FALSE(expectations.empty()) << path << " has no '# expect-error:' comment";

  FrontendOptions options;
  options.readPyproject = false;
  std::unique_ptr<CheckedModule> checked = checkSource(path, text, options);
  EXPECT_TRUE(checked->hasErrors()) << path << " was accepted";

  std::string rendered;
  llvm::raw_string_ostream os(rendered);
  checked->diags.renderText(os, false);
  for (const Diagnostic &diagnostic : checked->diags.diagnostics()) {
    if (diagnostic.severity == Severity::Note)
      continue;
    unsigned line =
        diagnostic.range.isValid() ? checked->sources.lineColumn(diagnostic.range.begin).line : 0;
    bool prelude =
        diagnostic.range.isValid() && checked->sources.path(diagnostic.range.begin.file) != path;
    auto match = std::find_if(expectations.begin(), expectations.end(), [&](Expectation &e) {
      return !e.met && e.severity == diagnostic.severity && e.line == line && !prelude &&
             diagnostic.message.find(e.text) != std::string::npos;
    });
    if (match == expectations.end()) {
      ADD_FAILURE() << path << ":" << line << ": unexpected diagnostic: " << diagnostic.message
                    << "\nall diagnostics:\n"
                    << rendered;
      continue;
    }
    match->met = true;
  }
  for (const Expectation &expectation : expectations)
    EXPECT_TRUE(expectation.met) << path << ":" << expectation.line << ": expected "
                                 << (expectation.severity == Severity::Error ? "error" : "warning")
                                 << " containing '" << expectation.text << "'\nall diagnostics:\n"
                                 << rendered;
}

std::string testName(const ::testing::TestParamInfo<std::string> &info) {
  std::string name = llvm::sys::path::stem(info.param).str();
  std::replace_if(
      name.begin(), name.end(), [](char c) { return !std::isalnum(static_cast<unsigned char>(c)); },
      '_');
  return name;
}

INSTANTIATE_TEST_SUITE_P(Corpus, InvalidProgramTest, ::testing::ValuesIn(invalidPrograms()),
                         testName);

TEST(DiagnosticRenderingTest, ShowsFileLineColumnSourceLineAndCaretRange) {
  FrontendOptions options;
  options.readPyproject = false;
  std::unique_ptr<CheckedModule> checked =
      checkSource("kernels.py",
                  "from numba import cuda\n\n@cuda.jit(\"void(float32[:])\")\ndef k(x):\n    x[0] "
                  "= undefined_name + 1\n",
                  options);
  std::string rendered;
  llvm::raw_string_ostream os(rendered);
  checked->diags.renderText(os, false);
  EXPECT_EQ(rendered, "kernels.py:5:12: error: name 'undefined_name' is not defined\n"
                      "    x[0] = undefined_name + 1\n"
                      "           ^~~~~~~~~~~~~~\n"
                      "1 error generated.\n");
}

TEST(DiagnosticRenderingTest, NotesNameTheCallChain) {
  FrontendOptions options;
  options.readPyproject = false;
  std::unique_ptr<CheckedModule> checked = checkSource("kernels.py",
                                                       "from numba import cuda\n\n"
                                                       "@cuda.jit(device=True)\n"
                                                       "def f(a, b):\n"
                                                       "    return a[b]\n\n"
                                                       "@cuda.jit(\"void(float32[:], float64)\")\n"
                                                       "def k(x, y):\n"
                                                       "    x[0] = f(x, y)\n",
                                                       options);
  std::string rendered;
  llvm::raw_string_ostream os(rendered);
  checked->diags.renderText(os, false);
  EXPECT_NE(
      rendered.find("kernels.py:5:12: error: cannot index array(float32, 1d, A) with float64"),
      std::string::npos)
      << rendered;
  EXPECT_NE(rendered.find("kernels.py:9:12: note: in call to device function 'f' with "
                          "(array(float32, 1d, A), float64)"),
            std::string::npos)
      << rendered;
  EXPECT_NE(rendered.find("note: in kernel 'k' compiled for (array(float32, 1d, A), float64)"),
            std::string::npos)
      << rendered;
}

TEST(DiagnosticRenderingTest, PythonIntInASignatureSuggestsANumbaType) {
  // Numba's eval of "void(int)" finds Python's int, which is no Numba type:
  // importing it would not help, so the note says what to write instead.
  FrontendOptions options;
  options.readPyproject = false;
  std::unique_ptr<CheckedModule> checked = checkSource(
      "kernels.py", "from numba import cuda\n\n@cuda.jit(\"void(int)\")\ndef k(x):\n    pass\n",
      options);
  ASSERT_EQ(checked->diags.diagnostics().size(), 1u);
  const Diagnostic &error = checked->diags.diagnostics().front();
  EXPECT_EQ(error.message, "'int' is not a type");
  ASSERT_EQ(error.notes.size(), 1u);
  EXPECT_EQ(error.notes[0].message, "Python's 'int' is not a Numba type; write 'int64' instead");
}

TEST(DiagnosticLimitTest, ParseErrorsStopAtTheLimitWithANotice) {
  std::string source = "from numba import cuda\n";
  for (int i = 0; i < 60; ++i)
    source += "x" + std::to_string(i) + " = = 1\n";
  FrontendOptions options;
  options.readPyproject = false;
  std::unique_ptr<CheckedModule> checked = checkSource("kernels.py", source, options);
  ASSERT_FALSE(checked->diags.diagnostics().empty());
  EXPECT_EQ(checked->diags.errorCount(), 50u);
  EXPECT_EQ(checked->diags.diagnostics().back().message, "too many errors emitted, stopping now");
}

TEST(DiagnosticLimitTest, UnsupportedConstructsStopAtTheLimitWithANotice) {
  std::string source = "from numba import cuda\n\n@cuda.jit(\"void(float32[:])\")\ndef k(x):\n";
  for (int i = 0; i < 60; ++i)
    source += "    y" + std::to_string(i) + " = [1, 2]\n";
  FrontendOptions options;
  options.readPyproject = false;
  std::unique_ptr<CheckedModule> checked = checkSource("kernels.py", source, options);
  ASSERT_FALSE(checked->diags.diagnostics().empty());
  EXPECT_EQ(checked->diags.errorCount(), 50u);
  EXPECT_EQ(checked->diags.diagnostics().back().message, "too many errors emitted, stopping now");
}

TEST(DiagnosticDeferralTest, DiagnosticsKeptAsideAreNotReported) {
  SourceManager sources;
  DiagnosticEngine diags(sources);
  {
    DiagnosticEngine::Deferral deferral(diags);
    diags.report(DiagID::err_duplicate_parameter, SourceRange(), {"x"});
    ASSERT_NE(deferral.firstError(), nullptr);
    EXPECT_EQ(deferral.firstError()->message, "duplicate parameter 'x' in function definition");
  }
  EXPECT_EQ(diags.errorCount(), 0u) << "an error kept aside counts for nothing";
  EXPECT_TRUE(diags.diagnostics().empty());
  diags.report(DiagID::err_duplicate_parameter, SourceRange(), {"y"});
  EXPECT_EQ(diags.errorCount(), 1u) << "after the deferral, errors are reported again";
}

TEST(DiagnosticRenderingTest, RelativeImportWarningCoversTheDots) {
  FrontendOptions options;
  options.readPyproject = false;
  std::unique_ptr<CheckedModule> checked =
      checkSource("kernels.py", "from . import helpers\nfrom ..pkg import thing\n", options);
  ASSERT_EQ(checked->diags.diagnostics().size(), 2u);
  std::vector<std::pair<unsigned, unsigned>> columns;
  for (const Diagnostic &diagnostic : checked->diags.diagnostics())
    columns.push_back({checked->sources.lineColumn(diagnostic.range.begin).column,
                       checked->sources.lineColumn(diagnostic.range.end).column});
  // `.` is column 6, `..pkg` columns 6 to 10; ends are one past the last.
  EXPECT_EQ(columns, (std::vector<std::pair<unsigned, unsigned>>{{6, 7}, {6, 11}}));
}

} // namespace
} // namespace kiln
