//===- backend/manifest.cpp - What a build holds, for the runtime ---------===//

#include "backend/manifest.h"

#include <llvm/Support/JSON.h>

namespace kiln::backend {

llvm::StringRef kernelKind(const ir::Function &kernel) {
  if (kernel.decl && kernel.decl->kind == FunctionDecl::Kind::Ufunc)
    return "ufunc";
  if (kernel.decl && kernel.decl->kind == FunctionDecl::Kind::Reduction)
    return "reduction";
  return "kernel";
}

void writeManifest(llvm::raw_ostream &os, llvm::StringRef moduleName,
                   llvm::ArrayRef<ManifestEntry> entries) {
  llvm::json::OStream json(os, 2);
  json.object([&] {
    json.attribute("format", 1);
    json.attribute("module", moduleName);
    json.attributeArray("specializations", [&] {
      for (const ManifestEntry &entry : entries)
        json.object([&] {
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
        });
    });
  });
  os << '\n';
}

} // namespace kiln::backend
