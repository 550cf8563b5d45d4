//===- ir/operation_sites.h - Operations numbered, not placed ---*- C++ -*-===//
//
// Compiled code that reports where it failed (an IndexError names the file
// and line of the subscript) must not embed that position: a comment line
// added above a kernel would then change the code of every kernel below it,
// and the build would compile them again. Instead the code names the
// operation by a number, and the build resolves numbers to "file:line"
// beside the code, every build, from the source as it is then.
//
// The numbering is a function of the IR's structure only: the kernel and
// every function it calls, in the order the kernel reaches them (depth
// first, callees in the order of their first call), each function's blocks
// in order, in each block its instructions and then its terminator. Equal
// semantic hashes give equal IR, hence equal numbers, whatever the lines.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/reachable_functions.h"
#include "ir/typed_ir.h"

#include <llvm/ADT/ArrayRef.h>
#include <llvm/ADT/DenseMap.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace kiln::ir {

class OperationSites {
public:
  /// The number of no operation of the kernel.
  static constexpr uint32_t noSite = std::numeric_limits<uint32_t>::max();

  explicit OperationSites(const Function &kernel);

  /// The number of `instruction`; noSite where the kernel does not reach it.
  uint32_t siteOf(const Instruction &instruction) const { return numberOf(&instruction); }
  /// The number of `block`'s terminator.
  uint32_t siteOf(const Block &block) const { return numberOf(&block.terminator); }
  /// "file:line" of operation `site`, for messages; empty where the
  /// operation has no position (loops Kiln writes for ufuncs) or `site` is
  /// not one of the kernel's.
  std::string describe(uint32_t site) const;

private:
  struct Position {
    const Function *function;
    Location location;
  };

  uint32_t numberOf(const void *operation) const {
    auto found = numbers.find(operation);
    return found == numbers.end() ? noSite : found->second;
  }

  /// By the instruction, or by the terminator.
  llvm::DenseMap<const void *, uint32_t> numbers;
  std::vector<Position> positions;
};

} // namespace kiln::ir
