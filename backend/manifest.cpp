//===- backend/manifest.cpp - What a build holds, for the runtime ---------===//

#include "backend/manifest.h"

#include "backend/cuda_tools/cuda_archs.h"
#include "ir/types.h"

#include <llvm/Support/Format.h>
#include <llvm/Support/JSON.h>

#include <cmath>

namespace kiln::backend {

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

void writeFloat(llvm::json::OStream &json, double value) {
  if (std::isnan(value))
    json.value("nan");
  else if (std::isinf(value))
    json.value(value > 0 ? "inf" : "-inf");
  else
    json.value(value);
}

void writeConstantValue(llvm::json::OStream &json, const ConstantValue &value) {
  switch (value.kind()) {
  case ConstantValue::Kind::None:
    json.value(nullptr);
    return;
  case ConstantValue::Kind::Bool:
    json.value(value.boolValue());
    return;
  case ConstantValue::Kind::Int: {
    Int128 v = value.intValue128();
    if (v >= 0)
      json.value(static_cast<uint64_t>(v));
    else
      json.value(static_cast<int64_t>(v));
    return;
  }
  case ConstantValue::Kind::Float:
    writeFloat(json, value.floatValue());
    return;
  case ConstantValue::Kind::Complex:
    json.array([&] {
      writeFloat(json, value.realPart());
      writeFloat(json, value.imagPart());
    });
    return;
  case ConstantValue::Kind::String:
    json.value(value.stringValue());
    return;
  case ConstantValue::Kind::Bytes:
    llvm_unreachable("isManifestConstant excludes bytes");
  case ConstantValue::Kind::Tuple:
    json.array([&] {
      for (const ConstantValue &element : value.elements())
        writeConstantValue(json, element);
    });
    return;
  }
}

template <typename T> void writeOptional(llvm::json::OStream &json, const std::optional<T> &value) {
  if (value)
    json.value(*value);
  else
    json.value(nullptr);
}

void writeModuleKeys(llvm::json::OStream &json, const ManifestModule &module) {
  json.attribute("kiln_version", module.kilnVersion);
  json.attributeObject("source", [&] {
    json.attribute("file", module.sourceFile);
    json.attribute("checksum", bundle::checksumText(module.sourceChecksum));
  });
  if (!module.companionOf.empty()) {
    json.attribute("companion_of", module.companionOf);
    json.attributeArray("sources", [&] {
      for (const ManifestSource &source : module.sources)
        json.object([&] {
          json.attribute("file", source.file);
          json.attribute("sha256", source.sha256);
        });
    });
  }
  json.attributeObject("options", [&] {
    const ManifestOptions &options = module.options;
    json.attribute("fastmath", options.fastmath);
    json.attribute("debug", options.debug);
    json.attribute("lineinfo", options.lineinfo);
    json.attributeBegin("opt");
    writeOptional(json, options.opt);
    json.attributeEnd();
    json.attributeBegin("max_registers");
    writeOptional(json, options.maxRegisters);
    json.attributeEnd();
    json.attributeArray("ptxas_flags", [&] {
      for (const std::string &flag : options.ptxasFlags)
        json.value(flag);
    });
  });
  json.attributeObject("archs", [&] {
    json.attributeArray("cubins", [&] {
      for (unsigned arch : module.cubinArchs)
        json.value(arch);
    });
    json.attributeArray("ptx", [&] {
      for (unsigned arch : module.ptxArchs)
        json.value(arch);
    });
  });
  json.attributeArray("constants", [&] {
    for (const ManifestConstant &constant : module.constants)
      json.object([&] {
        json.attribute("name", constant.name);
        json.attribute("type", constantTypeName(constant.value));
        json.attributeBegin("value");
        writeConstantValue(json, constant.value);
        json.attributeEnd();
      });
  });
}

void writeEntry(llvm::json::OStream &json, const ManifestEntry &entry) {
  const ir::Function &kernel = *entry.kernel;
  const KernelInterface &interface = entry.interface;
  json.attribute("name", kernel.sourceName);
  json.attribute("kind", kernelKind(kernel));
  json.attribute("symbol", kernel.symbol);
  json.attribute("entry", interface.entryName);
  json.attributeArray("args", [&] {
    for (const ir::Argument *argument : kernel.arguments)
      json.value(argument->type()->str());
  });
  json.attributeArray("arg_names", [&] {
    for (const ir::Argument *argument : kernel.arguments)
      json.value(argument->name);
  });
  json.attributeArray("params", [&] {
    for (const KernelParameter &parameter : interface.parameters)
      json.object([&] {
        json.attribute("argument", parameter.argument);
        json.attribute("role", roleName(parameter.role));
        json.attribute("dimension", parameter.dimension);
        json.attributeArray("path", [&] {
          for (unsigned step : parameter.path)
            json.value(step);
        });
        json.attribute("type", parameter.machineType);
        json.attribute("size", parameter.size);
      });
  });
  json.attribute("static_shared_bytes", interface.staticSharedBytes);
  json.attribute("local_bytes", interface.localBytes);
  json.attribute("synchronizes", interface.synchronizes);
  json.attribute("raises", interface.raises);
  json.attribute("cooperative", interface.cooperative);
  // launch_bounds' first bound: a launch of larger blocks fails, as a GPU
  // driver refuses it.
  if (!kernel.options.launchBounds.empty())
    json.attribute("max_threads_per_block", kernel.options.launchBounds.front());
  json.attribute("block_entry", interface.hasBlockEntry);
  json.attributeArray("cubins", [&] {
    for (unsigned arch : entry.cubinArchs)
      json.value(arch);
  });
  json.attributeArray("ptx", [&] {
    for (unsigned arch : entry.ptxArchs)
      json.value(arch);
  });
  json.attributeArray("files", [&] {
    for (const std::string &file : entry.files)
      json.value(file);
  });
  if (!entry.resources.empty())
    json.attributeObject("resources", [&] {
      for (const auto &[arch, function] : entry.resources)
        json.attribute(cuda::smName(arch), cuda::resourceSummary(function));
    });
  if (entry.fatbin)
    json.attributeObject("fatbin", [&] {
      json.attribute("offset", entry.fatbin->offset);
      json.attribute("size", entry.fatbin->size);
      json.attribute("checksum", bundle::checksumText(entry.fatbin->checksum));
    });
}

} // namespace

void writeManifest(llvm::raw_ostream &os, const ManifestModule &module,
                   llvm::ArrayRef<ManifestEntry> entries) {
  llvm::json::OStream json(os, 2);
  json.object([&] {
    json.attribute("format", bundle::ManifestFormat);
    json.attribute("module", module.name);
    writeModuleKeys(json, module);
    json.attributeArray("specializations", [&] {
      for (const ManifestEntry &entry : entries)
        json.object([&] { writeEntry(json, entry); });
    });
  });
  os << '\n';
}

} // namespace kiln::backend
