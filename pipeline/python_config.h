//===- pipeline/python_config.h - What the target Python expects --*- C++ -*-===//
#pragma once

#include "support/tool_runner.h"

#include <llvm/ADT/ArrayRef.h>
#include <llvm/ADT/StringRef.h>
#include <llvm/Support/Error.h>

#include <string>

namespace kiln::pipeline {

/// Importing a module that pulls in large packages takes seconds; minutes
/// mean the interpreter is stuck.
constexpr unsigned defaultPythonTimeout = 120;

/// Runs `python` (a path or a name on $PATH; empty for `python3`) with
/// `arguments` to completion: its exit status and what it printed, or an
/// error saying why it could not run ("'python3' is not on $PATH"). A Python
/// that has not finished after $KILN_PYTHON_TIMEOUT seconds (default
/// defaultPythonTimeout) is stopped, and that is an error too: an
/// interpreter that never answers must not hang the build.
llvm::Expected<support::ToolOutput> runPython(llvm::StringRef python,
                                              llvm::ArrayRef<std::string> arguments);

/// The file name suffix of extension modules for `python` (a path or a
/// name on $PATH; empty for `python3`): sysconfig's EXT_SUFFIX, such as
/// ".cpython-312-x86_64-linux-gnu.so".
llvm::Expected<std::string> extensionSuffix(llvm::StringRef python);

} // namespace kiln::pipeline
