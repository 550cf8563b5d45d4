//===- pipeline/python_config.h - What the target Python expects --*- C++ -*-===//
#pragma once

#include <llvm/ADT/StringRef.h>
#include <llvm/Support/Error.h>

#include <string>

namespace kiln::pipeline {

/// The file name suffix of extension modules for `python` (a path or a
/// name on $PATH; empty for `python3`): sysconfig's EXT_SUFFIX, such as
/// ".cpython-312-x86_64-linux-gnu.so".
llvm::Expected<std::string> extensionSuffix(llvm::StringRef python);

} // namespace kiln::pipeline
