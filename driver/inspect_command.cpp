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
// "name", "kind" and "specializations"). Its keys that are the manifest's
// are spelled through the manifest's schema (module/manifest_keys.h).
//
//===----------------------------------------------------------------------===//

#include "driver/inspect_command.h"

#include "module/bundle_reader.h"
#include "module/manifest_format.h"
#include "module/manifest_keys.h"
#include "module/manifest_writer.h"
#include "module/module_reader.h"
#include "support/temporary_directory.h"

#include <CLI/CLI.hpp>
#include <llvm/ADT/StringExtras.h>
#include <llvm/Support/JSON.h>
#include <llvm/Support/WithColor.h>
#include <llvm/Support/raw_ostream.h>

#include <set>
#include <string>

namespace kiln::driver {

namespace {

using module::InspectedModule;
using module::ManifestModule;
using module::ManifestSpecialization;
namespace keys = module::keys;

std::string archList(const std::set<unsigned> &archs, bool ptx) {
  std::string text;
  for (unsigned arch : archs)
    text +=
        std::string(text.empty() ? "" : " ") + (ptx ? "compute_" : "sm_") + std::to_string(arch);
  return text.empty() ? "none" : text;
}

std::string scalarText(const llvm::json::Value &value) {
  std::string text;
  llvm::raw_string_ostream stream(text);
  stream << value;
  return text;
}

/// A string the manifest may lack (read as empty): null then.
llvm::json::Value textOrNull(const std::string &text) {
  return text.empty() ? llvm::json::Value(nullptr) : llvm::json::Value(text);
}

/// What ptxas reported per cubin, in `kiln build -v`'s words, in the
/// reader's order (by architecture).
void printResources(const ManifestSpecialization &spec, llvm::raw_ostream &os) {
  for (const auto &[name, usage] : spec.resources) {
    unsigned arch = 0;
    if (llvm::StringRef number = name;
        !number.consume_front("sm_") || number.getAsInteger(10, arch))
      continue;
    os << "    " << name << "   " << usage.registers << " registers, " << usage.stackBytes
       << " bytes stack, " << usage.spillStoreBytes << " bytes spill stores, "
       << usage.spillLoadBytes << " bytes spill loads, " << usage.sharedBytes << " bytes shared, "
       << usage.localBytes << " bytes local\n";
  }
}

void printModuleText(const InspectedModule &inspected, llvm::StringRef path,
                     llvm::raw_ostream &os) {
  const ManifestModule &module = inspected.manifest.module;
  const KilnBundleHeader &header = inspected.bundle.header;
  os << "module " << module.name << '\n';
  os << "  file        " << path << '\n';
  os << "  built by    Kiln " << (module.kilnVersion.empty() ? "?" : module.kilnVersion)
     << " (manifest format " << module::ManifestFormat << ", bundle format " << header.formatVersion
     << ")\n";
  if (!module.sourceFile.empty())
    os << "  source      " << module.sourceFile << " (checksum "
       << module::checksumText(module.sourceChecksum) << ")\n";
  if (!module.companionOf.empty()) {
    os << "  companion   of " << module.companionOf << ", built from";
    for (const module::ManifestSource &source : module.sources)
      os << ' ' << source.file;
    os << '\n';
  }
  os << "  options    ";
  for (const auto &[key, value] : module::optionEntries(module.options))
    os << ' ' << key << '=' << scalarText(value);
  os << '\n';
  os << "  archs       cubins " << archList(module.cubinArchs, false) << "; PTX "
     << archList(module.ptxArchs, true) << '\n';
  os << "  bundle      " << header.payloadOffset + header.payloadSize << " bytes at file offset "
     << inspected.bundle.fileOffset << ": manifest " << header.manifestSize << " bytes (checksum "
     << module::checksumText(header.manifestChecksum) << "), payload " << header.payloadSize
     << " bytes\n";
  os << (module.constants.empty() ? "  constants   none" : "  constants") << '\n';
  for (const module::ManifestConstant &constant : module.constants)
    os << "    " << constant.name << ": " << constant.type << " = " << scalarText(constant.value)
       << '\n';
}

void printSpecializationText(const ManifestSpecialization &spec, llvm::raw_ostream &os) {
  os << "  (" << llvm::join(spec.argumentTypes, ", ") << ")\n";
  os << "    entry   " << spec.entry << (spec.blockEntry ? " (with block entry)" : "")
     << (spec.cooperative ? " (cooperative launch)" : "") << '\n';
  if (!spec.indexChecks.empty())
    os << "    host    index checks: " << spec.indexChecks << '\n';
  os << "    archs   cubins " << archList(spec.cubinArchs, false) << "; PTX "
     << archList(spec.ptxArchs, true) << '\n';
  if (spec.fatbin)
    os << "    fatbin  " << spec.fatbin->size << " bytes at payload offset " << spec.fatbin->offset
       << " (checksum " << module::checksumText(spec.fatbin->checksum) << ")\n";
  else
    os << "    fatbin  none (the CPU engine only)\n";
  os << "    memory  " << spec.staticSharedBytes << " bytes static shared, " << spec.localBytes
     << " bytes local\n";
  printResources(spec, os);
}

void printText(const InspectedModule &module, llvm::StringRef path, llvm::raw_ostream &os) {
  printModuleText(module, path, os);
  for (const module::KernelGroup &kernel : module.kernels) {
    os << kernel.kind << ' ' << kernel.name << '\n';
    for (size_t index : kernel.specializations)
      printSpecializationText(module.specialization(index), os);
  }
}

/// A specialization's keys, as the manifest spells them.
void printSpecializationJson(const ManifestSpecialization &spec, llvm::json::OStream &json) {
  namespace key = keys::Specialization;
  json.attribute(key::Symbol, textOrNull(spec.symbol));
  json.attribute(key::Args, llvm::json::Array(spec.argumentTypes));
  json.attribute(key::Entry, spec.entry);
  json.attribute(key::BlockEntry, spec.blockEntry);
  if (!spec.indexChecks.empty())
    json.attribute(key::IndexChecks, spec.indexChecks);
  json.attribute(key::Cubins, llvm::json::Array(spec.cubinArchs));
  json.attribute(key::Ptx, llvm::json::Array(spec.ptxArchs));
  if (spec.fatbin)
    module::writeFatbin(json, *spec.fatbin);
  else
    json.attribute(key::Fatbin, nullptr);
  json.attribute(key::StaticSharedBytes, spec.staticSharedBytes);
  json.attribute(key::LocalBytes, spec.localBytes);
  json.attribute(key::Synchronizes, spec.synchronizes);
  json.attribute(key::Raises, spec.raises);
  json.attribute(key::Cooperative, spec.cooperative);
  if (!spec.resources.empty())
    module::writeResources(json, spec.resources);
  else
    json.attribute(key::Resources, nullptr);
}

void printJson(const InspectedModule &inspected, llvm::StringRef path, llvm::raw_ostream &os) {
  const ManifestModule &module = inspected.manifest.module;
  const KilnBundleHeader &header = inspected.bundle.header;
  llvm::json::OStream json(os, 2);
  json.object([&] {
    json.attribute("file", path);
    json.attribute(keys::Manifest::Module, module.name);
    json.attribute(keys::Manifest::KilnVersion, textOrNull(module.kilnVersion));
    json.attribute("manifest_format", module::ManifestFormat);
    json.attributeObject("bundle", [&] {
      json.attribute("format", header.formatVersion);
      json.attribute("file_offset", inspected.bundle.fileOffset);
      json.attribute("size", header.payloadOffset + header.payloadSize);
      json.attribute("manifest_size", header.manifestSize);
      json.attribute("manifest_checksum", module::checksumText(header.manifestChecksum));
      json.attribute("payload_offset", header.payloadOffset);
      json.attribute("payload_size", header.payloadSize);
    });
    if (!module.sourceFile.empty())
      module::writeSource(json, module);
    else
      json.attribute(keys::Manifest::Source, nullptr);
    module::writeCompanion(json, module);
    module::writeOptions(json, module.options);
    module::writeArchs(json, module);
    module::writeConstants(json, module.constants);
    json.attributeArray("kernels", [&] {
      for (const module::KernelGroup &kernel : inspected.kernels)
        json.object([&] {
          json.attribute("name", kernel.name);
          json.attribute("kind", kernel.kind);
          json.attributeArray("specializations", [&] {
            for (size_t index : kernel.specializations)
              json.object([&] { printSpecializationJson(inspected.specialization(index), json); });
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
  llvm::Expected<module::InspectedModule> module = module::readModule(*bytes);
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
