//===- pipeline/manifest_records.cpp - Builds in manifest terms ------------===//

#include "pipeline/manifest_records.h"

#include "backend/codegen/kernel_abi.h"
#include "backend/cuda_tools/cuda_archs.h"
#include "ir/operation_sites.h"
#include "ir/types.h"

#include <cmath>

namespace kiln::pipeline {

llvm::StringRef kernelKind(const ir::Function &kernel) {
  switch (kernel.origin) {
  case ir::Function::Origin::UfuncLoop:
    return "ufunc";
  case ir::Function::Origin::ReductionLoop:
    return "reduction";
  case ir::Function::Origin::Source:
    return "kernel";
  }
  llvm_unreachable("unknown function origin");
}

std::string constantTypeName(const ConstantValue &value) {
  if (const Type *dtype = value.numpyType())
    return dtype->str();
  switch (value.kind()) {
  case ConstantValue::Kind::None:
    return "none";
  case ConstantValue::Kind::Bool:
    return "bool";
  case ConstantValue::Kind::Int: {
    Int128 v = value.intValue128();
    if (v >= INT64_MIN && v <= INT64_MAX)
      return "int64";
    if (v > 0 && v <= static_cast<Int128>(UINT64_MAX))
      return "uint64";
    return "";
  }
  case ConstantValue::Kind::Float:
    return "float64";
  case ConstantValue::Kind::Complex:
    return "complex128";
  case ConstantValue::Kind::String:
    return "unicode_type";
  case ConstantValue::Kind::Bytes:
    return ""; // only kernels write bytes constants; the module has none
  case ConstantValue::Kind::Tuple: {
    std::vector<std::string> names;
    for (const ConstantValue &element : value.elements()) {
      names.push_back(constantTypeName(element));
      if (names.back().empty())
        return "";
    }
    if (names.empty())
      return "Tuple()";
    bool uniform = llvm::all_equal(names);
    if (uniform)
      return "UniTuple(" + names.front() + " x " + std::to_string(names.size()) + ")";
    std::string text = "Tuple(";
    for (size_t i = 0; i < names.size(); ++i)
      text += (i ? ", " : "") + names[i];
    return text + ")";
  }
  }
  return "";
}

bool isManifestConstant(const ConstantValue &value) {
  if (const Type *dtype = value.numpyType())
    if (!llvm::isa<BooleanType, IntegerType, FloatType, ComplexType>(dtype))
      return false;
  return !constantTypeName(value).empty();
}

namespace {

/// A float as the manifest writes it: non-finite values as strings.
llvm::json::Value floatValue(double value) {
  if (std::isnan(value))
    return "nan";
  if (std::isinf(value))
    return value > 0 ? "inf" : "-inf";
  return value;
}

llvm::json::Value constantValue(const ConstantValue &value) {
  switch (value.kind()) {
  case ConstantValue::Kind::None:
    return nullptr;
  case ConstantValue::Kind::Bool:
    return value.boolValue();
  case ConstantValue::Kind::Int: {
    Int128 v = value.intValue128();
    if (v >= 0)
      return static_cast<uint64_t>(v);
    return static_cast<int64_t>(v);
  }
  case ConstantValue::Kind::Float:
    return floatValue(value.floatValue());
  case ConstantValue::Kind::Complex:
    return llvm::json::Array{floatValue(value.realPart()), floatValue(value.imagPart())};
  case ConstantValue::Kind::String:
    return value.stringValue();
  case ConstantValue::Kind::Bytes:
    llvm_unreachable("isManifestConstant excludes bytes");
  case ConstantValue::Kind::Tuple: {
    llvm::json::Array elements;
    for (const ConstantValue &element : value.elements())
      elements.push_back(constantValue(element));
    return elements;
  }
  }
  llvm_unreachable("unknown constant kind");
}

} // namespace

module::ManifestConstant manifestConstant(std::string name, const ConstantValue &value) {
  return {std::move(name), constantTypeName(value), constantValue(value)};
}

module::ManifestSpecialization
manifestSpecialization(const ir::Function &kernel, const backend::KernelInterface &interface,
                       const std::map<unsigned, cuda_tools::FunctionResources> &resources) {
  module::ManifestSpecialization entry;
  entry.name = kernel.sourceName;
  entry.kind = kernelKind(kernel).str();
  entry.symbol = kernel.symbol;
  entry.entry = interface.entryName;
  for (const ir::Argument *argument : kernel.arguments) {
    entry.argumentTypes.push_back(argument->type()->str());
    entry.argumentNames.push_back(argument->name);
  }
  for (const backend::KernelParameter &parameter : interface.parameters)
    entry.parameters.push_back({parameter.argument, backend::roleName(parameter.role).str(),
                                parameter.dimension, parameter.path, parameter.machineType,
                                parameter.size});
  entry.staticSharedBytes = interface.staticSharedBytes;
  entry.localBytes = interface.localBytes;
  entry.synchronizes = interface.synchronizes;
  entry.raises = interface.raises;
  entry.cooperative = interface.cooperative;
  // launch_bounds' first bound: a launch of larger blocks fails, as a GPU
  // driver refuses it.
  if (!kernel.options.launchBounds.empty())
    entry.maxThreadsPerBlock = kernel.options.launchBounds.front();
  entry.blockEntry = interface.hasBlockEntry;
  entry.indexChecks = backend::spellingOf(interface.indexChecks).str();
  // Resolved from the kernel as this build read it, whether its code was
  // compiled now or found in the cache: the code holds no positions.
  if (!interface.messageSites.empty()) {
    ir::OperationSites operations(kernel);
    for (uint32_t site : interface.messageSites)
      entry.sites.push_back(operations.describe(site));
  }
  for (const auto &[arch, function] : resources)
    entry.resources.push_back(
        {cuda_tools::smName(arch),
         {function.registers, function.stackFrameBytes, function.spillStoreBytes,
          function.spillLoadBytes, function.sharedMemoryBytes, function.localMemoryBytes}});
  return entry;
}

} // namespace kiln::pipeline
