//===- tests/backend/llvm_ir_testing.h - Tests on IR written by hand -*- C++ -*-===//
//
// What the back-end tests that transform hand-written LLVM IR share:
// parsing it, checking that the result is valid, and reading it as text.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <gtest/gtest.h>
#include <llvm/AsmParser/Parser.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/SourceMgr.h>
#include <llvm/Support/raw_ostream.h>

#include <memory>
#include <string>

namespace kiln::testing {

/// The module `source` holds; null, and a test failure, when it does not
/// parse.
inline std::unique_ptr<llvm::Module> parseTestIR(const std::string &source,
                                                 llvm::LLVMContext &context) {
  llvm::SMDiagnostic error;
  std::unique_ptr<llvm::Module> module = llvm::parseAssemblyString(source, error, context);
  if (!module)
    ADD_FAILURE() << "the test's IR does not parse: " << error.getMessage().str();
  return module;
}

/// Whether `module` is valid IR; a test failure naming `transform` if not.
inline bool isValidAfter(const llvm::Module &module, const char *transform) {
  std::string message;
  llvm::raw_string_ostream stream(message);
  if (!llvm::verifyModule(module, &stream))
    return true;
  ADD_FAILURE() << transform << " left invalid IR: " << message;
  return false;
}

/// `ir` (a module or a function) as text.
template <typename IR> std::string textOf(const IR &ir) {
  std::string text;
  llvm::raw_string_ostream out(text);
  ir.print(out, nullptr);
  return text;
}

inline bool contains(const std::string &text, const std::string &part) {
  return text.find(part) != std::string::npos;
}

} // namespace kiln::testing
