//===- runtime/cpu_engine/print_output.h - print() in kernels ---*- C++ -*-===//
//
// A kernel's print() writes one line per call, its items separated by
// spaces, in the printf formats Numba's CUDA target uses
// (numba/cuda/printimpl.py): %lld and %llu for integers, %f for floats,
// True/False for booleans, strings as they are. Complex numbers, which Numba
// cannot print on a GPU, print as Kiln's GPU target prints them, (%f%+fj);
// None prints as None.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "module/cpu_kernel_abi.h"

#include <cstdio>
#include <string>

namespace kiln::cpu_engine {

/// The line print() writes for `items`, newline included.
std::string formatPrintLine(const KilnPrintItem *items, uint32_t count);

/// A stream lines are written to whole: one lock for every PrintOutput of
/// the process, because they usually share stdout.
class PrintOutput {
public:
  explicit PrintOutput(std::FILE *stream) : stream(stream ? stream : stdout) {}
  void writeLine(const std::string &line);
  void flush();

private:
  std::FILE *stream;
};

} // namespace kiln::cpu_engine
