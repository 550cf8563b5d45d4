//===- tests/runtime/stand_in_driver/ptx_params.h - PTX .entry params -----===//
//
// Part of the stand-in CUDA driver of the tests (not a driver: it never
// runs kernels). Reads the `.entry` functions of PTX text and their `.param`
// lists, so that the stand-in can log each launch's parameter bytes with
// the sizes the kernel declares:
//
//   .visible .entry k(
//     .param .u64 k_param_0,                 size 8, align 8
//     .param .u64 .ptr .global .align 4 p,   size 8, align 8 (4 is the pointee's)
//     .param .align 8 .b8 k_param_1[16],     size 16, align 8
//     .param .f32 k_param_2                  size 4, align 4
//   )
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kiln::stand_in {

struct PtxParam {
  std::string name;
  /// The element type without its dot: "u64", "b8", "f32".
  std::string type;
  uint64_t size = 0;
  uint64_t align = 0;
  /// Where the parameter sits in the parameter buffer.
  uint64_t offset = 0;
};

struct PtxEntry {
  std::string name;
  std::vector<PtxParam> params;
};

/// Every .entry of `ptx` (comments removed first), in order. A parameter
/// whose declaration it cannot read gets size 0 and type "?".
std::vector<PtxEntry> readPtxEntries(const std::string &ptx);

/// The architecture of `.target sm_XY` in `ptx`, or 0.
unsigned ptxTargetArch(const std::string &ptx);

} // namespace kiln::stand_in
