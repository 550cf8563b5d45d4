//===- backend/host/host_libdevice.h - libdevice on the CPU engine ---*- C++ -*-===//
//
// `cuda.libdevice.<name>` calls run on the CPU engine through libdevice's
// own code, so that the engine computes what a GPU computes rather than
// what the host's C library would. libdevice is written for NVPTX: it asks
// `__nvvm_reflect` about the GPU and uses NVVM intrinsics for the PTX
// instructions it needs, and inline PTX for a few more (subtraction with a
// rounding mode, carry chains of 64- and 128-bit arithmetic). After linking
// it into a host module, the questions get a GPU's answers and each
// intrinsic and inline PTX sequence becomes host code:
//
//  - arithmetic, square roots, reciprocals and conversions rounded to
//    nearest are plain LLVM operations; rounded toward zero or ±infinity,
//    they run in a small strictfp function that sets the host's rounding
//    mode around a constrained operation;
//  - float-to-integer conversions round to an integral value in their mode
//    and saturate, NaN giving 0, as PTX's cvt does;
//  - PTX's approximate instructions (ex2, lg2, sin, cos, rsqrt, tanh,
//    div.approx) become the exact operations, so libdevice's fast_*
//    functions are more accurate on the host than on a GPU;
//  - flush-to-zero variants compute as the others: the host keeps
//    subnormals, as a kernel without fastmath does.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <llvm/IR/Module.h>
#include <llvm/Support/Error.h>

namespace kiln::backend {

/// Makes the libdevice code linked into the host module `module` run on the
/// host. Fails, naming it, on an NVVM intrinsic or inline PTX it does not
/// know (a libdevice newer than Kiln).
llvm::Error adaptLibdeviceForHost(llvm::Module &module);

} // namespace kiln::backend
