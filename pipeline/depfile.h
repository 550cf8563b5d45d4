//===- pipeline/depfile.h - Dependency files for build systems ---*- C++ -*-===//
//
// `kiln build --depfile FILE` writes, beside the outputs, which files the
// build read, in the Makefile syntax that Ninja, Make and CMake's DEPFILE
// read: the files written, a colon, then the files read, one per line,
// every line but the last ending in a backslash:
//
//   /abs/build/pkg/kernels.cpython-311-x86_64-linux-gnu.so:
//     /abs/src/pkg/kernels.py
//     /abs/src/pkg/helpers.py
//     /abs/src/pyproject.toml
//     /usr/local/bin/kiln
//
// so that a build system reruns Kiln exactly when one of them changes.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <llvm/ADT/ArrayRef.h>
#include <llvm/ADT/StringRef.h>
#include <llvm/Support/Error.h>

#include <string>
#include <vector>

namespace kiln::pipeline {

/// The files a build of the kernel module at `modulePath` depends on,
/// absolute, sorted and unique: the module; the pyproject.toml and
/// kiln-signatures.toml the front end reads signatures from, if there are
/// any; `otherFiles` that exist (the source modules it imports from, the
/// files kernels name in link=[...]); and the running kiln executable and
/// the shared compiler library, where there is one, which hold the
/// modules kernels import from Kiln's prelude (`numba.cuda.random`, ...).
std::vector<std::string> buildInputs(llvm::StringRef modulePath,
                                     llvm::ArrayRef<std::string> otherFiles);

/// Writes `targets: dependencies` to `path`, escaping as Make does (spaces
/// as `\ `, `#` as `\#`, `$` as `$$`), through a temporary file renamed into
/// place.
llvm::Error writeDepfile(llvm::StringRef path, llvm::ArrayRef<std::string> targets,
                         llvm::ArrayRef<std::string> dependencies);

} // namespace kiln::pipeline
