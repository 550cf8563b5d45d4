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

#include "backend/cuda_tools/cuda_archs.h"
#include "module/bundle_reader.h"
#include "module/manifest_format.h"
#include "module/manifest_keys.h"
#include "module/module_reader.h"
#include "support/temporary_directory.h"

#include <CLI/CLI.hpp>
#include <llvm/ADT/StringExtras.h>
#include <llvm/Support/JSON.h>
#include <llvm/Support/WithColor.h>
#include <llvm/Support/raw_ostream.h>

#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <utility>
#include <vector>

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

// The manifest's objects as the manifest spells them, for --json (which
// prints an object's keys sorted, as it always has) and for the text's
// options.

using Members = std::vector<std::pair<std::string_view, llvm::json::Value>>;

llvm::json::Object manifestObject(Members members) {
  llvm::json::Object result;
  for (auto &[key, value] : members)
    result[llvm::StringRef(key)] = std::move(value);
  return result;
}

llvm::json::Value sourceValue(const ManifestModule &module) {
  if (module.sourceFile.empty())
    return nullptr;
  return manifestObject({{keys::Source::File, module.sourceFile},
                         {keys::Source::Checksum, module::checksumText(module.sourceChecksum)}});
}

llvm::json::Array sourcesArray(const ManifestModule &module) {
  llvm::json::Array sources;
  for (const module::ManifestSource &source : module.sources)
    sources.push_back(manifestObject({{keys::CompanionSource::File, source.file},
                                      {keys::CompanionSource::Sha256, source.sha256}}));
  return sources;
}

/// A string the manifest may lack (written empty here): null then.
llvm::json::Value textOrNull(const std::string &text) {
  return text.empty() ? llvm::json::Value(nullptr) : llvm::json::Value(text);
}

template <typename T> llvm::json::Value optionalValue(const std::optional<T> &value) {
  return value ? llvm::json::Value(*value) : llvm::json::Value(nullptr);
}

/// The options, in the manifest's order.
Members optionEntries(const module::ManifestOptions &options) {
  namespace key = keys::Options;
  return {{key::Fastmath, options.fastmath},
          {key::Debug, options.debug},
          {key::Lineinfo, options.lineinfo},
          {key::Opt, optionalValue(options.opt)},
          {key::MaxRegisters, optionalValue(options.maxRegisters)},
          {key::PtxasFlags, llvm::json::Array(options.ptxasFlags)}};
}

llvm::json::Object optionsObject(const module::ManifestOptions &options) {
  return manifestObject(optionEntries(options));
}

llvm::json::Object archsObject(const ManifestModule &module) {
  return manifestObject({{keys::Archs::Cubins, llvm::json::Array(module.cubinArchs)},
                         {keys::Archs::Ptx, llvm::json::Array(module.ptxArchs)}});
}

llvm::json::Array constantsArray(const ManifestModule &module) {
  llvm::json::Array constants;
  for (const module::ManifestConstant &constant : module.constants)
    constants.push_back(manifestObject({{keys::Constant::Name, constant.name},
                                        {keys::Constant::Type, constant.type},
                                        {keys::Constant::Value, constant.value}}));
  return constants;
}

llvm::json::Value fatbinValue(const ManifestSpecialization &spec) {
  if (!spec.fatbin)
    return nullptr;
  return manifestObject({{keys::Fatbin::Offset, spec.fatbin->offset},
                         {keys::Fatbin::Size, spec.fatbin->size},
                         {keys::Fatbin::Checksum, module::checksumText(spec.fatbin->checksum)}});
}

llvm::json::Value resourcesValue(const ManifestSpecialization &spec) {
  if (spec.resources.empty())
    return nullptr;
  namespace key = keys::Resources;
  llvm::json::Object byArch;
  for (const auto &[arch, usage] : spec.resources)
    byArch[arch] = manifestObject({{key::Registers, usage.registers},
                                   {key::Stack, usage.stackBytes},
                                   {key::SpillStores, usage.spillStoreBytes},
                                   {key::SpillLoads, usage.spillLoadBytes},
                                   {key::Shared, usage.sharedBytes},
                                   {key::Local, usage.localBytes}});
  return byArch;
}

/// What ptxas reported per cubin, in `kiln build -v`'s words, sorted by arch.
void printResources(const ManifestSpecialization &spec, llvm::raw_ostream &os) {
  std::map<unsigned, const module::ManifestResources *> byArch;
  for (const auto &[name, usage] : spec.resources) {
    unsigned arch = 0;
    llvm::StringRef text = name;
    if (text.consume_front("sm_") && !text.getAsInteger(10, arch))
      byArch[arch] = &usage;
  }
  for (const auto &[arch, usage] : byArch)
    os << "    " << cuda_tools::smName(arch) << "   " << usage->registers << " registers, "
       << usage->stackBytes << " bytes stack, " << usage->spillStoreBytes << " bytes spill stores, "
       << usage->spillLoadBytes << " bytes spill loads, " << usage->sharedBytes << " bytes shared, "
       << usage->localBytes << " bytes local\n";
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
  for (const auto &[key, value] : optionEntries(module.options))
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
  json.attribute(key::Cubins, llvm::json::Array(spec.cubinArchs));
  json.attribute(key::Ptx, llvm::json::Array(spec.ptxArchs));
  json.attribute(key::Fatbin, fatbinValue(spec));
  json.attribute(key::StaticSharedBytes, spec.staticSharedBytes);
  json.attribute(key::LocalBytes, spec.localBytes);
  json.attribute(key::Synchronizes, spec.synchronizes);
  json.attribute(key::Raises, spec.raises);
  json.attribute(key::Cooperative, spec.cooperative);
  json.attribute(key::Resources, resourcesValue(spec));
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
    json.attribute(keys::Manifest::Source, sourceValue(module));
    if (!module.companionOf.empty()) {
      json.attribute(keys::Manifest::CompanionOf, module.companionOf);
      json.attribute(keys::Manifest::Sources, sourcesArray(module));
    }
    json.attribute(keys::Manifest::Options, optionsObject(module.options));
    json.attribute(keys::Manifest::Archs, archsObject(module));
    json.attribute(keys::Manifest::Constants, constantsArray(module));
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
