//===- backend/host_half_conversions.h - float16 conversions on the host -*- C++ -*-===//
//
// Without native half support (x86-64 before AVX512-FP16), LLVM turns every
// conversion to or from `half` into a call of compiler-rt's __extendhfsf2,
// __truncsfhf2 or __truncdfhf2. Neither the C library nor a pre-GCC 12
// libgcc_s has them, so a host module that uses half defines them itself:
// hidden, and once per library (linkonce_odr). They follow compiler-rt's
// fp_extend_impl and fp_trunc_impl: exact widening, round-to-nearest-even
// narrowing, NaN payloads kept as far as they fit.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <llvm/IR/Module.h>

namespace kiln::backend {

/// Whether any function of `module` works with float16 values.
bool usesHalf(const llvm::Module &module);

/// Defines __extendhfsf2, __truncsfhf2 and __truncdfhf2 in `module`.
void defineHalfConversions(llvm::Module &module);

} // namespace kiln::backend
