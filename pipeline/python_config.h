//===- pipeline/python_config.h - What the target Python expects --*- C++ -*-===//
#pragma once

#include "support/tool_runner.h"

#include <llvm/ADT/ArrayRef.h>
#include <llvm/ADT/StringRef.h>
#include <llvm/Support/Error.h>
#include <llvm/TargetParser/Triple.h>

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

/// The oldest CPython (3.x) Kiln's runtime supports, and so the oldest a
/// kernel module can be built for.
constexpr unsigned minimumPythonMinor = 10;

/// The file name suffix of extension modules for `python` (a path or a
/// name on $PATH; empty for `python3`): sysconfig's EXT_SUFFIX, such as
/// ".cpython-312-x86_64-linux-gnu.so".
llvm::Expected<std::string> interpreterExtensionSuffix(llvm::StringRef python);

/// Whether extensionSuffix knows the Python ABI `abi`; an error says what
/// is wrong with it.
llvm::Error checkPythonAbi(llvm::StringRef abi);

/// The file name suffix of a kernel module for the Python ABI `abi`, on a
/// machine of the `host` triple, without running any Python:
///
///   abi3          ".abi3.so": CPython's stable ABI, which every CPython
///                 with the stable ABI imports (the kernel module's own
///                 code calls nothing newer than 3.2's)
///   cp313         ".cpython-313-x86_64-linux-gnu.so": that version alone
///   cp313t        ".cpython-313t-x86_64-linux-gnu.so": free-threaded 3.13
///   interpreter   interpreterExtensionSuffix(python)
///
/// An error names what is wrong with `abi`.
llvm::Expected<std::string> extensionSuffix(llvm::StringRef abi, llvm::StringRef python,
                                            const llvm::Triple &host);

} // namespace kiln::pipeline
