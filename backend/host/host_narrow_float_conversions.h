//===- backend/host/host_narrow_float_conversions.h - 16-bit floats on the host -*- C++ -*-===//
//
// Without native half support (x86-64 before AVX512-FP16), LLVM turns every
// conversion to or from `half` into a call of compiler-rt's __extendhfsf2,
// __truncsfhf2 or __truncdfhf2, and every rounding to `bfloat` into
// __truncsfbf2 or __truncdfbf2 (widening a bfloat is a shift, inline).
// Neither the C library nor a pre-GCC 12 libgcc_s has them, so a host
// module that uses these types defines them itself: hidden, and once per
// library (linkonce_odr). They follow compiler-rt's fp_extend_impl and
// fp_trunc_impl: exact widening, round-to-nearest-even narrowing, NaN
// payloads kept as far as they fit.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <llvm/IR/Module.h>

namespace kiln::backend {

/// Whether any function of `module` works with float16 values.
bool usesHalf(const llvm::Module &module);

/// Defines __extendhfsf2, __truncsfhf2 and __truncdfhf2 in `module`.
void defineHalfConversions(llvm::Module &module);

/// Whether any function of `module` works with bfloat16 values.
bool usesBFloat16(const llvm::Module &module);

/// Defines __truncsfbf2 and __truncdfbf2 in `module`.
void defineBFloat16Conversions(llvm::Module &module);

} // namespace kiln::backend
