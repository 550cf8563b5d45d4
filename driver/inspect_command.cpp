//===- driver/inspect_command.cpp - `kiln inspect` ------------------------===//
//
//   $ kiln inspect out/vector_add.cpython-312-x86_64-linux-gnu.so
//   module pkg.vector_add
//     file        out/vector_add.cpython-312-x86_64-linux-gnu.so
//     built by    Kiln 0.1.0 (manifest format 2, bundle format 2)
//     source      vector_add.py (checksum ac312c16f509b8af)
//     options     fastmath=false debug=false lineinfo=false opt=null ...
//     archs       cubins sm_80; PTX compute_80
//     bundle      39744 bytes at file offset 1200: manifest 8177 bytes ...
//     constants   none
//   kernel add_kernel
//     (array(float32, 1d, C), array(float32, 1d, C), array(float32, 1d, C))
//       entry   _kiln_3pkg10vector_add10add_kernel_0 (with block entry)
//       archs   cubins sm_80; PTX compute_80
//       fatbin  8872 bytes at payload offset 0 (checksum d842f7c1b79b99e2)
//       memory  0 bytes static shared, 0 bytes local
//
// The JSON form (--json) holds the same: "file", "module", "kiln_version",
// "manifest_format", "bundle", "source", for a companion "companion_of" and
// "sources", "options", "archs", "constants" and "kernels" (each with
// "name", "kind" and "specializations").
//
//===----------------------------------------------------------------------===//

#include "driver/inspect_command.h"

#include "backend/cuda_tools/cuda_archs.h"
#include "backend/manifest.h"
#include "module/bundle_reader.h"
#include "module/module_reader.h"
#include "support/temporary_directory.h"

#include <CLI/CLI.hpp>
#include <llvm/Support/JSON.h>
#include <llvm/Support/WithColor.h>
#include <llvm/Support/raw_ostream.h>

#include <map>

namespace kiln::driver {

namespace {

std::string archList(const llvm::json::Array *archs, bool ptx) {
  std::string text;
  if (archs)
    for (const llvm::json::Value &arch : *archs)
      if (std::optional<int64_t> number = arch.getAsInteger())
        text += std::string(text.empty() ? "" : " ") + (ptx ? "compute_" : "sm_") +
                std::to_string(*number);
  return text.empty() ? "none" : text;
}

std::string scalarText(const llvm::json::Value *value) {
  if (!value)
    return "?";
  std::string text;
  llvm::raw_string_ostream stream(text);
  stream << *value;
  return text;
}

/// What ptxas reported per cubin, in `kiln build -v`'s words, sorted by arch.
void printResources(const llvm::json::Object &resources, llvm::raw_ostream &os) {
  std::map<unsigned, const llvm::json::Object *> byArch;
  for (const auto &[name, value] : resources) {
    unsigned arch = 0;
    llvm::StringRef text = name;
    if (text.consume_front("sm_") && !text.getAsInteger(10, arch))
      byArch[arch] = value.getAsObject();
  }
  for (const auto &[arch, usage] : byArch) {
    if (!usage)
      continue;
    auto bytes = [&](llvm::StringRef key) { return usage->getInteger(key).value_or(0); };
    os << "    " << cuda::smName(arch) << "   " << bytes("registers") << " registers, "
       << bytes("stack") << " bytes stack, " << bytes("spill_stores") << " bytes spill stores, "
       << bytes("spill_loads") << " bytes spill loads, " << bytes("shared") << " bytes shared, "
       << bytes("local") << " bytes local\n";
  }
}

void printText(const bundle::InspectedModule &module, llvm::StringRef path, llvm::raw_ostream &os) {
  const llvm::json::Object &root = *module.manifest.getAsObject();
  const KilnBundleHeader &header = module.bundle.header;
  os << "module " << root.getString("module").value_or("?") << '\n';
  os << "  file        " << path << '\n';
  os << "  built by    Kiln " << root.getString("kiln_version").value_or("?")
     << " (manifest format " << bundle::ManifestFormat << ", bundle format " << header.formatVersion
     << ")\n";
  if (const llvm::json::Object *source = root.getObject("source"))
    os << "  source      " << source->getString("file").value_or("?") << " (checksum "
       << source->getString("checksum").value_or("?") << ")\n";
  if (std::optional<llvm::StringRef> companionOf = root.getString("companion_of")) {
    os << "  companion   of " << *companionOf << ", built from";
    if (const llvm::json::Array *sources = root.getArray("sources"))
      for (const llvm::json::Value &value : *sources)
        if (const llvm::json::Object *source = value.getAsObject())
          os << ' ' << source->getString("file").value_or("?");
    os << '\n';
  }
  if (const llvm::json::Object *options = root.getObject("options")) {
    os << "  options    ";
    for (llvm::StringRef key :
         {"fastmath", "debug", "lineinfo", "opt", "max_registers", "ptxas_flags"})
      os << ' ' << key << '=' << scalarText(options->get(key));
    os << '\n';
  }
  if (const llvm::json::Object *archs = root.getObject("archs"))
    os << "  archs       cubins " << archList(archs->getArray("cubins"), false) << "; PTX "
       << archList(archs->getArray("ptx"), true) << '\n';
  os << "  bundle      " << header.payloadOffset + header.payloadSize << " bytes at file offset "
     << module.bundle.fileOffset << ": manifest " << header.manifestSize << " bytes (checksum "
     << bundle::checksumText(header.manifestChecksum) << "), payload " << header.payloadSize
     << " bytes\n";
  if (const llvm::json::Array *constants = root.getArray("constants")) {
    os << (constants->empty() ? "  constants   none" : "  constants") << '\n';
    for (const llvm::json::Value &value : *constants)
      if (const llvm::json::Object *constant = value.getAsObject())
        os << "    " << constant->getString("name").value_or("?") << ": "
           << constant->getString("type").value_or("?") << " = "
           << scalarText(constant->get("value")) << '\n';
  }
  for (const bundle::KernelGroup &kernel : module.kernels) {
    os << kernel.kind << ' ' << kernel.name << '\n';
    for (const llvm::json::Object *spec : kernel.specializations) {
      os << "  (";
      if (const llvm::json::Array *args = spec->getArray("args"))
        for (size_t i = 0; i < args->size(); ++i)
          os << (i ? ", " : "") << (*args)[i].getAsString().value_or("?");
      os << ")\n";
      os << "    entry   " << spec->getString("entry").value_or("?")
         << (spec->getBoolean("block_entry").value_or(false) ? " (with block entry)" : "")
         << (spec->getBoolean("cooperative").value_or(false) ? " (cooperative launch)" : "")
         << '\n';
      os << "    archs   cubins " << archList(spec->getArray("cubins"), false) << "; PTX "
         << archList(spec->getArray("ptx"), true) << '\n';
      if (const llvm::json::Object *fatbin = spec->getObject("fatbin"))
        os << "    fatbin  " << fatbin->getInteger("size").value_or(0)
           << " bytes at payload offset " << fatbin->getInteger("offset").value_or(0)
           << " (checksum " << fatbin->getString("checksum").value_or("?") << ")\n";
      else
        os << "    fatbin  none (the CPU engine only)\n";
      os << "    memory  " << spec->getInteger("static_shared_bytes").value_or(0)
         << " bytes static shared, " << spec->getInteger("local_bytes").value_or(0)
         << " bytes local\n";
      if (const llvm::json::Object *resources = spec->getObject("resources"))
        printResources(*resources, os);
    }
  }
}

void printJson(const bundle::InspectedModule &module, llvm::StringRef path, llvm::raw_ostream &os) {
  const llvm::json::Object &root = *module.manifest.getAsObject();
  const KilnBundleHeader &header = module.bundle.header;
  llvm::json::OStream json(os, 2);
  auto copy = [&](llvm::StringRef key) {
    const llvm::json::Value *value = root.get(key);
    json.attribute(key, value ? *value : llvm::json::Value(nullptr));
  };
  json.object([&] {
    json.attribute("file", path);
    copy("module");
    copy("kiln_version");
    json.attribute("manifest_format", bundle::ManifestFormat);
    json.attributeObject("bundle", [&] {
      json.attribute("format", header.formatVersion);
      json.attribute("file_offset", module.bundle.fileOffset);
      json.attribute("size", header.payloadOffset + header.payloadSize);
      json.attribute("manifest_size", header.manifestSize);
      json.attribute("manifest_checksum", bundle::checksumText(header.manifestChecksum));
      json.attribute("payload_offset", header.payloadOffset);
      json.attribute("payload_size", header.payloadSize);
    });
    copy("source");
    if (root.get("companion_of")) {
      copy("companion_of");
      copy("sources");
    }
    copy("options");
    copy("archs");
    copy("constants");
    json.attributeArray("kernels", [&] {
      for (const bundle::KernelGroup &kernel : module.kernels)
        json.object([&] {
          json.attribute("name", kernel.name);
          json.attribute("kind", kernel.kind);
          json.attributeArray("specializations", [&] {
            for (const llvm::json::Object *spec : kernel.specializations)
              json.object([&] {
                for (llvm::StringRef key : {"symbol", "args", "entry", "block_entry", "cubins",
                                            "ptx", "fatbin", "static_shared_bytes", "local_bytes",
                                            "synchronizes", "raises", "cooperative", "resources"}) {
                  const llvm::json::Value *value = spec->get(key);
                  json.attribute(key, value ? *value : llvm::json::Value(nullptr));
                }
              });
          });
        });
    });
  });
  os << '\n';
}

} // namespace

int runInspect(const InspectOptions &options) {
  llvm::Expected<std::string> bytes = support::readFileBytes(options.path);
  if (!bytes) {
    llvm::WithColor::error(llvm::errs(), "kiln") << llvm::toString(bytes.takeError()) << '\n';
    return 1;
  }
  llvm::Expected<bundle::InspectedModule> module = bundle::readModule(*bytes);
  if (!module) {
    llvm::WithColor::error(llvm::errs(), "kiln")
        << "'" << options.path << "': " << llvm::toString(module.takeError()) << '\n';
    return 1;
  }
  if (options.json)
    printJson(*module, options.path, llvm::outs());
  else
    printText(*module, options.path, llvm::outs());
  return 0;
}

CLI::App *addInspectCommand(CLI::App &app, InspectOptions &inspect) {
  CLI::App *inspectCommand = app.add_subcommand(
      "inspect", "Show what a module built by `kiln build --module` holds, without importing it");
  inspectCommand->add_option("module", inspect.path, "Built module (kernels.cpython-*.so)")
      ->required();
  inspectCommand->add_flag("--json", inspect.json, "Print the result as JSON");
  return inspectCommand;
}

} // namespace kiln::driver
