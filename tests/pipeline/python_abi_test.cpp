//===- tests/pipeline/python_abi_test.cpp ---------------------------------===//
//
// The file name suffix of a kernel module for each Python ABI kiln build
// takes, on the machines CPython names by their multiarch triple.
//
//===----------------------------------------------------------------------===//

#include "pipeline/python_config.h"

#include <gtest/gtest.h>
#include <llvm/TargetParser/Triple.h>

#include <string>

namespace {

using kiln::pipeline::checkPythonAbi;
using kiln::pipeline::extensionSuffix;

std::string suffixFor(const char *abi, const char *triple) {
  llvm::Expected<std::string> suffix = extensionSuffix(abi, "", llvm::Triple(triple));
  if (!suffix)
    return "error: " + llvm::toString(suffix.takeError());
  return *suffix;
}

TEST(PythonAbi, TheStableAbiHasOneSuffixOnEveryMachine) {
  EXPECT_EQ(suffixFor("abi3", "x86_64-pc-linux-gnu"), ".abi3.so");
  EXPECT_EQ(suffixFor("abi3", "aarch64-unknown-linux-gnu"), ".abi3.so");
}

TEST(PythonAbi, AVersionNamesTheMachineAsCPythonDoes) {
  EXPECT_EQ(suffixFor("cp313", "x86_64-pc-linux-gnu"), ".cpython-313-x86_64-linux-gnu.so");
  EXPECT_EQ(suffixFor("cp310", "aarch64-unknown-linux-gnu"), ".cpython-310-aarch64-linux-gnu.so");
  EXPECT_EQ(suffixFor("cp314t", "x86_64-pc-linux-gnu"), ".cpython-314t-x86_64-linux-gnu.so");
}

TEST(PythonAbi, WhatNoCPythonKilnSupportsHasIsRefused) {
  EXPECT_EQ(suffixFor("cp39", "x86_64-pc-linux-gnu"),
            "error: Python ABI 'cp39': Kiln's runtime needs CPython 3.10 or later");
  EXPECT_EQ(suffixFor("cp312t", "x86_64-pc-linux-gnu"),
            "error: Python ABI 'cp312t': free-threaded CPython begins with 3.13 (cp313t)");
  for (const char *abi : {"py3", "cp3", "cp", "cp3x", "abi4", "", "cp313tt", "CP313"}) {
    llvm::Error problem = checkPythonAbi(abi);
    ASSERT_TRUE(bool(problem)) << "'" << abi << "' was taken for a Python ABI";
    EXPECT_NE(llvm::toString(std::move(problem)).find("unknown Python ABI"), std::string::npos)
        << abi;
  }
  EXPECT_FALSE(bool(checkPythonAbi("interpreter")));
  EXPECT_FALSE(bool(checkPythonAbi("abi3")));
}

} // namespace
