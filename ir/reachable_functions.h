//===- ir/reachable_functions.h - What a kernel reaches through calls -*- C++ -*-===//
//
// A kernel's code is its own and that of every function it calls, directly
// or not. Operation numbering (operation_sites.h) walks them in a fixed
// order; the back ends ask what they hold (the local arrays a thread needs
// room for).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/typed_ir.h"

#include <vector>

namespace kiln::ir {

/// The kernel and every function it reaches through calls, the kernel
/// first, each once, in the order the kernel reaches them.
std::vector<const Function *> reachableFunctions(const Function &kernel);

/// The local arrays (`LocalArray` operations) of the kernel and of every
/// function it reaches: what each of its threads holds of its own.
std::vector<const Instruction *> localArrays(const Function &kernel);

} // namespace kiln::ir
