//===- ir/libdevice.cpp ----------------------------------------------------===//

#include "ir/libdevice.h"

#include "ir/typed_ir.h"
#include "ir/types.h"

#include <llvm/ADT/STLExtras.h>
#include <llvm/ADT/SmallPtrSet.h>

namespace kiln::ir {

namespace {
// The spellings libdevice_functions.def uses for parameters.
using S = LibdeviceScalar;
constexpr LibdeviceParameter i16{S::Int16, false}, i32{S::Int32, false}, i64{S::Int64, false},
    f32{S::Float32, false}, f64{S::Float64, false}, out_i32{S::Int32, true},
    out_f32{S::Float32, true}, out_f64{S::Float64, true};
} // namespace

llvm::ArrayRef<LibdeviceFunction> libdeviceFunctions() {
  static const std::vector<LibdeviceFunction> functions = {
#define LIBDEVICE_FUNCTION(NAME, RESULT, ...) {#NAME, S::RESULT, {__VA_ARGS__}},
#include "ir/libdevice_functions.def"
  };
  return functions;
}

const LibdeviceFunction *findLibdeviceFunction(llvm::StringRef name) {
  llvm::ArrayRef<LibdeviceFunction> functions = libdeviceFunctions();
  const LibdeviceFunction *found = llvm::partition_point(
      functions, [&](const LibdeviceFunction &function) { return function.name < name; });
  return found != functions.end() && found->name == name ? found : nullptr;
}

std::vector<LibdeviceScalar> LibdeviceFunction::returnedValues() const {
  std::vector<LibdeviceScalar> values;
  if (result != S::Void)
    values.push_back(result);
  for (const LibdeviceParameter &parameter : parameters)
    if (parameter.isOutput)
      values.push_back(parameter.type);
  return values;
}

std::vector<LibdeviceScalar> LibdeviceFunction::inputs() const {
  std::vector<LibdeviceScalar> types;
  for (const LibdeviceParameter &parameter : parameters)
    if (!parameter.isOutput)
      types.push_back(parameter.type);
  return types;
}

static bool callsLibdevice(const Function &function,
                           llvm::SmallPtrSetImpl<const Function *> &visited) {
  if (!visited.insert(&function).second)
    return false;
  for (const auto &block : function.blocks)
    for (const Instruction *instruction : block->instructions)
      if (instruction->opcode == Opcode::LibdeviceCall ||
          (instruction->opcode == Opcode::Call && callsLibdevice(*instruction->callee, visited)))
        return true;
  return false;
}

bool callsLibdevice(const Function &function) {
  llvm::SmallPtrSet<const Function *, 8> visited;
  return callsLibdevice(function, visited);
}

const Type *libdeviceType(TypeContext &types, LibdeviceScalar scalar) {
  switch (scalar) {
  case S::Void:
    return types.none();
  case S::Int16:
    return types.integer(16, true);
  case S::Int32:
    return types.int32();
  case S::Int64:
    return types.int64();
  case S::Float32:
    return types.float32();
  case S::Float64:
    return types.float64();
  }
  return nullptr;
}

bool isLibdeviceType(const Type *type, LibdeviceScalar scalar) {
  switch (scalar) {
  case S::Void:
    return llvm::isa<NoneType>(type);
  case S::Int16:
  case S::Int32:
  case S::Int64: {
    const auto *integer = llvm::dyn_cast<IntegerType>(type);
    unsigned bits = scalar == S::Int16 ? 16 : scalar == S::Int32 ? 32 : 64;
    return integer && integer->signedness() && integer->bitwidth() == bits;
  }
  case S::Float32:
  case S::Float64: {
    const auto *floating = llvm::dyn_cast<FloatType>(type);
    return floating && floating->bitwidth() == (scalar == S::Float32 ? 32u : 64u);
  }
  }
  return false;
}

const Type *libdeviceCallType(TypeContext &types, const LibdeviceFunction &function) {
  std::vector<LibdeviceScalar> values = function.returnedValues();
  if (values.size() == 1)
    return libdeviceType(types, values.front());
  std::vector<const Type *> elements;
  for (LibdeviceScalar value : values)
    elements.push_back(libdeviceType(types, value));
  return types.tuple(elements);
}

} // namespace kiln::ir
