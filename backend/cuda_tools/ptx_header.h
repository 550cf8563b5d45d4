//===- backend/cuda_tools/ptx_header.h - The .version and .target of PTX text -*- C++ -*-===//
//
// Every PTX module starts with its ISA version and target:
//
//   .version 7.8
//   .target sm_90
//   .address_size 64
//
// Kiln reads them to check what it hands to ptxas and fatbinary: PTX can be
// assembled for its own target or any newer one, and a PTX image in a fat
// binary must carry the compute architecture its .target names.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <llvm/ADT/StringRef.h>
#include <llvm/Support/Error.h>

#include <string>

namespace kiln::cuda_tools {

struct PtxHeader {
  unsigned versionMajor = 0;
  unsigned versionMinor = 0;
  /// 90 for `.target sm_90`.
  unsigned targetArch = 0;
  /// "a" or "f" for sm_90a, sm_100f; empty for the portable targets.
  std::string targetSuffix;
};

/// Reads the header directives, skipping comments and blank lines. An error
/// when there is no `.version` or `.target` before the first other statement.
llvm::Expected<PtxHeader> readPtxHeader(llvm::StringRef ptx);

} // namespace kiln::cuda_tools
