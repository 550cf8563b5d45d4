//===- backend/codegen/kernel_abi.h - How kernel arguments are passed ---*- C++ -*-===//
//
// [Note: kernel ABI]
// A kernel's Python arguments become a flat list of machine parameters, the
// same on both targets (see docs/abi.md):
//
//   scalar            one parameter by value (bool as one byte)
//   complex           two parameters: the real part, then the imaginary part
//   array (ndim = n)  data pointer, then n shape entries, then n strides
//                     (int64, strides in bytes)
//   record            a pointer to its bytes
//   tuple             its elements' parameters, in order
//
// The layout of every specialization is written into the module's manifest
// so that the runtime packs arguments without knowing the compiler: on a
// GPU, the parameter buffers go to cuLaunchKernel as they are; on the CPU
// engine, to the specialization's entry points in the same form.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/types.h"

#include <llvm/ADT/StringRef.h>

#include <string>
#include <vector>

namespace kiln::backend {

/// One machine parameter of a kernel.
struct KernelParameter {
  /// What part of its argument the parameter carries.
  enum class Role : uint8_t { Value, Real, Imaginary, Data, Shape, Stride, Record };

  /// The Python argument (position in the signature) it belongs to.
  unsigned argument;
  Role role;
  /// For Shape and Stride: the dimension; for tuple elements, see `path`.
  unsigned dimension = 0;
  /// Positions of nested tuple elements leading to the value ("0.1" for
  /// the second element of the first element); empty outside tuples.
  std::vector<unsigned> path;
  /// The machine type: "i8" (bool), "i16", "i32", "i64", "u8".."u64",
  /// "f16", "f32", "f64" or "ptr".
  std::string machineType;
  unsigned size;
  unsigned alignment;
};

llvm::StringRef roleName(KernelParameter::Role role);

/// The machine parameters of a kernel taking `arguments`, in order.
std::vector<KernelParameter> kernelParameters(llvm::ArrayRef<const Type *> arguments);

} // namespace kiln::backend
