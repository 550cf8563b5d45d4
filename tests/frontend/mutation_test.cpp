//===- tests/frontend/mutation_test.cpp - Any input, no crash -------------===//
//
// Feeds the front end thousands of broken versions of valid kernel modules:
// every example truncated at many points, and with random bytes replaced,
// inserted, deleted, and lines duplicated or swapped. Whatever the input,
// checking must finish with diagnostics that point inside the file (or
// nowhere) and render, or with success; never crash or hang.
//
// The mutations come from a fixed seed, so a failure reproduces. Before
// each input is checked it is written to mutation_current_input.py in the
// working directory: if the process dies, that file is the culprit.
//
//===----------------------------------------------------------------------===//

#include "frontend/frontend.h"

#include <gtest/gtest.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/JSON.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/Path.h>
#include <llvm/Support/raw_ostream.h>

#include <algorithm>
#include <fstream>
#include <random>
#include <string>
#include <vector>

namespace kiln {
namespace {

std::vector<std::string> seedModules() {
  std::vector<std::string> texts;
  for (const char *directory : {"/examples", "/frontend/prelude"}) {
    std::error_code error;
    for (llvm::sys::fs::directory_iterator it(std::string(KILN_SOURCE_DIR) + directory, error), end;
         it != end && !error; it.increment(error)) {
      if (llvm::sys::path::extension(it->path()) != ".py")
        continue;
      if (auto buffer = llvm::MemoryBuffer::getFile(it->path()))
        texts.push_back((*buffer)->getBuffer().str());
    }
  }
  std::sort(texts.begin(), texts.end());
  return texts;
}

/// Bytes that tend to matter to a Python lexer and parser.
const char interesting[] = "()[]{}:,.=+-*/%<>!@\"'\\#\n\t \x00\xff\xc3\xa9\x80_0123456789jeExXrbf";

std::string mutate(const std::string &text, std::mt19937 &random) {
  std::string result = text;
  std::uniform_int_distribution<int> kindOf(0, 5);
  int edits = std::uniform_int_distribution<int>(1, 4)(random);
  for (int e = 0; e < edits && !result.empty(); ++e) {
    size_t at = std::uniform_int_distribution<size_t>(0, result.size() - 1)(random);
    char byte =
        interesting[std::uniform_int_distribution<size_t>(0, sizeof(interesting) - 2)(random)];
    switch (kindOf(random)) {
    case 0:
      result[at] = byte;
      break;
    case 1:
      result.insert(result.begin() + static_cast<long>(at), byte);
      break;
    case 2:
      result.erase(at, std::uniform_int_distribution<size_t>(1, 8)(random));
      break;
    case 3:
      result[at] = static_cast<char>(std::uniform_int_distribution<int>(0, 255)(random));
      break;
    default: {
      // Duplicate or move a line: wrong indentation, repeated definitions.
      size_t begin = result.rfind('\n', at);
      begin = begin == std::string::npos ? 0 : begin + 1;
      size_t end = result.find('\n', at);
      end = end == std::string::npos ? result.size() : end + 1;
      std::string line = result.substr(begin, end - begin);
      size_t target = std::uniform_int_distribution<size_t>(0, result.size())(random);
      result.insert(target, line);
      break;
    }
    }
  }
  return result;
}

/// Checks one input, returning why it failed, or an empty string.
std::string checkOne(const std::string &text) {
  {
    std::ofstream current("mutation_current_input.py", std::ios::binary);
    current << text;
  }
  FrontendOptions options;
  options.readPyproject = false;
  std::unique_ptr<CheckedModule> checked = checkSource("mutated.py", text, options);
  for (const Diagnostic &diagnostic : checked->diags.diagnostics()) {
    const SourceRange &range = diagnostic.range;
    if (!range.isValid())
      continue;
    size_t size = checked->sources.contents(range.begin.file).size();
    if (range.begin.offset > size || range.end.offset > size)
      return "diagnostic '" + diagnostic.message + "' points outside the file";
  }
  std::string rendered;
  llvm::raw_string_ostream os(rendered);
  checked->diags.renderText(os, false);
  llvm::json::OStream json(os);
  checked->diags.renderJson(json);
  if (checked->hasErrors() && rendered.find("error:") == std::string::npos)
    return "errors were counted but none rendered";
  return "";
}

TEST(MutationTest, TruncatedModulesGiveDiagnosticsNotCrashes) {
  std::vector<std::string> modules = seedModules();
  ASSERT_GE(modules.size(), 10u);
  unsigned checkedCount = 0;
  for (const std::string &module : modules) {
    for (size_t cut = 0; cut < module.size(); cut += std::max<size_t>(1, module.size() / 150)) {
      std::string failure = checkOne(module.substr(0, cut));
      ASSERT_TRUE(failure.empty()) << failure << "\ninput:\n" << module.substr(0, cut);
      ++checkedCount;
    }
  }
  EXPECT_GT(checkedCount, 1500u);
}

TEST(MutationTest, MutatedModulesGiveDiagnosticsNotCrashes) {
  std::vector<std::string> modules = seedModules();
  std::mt19937 random(20261122);
  unsigned checkedCount = 0;
  for (const std::string &module : modules) {
    for (int i = 0; i < 400; ++i) {
      std::string mutated = mutate(module, random);
      std::string failure = checkOne(mutated);
      ASSERT_TRUE(failure.empty()) << failure << "\ninput:\n" << mutated;
      ++checkedCount;
    }
  }
  EXPECT_GT(checkedCount, 5000u);
}

TEST(MutationTest, PathologicalInputsAreRejectedQuickly) {
  std::vector<std::string> inputs = {
      std::string(100000, '('),
      "x = " + std::string(50000, '-') + "1\n",
      "x = " + std::string(20000, '[') + "\n",
      "def f():\n" + std::string(200, ' ') + "pass\n",
      "x = 1" + std::string(100000, '+') + "\n",
      "x = " +
          [] {
            std::string chain = "1";
            for (int i = 0; i < 20000; ++i)
              chain += " + 1";
            return chain;
          }() +
          "\n",
      [] {
        std::string nested;
        for (int i = 0; i < 150; ++i)
          nested += std::string(static_cast<size_t>(i), ' ') + "if x:\n";
        return nested + std::string(150, ' ') + "pass\n";
      }(),
      "not " +
          [] {
            std::string nots;
            for (int i = 0; i < 10000; ++i)
              nots += "not ";
            return nots;
          }() +
          "x\n",
      "x = lambda: " +
          [] {
            std::string lambdas;
            for (int i = 0; i < 5000; ++i)
              lambdas += "lambda: ";
            return lambdas;
          }() +
          "1\n",
      std::string("\xef\xbb\xbf") + "x = 1\n",
      std::string(1000, '\0'),
      std::string(5000, '\n'),
      "\"\"\"" + std::string(100000, 'a'),
  };
  for (const std::string &input : inputs) {
    std::string failure = checkOne(input);
    EXPECT_TRUE(failure.empty()) << failure;
  }
}

} // namespace
} // namespace kiln
