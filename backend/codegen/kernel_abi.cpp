//===- backend/codegen/kernel_abi.cpp - How kernel arguments are passed -----------===//

#include "backend/codegen/kernel_abi.h"

#include <llvm/Support/Casting.h>

namespace kiln::backend {

llvm::StringRef roleName(KernelParameter::Role role) {
  switch (role) {
  case KernelParameter::Role::Value:
    return "value";
  case KernelParameter::Role::Real:
    return "real";
  case KernelParameter::Role::Imaginary:
    return "imag";
  case KernelParameter::Role::Data:
    return "data";
  case KernelParameter::Role::Shape:
    return "shape";
  case KernelParameter::Role::Stride:
    return "stride";
  case KernelParameter::Role::Record:
    return "record";
  }
  return "value";
}

namespace {

class Flattener {
public:
  std::vector<KernelParameter> parameters;

  void add(unsigned argument, const Type *type, std::vector<unsigned> path) {
    using Role = KernelParameter::Role;
    if (const auto *integer = llvm::dyn_cast<IntegerType>(type)) {
      unsigned bytes = integer->bitwidth() / 8;
      push(argument, Role::Value, 0, path,
           (integer->signedness() ? "i" : "u") + std::to_string(integer->bitwidth()), bytes);
    } else if (const auto *real = llvm::dyn_cast<FloatType>(type)) {
      push(argument, Role::Value, 0, path, "f" + std::to_string(real->bitwidth()),
           real->bitwidth() / 8);
    } else if (llvm::isa<BooleanType>(type)) {
      push(argument, Role::Value, 0, path, "i8", 1);
    } else if (llvm::isa<DateTimeType>(type)) {
      push(argument, Role::Value, 0, path, "i64", 8);
    } else if (llvm::isa<PointerType>(type)) {
      push(argument, Role::Value, 0, path, "ptr", 8);
    } else if (const auto *complex = llvm::dyn_cast<ComplexType>(type)) {
      unsigned bits = complex->elementType()->bitwidth();
      push(argument, Role::Real, 0, path, "f" + std::to_string(bits), bits / 8);
      push(argument, Role::Imaginary, 0, path, "f" + std::to_string(bits), bits / 8);
    } else if (const auto *array = llvm::dyn_cast<ArrayType>(type)) {
      push(argument, Role::Data, 0, path, "ptr", 8);
      for (unsigned d = 0; d < array->rank(); ++d)
        push(argument, Role::Shape, d, path, "i64", 8);
      for (unsigned d = 0; d < array->rank(); ++d)
        push(argument, Role::Stride, d, path, "i64", 8);
    } else if (llvm::isa<RecordType>(type)) {
      push(argument, Role::Record, 0, path, "ptr", 8);
    } else if (const auto *member = llvm::dyn_cast<EnumMemberType>(type)) {
      // The member's value, its only part.
      std::vector<unsigned> inner = path;
      inner.push_back(0);
      add(argument, member->valueType(), std::move(inner));
    } else if (const auto *tuple = llvm::dyn_cast<TupleType>(type)) {
      for (size_t i = 0; i < tuple->size(); ++i) {
        std::vector<unsigned> inner = path;
        inner.push_back(static_cast<unsigned>(i));
        add(argument, tuple->elementTypes()[i], std::move(inner));
      }
    }
    // none and other argument types without a run-time value take no
    // parameter.
  }

private:
  void push(unsigned argument, KernelParameter::Role role, unsigned dimension,
            const std::vector<unsigned> &path, std::string machineType, unsigned size) {
    parameters.push_back({argument, role, dimension, path, std::move(machineType), size, size});
  }
};

} // namespace

std::vector<KernelParameter> kernelParameters(llvm::ArrayRef<const Type *> arguments) {
  Flattener flattener;
  for (size_t i = 0; i < arguments.size(); ++i)
    flattener.add(static_cast<unsigned>(i), arguments[i], {});
  return std::move(flattener.parameters);
}

} // namespace kiln::backend
