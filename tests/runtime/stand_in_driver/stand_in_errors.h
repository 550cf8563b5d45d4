//===- tests/runtime/stand_in_driver/stand_in_errors.h - CUresult names ---===//
//
// Part of the stand-in CUDA driver of the tests.
//
//===----------------------------------------------------------------------===//
#pragma once

namespace kiln::stand_in {

/// "CUDA_ERROR_OUT_OF_MEMORY" for 2; null for codes cuda.h does not define.
const char *errorName(int code);
/// "out of memory" for 2; null for codes cuda.h does not define.
const char *errorDescription(int code);
/// The code of a name ("CUDA_ERROR_OUT_OF_MEMORY") or number ("2"), or -1.
int parseError(const char *text);

} // namespace kiln::stand_in
