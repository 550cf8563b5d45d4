//===- ir/libdevice.h - The functions of cuda.libdevice -----------*- C++ -*-===//
//
// `cuda.libdevice.<name>(...)` calls libdevice's `__nv_<name>` directly. The
// front end types such a call from this table and the back end lowers it
// from the same table, so the two agree on every function's parameters,
// outputs and result.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <llvm/ADT/ArrayRef.h>
#include <llvm/ADT/StringRef.h>

#include <cstdint>
#include <string>
#include <vector>

namespace kiln {
class Type;
class TypeContext;
} // namespace kiln

namespace kiln::ir {

class Function;

enum class LibdeviceScalar : uint8_t { Void, Int16, Int32, Int64, Float32, Float64 };

struct LibdeviceParameter {
  LibdeviceScalar type;
  /// A pointer the function stores a result through; the call returns it.
  bool isOutput;
};

struct LibdeviceFunction {
  llvm::StringRef name; // "sincos"
  LibdeviceScalar result;
  std::vector<LibdeviceParameter> parameters;

  /// The name libdevice defines: "__nv_sincos".
  std::string symbol() const { return "__nv_" + name.str(); }
  /// What a call returns, in order: the result proper (unless void), then
  /// each output. One value is returned as itself, several as a tuple.
  std::vector<LibdeviceScalar> returnedValues() const;
  /// The types of the parameters that are not outputs: the call's operands.
  std::vector<LibdeviceScalar> inputs() const;
};

/// Every function of ir/libdevice_functions.def, sorted by name.
llvm::ArrayRef<LibdeviceFunction> libdeviceFunctions();
/// The function named `name` ("sincos"), or null.
const LibdeviceFunction *findLibdeviceFunction(llvm::StringRef name);

/// Whether `function`, or a function it calls, calls libdevice.
bool callsLibdevice(const Function &function);

/// The Numba type of a libdevice scalar (int32, float64, ...).
const Type *libdeviceType(TypeContext &types, LibdeviceScalar scalar);
/// Whether `type` is that of `scalar`.
bool isLibdeviceType(const Type *type, LibdeviceScalar scalar);
/// The type of a call of `function`: its one returned value's, or a tuple
/// of them all.
const Type *libdeviceCallType(TypeContext &types, const LibdeviceFunction &function);

} // namespace kiln::ir
