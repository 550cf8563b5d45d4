//===- driver/json_output.h - A command's result as JSON -------*- C++ -*-===//
//
// What commands print with --json: one indented JSON value on stdout, and
// nothing else there.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <llvm/Support/FormatVariadic.h>
#include <llvm/Support/JSON.h>
#include <llvm/Support/raw_ostream.h>

namespace kiln::driver {

/// Prints `value` on stdout; returns the exit status 0.
inline int printJson(llvm::json::Value value) {
  llvm::outs() << llvm::formatv("{0:2}", value) << '\n';
  return 0;
}

} // namespace kiln::driver
