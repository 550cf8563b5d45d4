//===- module/manifest_writer.cpp - Writing a build's manifest -------------===//

#include "module/manifest_writer.h"

#include "module/manifest_format.h"
#include "module/manifest_keys.h"

namespace kiln::module {

namespace {

template <typename T> llvm::json::Value optionalValue(const std::optional<T> &value) {
  if (value)
    return *value;
  return nullptr;
}

void writeArchList(llvm::json::OStream &json, std::string_view key,
                   const std::set<unsigned> &archs) {
  json.attributeArray(key, [&] {
    for (unsigned arch : archs)
      json.value(arch);
  });
}

void writeStrings(llvm::json::OStream &json, std::string_view key,
                  llvm::ArrayRef<std::string> strings) {
  json.attributeArray(key, [&] {
    for (const std::string &text : strings)
      json.value(text);
  });
}

} // namespace

std::vector<std::pair<std::string_view, llvm::json::Value>>
optionEntries(const ManifestOptions &options) {
  namespace key = keys::Options;
  return {{key::Fastmath, options.fastmath},
          {key::Debug, options.debug},
          {key::Lineinfo, options.lineinfo},
          {key::Opt, optionalValue(options.opt)},
          {key::MaxRegisters, optionalValue(options.maxRegisters)},
          {key::PtxasFlags, llvm::json::Array(options.ptxasFlags)}};
}

void writeSource(llvm::json::OStream &json, const ManifestModule &module) {
  json.attributeObject(keys::Manifest::Source, [&] {
    json.attribute(keys::Source::File, module.sourceFile);
    json.attribute(keys::Source::Checksum, checksumText(module.sourceChecksum));
  });
}

void writeCompanion(llvm::json::OStream &json, const ManifestModule &module) {
  if (module.companionOf.empty())
    return;
  json.attribute(keys::Manifest::CompanionOf, module.companionOf);
  json.attributeArray(keys::Manifest::Sources, [&] {
    for (const ManifestSource &source : module.sources)
      json.object([&] {
        json.attribute(keys::CompanionSource::File, source.file);
        json.attribute(keys::CompanionSource::Sha256, source.sha256);
      });
  });
}

void writeOptions(llvm::json::OStream &json, const ManifestOptions &options) {
  json.attributeObject(keys::Manifest::Options, [&] {
    for (auto &[key, value] : optionEntries(options))
      json.attribute(key, std::move(value));
  });
}

void writeArchs(llvm::json::OStream &json, const ManifestModule &module) {
  json.attributeObject(keys::Manifest::Archs, [&] {
    writeArchList(json, keys::Archs::Cubins, module.cubinArchs);
    writeArchList(json, keys::Archs::Ptx, module.ptxArchs);
  });
}

void writeConstants(llvm::json::OStream &json, llvm::ArrayRef<ManifestConstant> constants) {
  json.attributeArray(keys::Manifest::Constants, [&] {
    for (const ManifestConstant &constant : constants)
      json.object([&] {
        json.attribute(keys::Constant::Name, constant.name);
        json.attribute(keys::Constant::Type, constant.type);
        json.attribute(keys::Constant::Value, constant.value);
      });
  });
}

void writeResources(llvm::json::OStream &json,
                    llvm::ArrayRef<std::pair<std::string, ManifestResources>> resources) {
  namespace key = keys::Resources;
  json.attributeObject(keys::Specialization::Resources, [&] {
    for (const auto &[arch, usage] : resources)
      json.attributeObject(arch, [&] {
        json.attribute(key::Registers, usage.registers);
        json.attribute(key::Stack, usage.stackBytes);
        json.attribute(key::SpillStores, usage.spillStoreBytes);
        json.attribute(key::SpillLoads, usage.spillLoadBytes);
        json.attribute(key::Shared, usage.sharedBytes);
        json.attribute(key::Local, usage.localBytes);
      });
  });
}

void writeFatbin(llvm::json::OStream &json, const ManifestBlob &fatbin) {
  json.attributeObject(keys::Specialization::Fatbin, [&] {
    json.attribute(keys::Fatbin::Offset, fatbin.offset);
    json.attribute(keys::Fatbin::Size, fatbin.size);
    json.attribute(keys::Fatbin::Checksum, checksumText(fatbin.checksum));
  });
}

namespace {

void writeParameter(llvm::json::OStream &json, const ManifestParameter &parameter) {
  namespace key = keys::Parameter;
  json.attribute(key::Argument, parameter.argument);
  json.attribute(key::Role, parameter.role);
  json.attribute(key::Dimension, parameter.dimension);
  json.attributeArray(key::Path, [&] {
    for (unsigned step : parameter.path)
      json.value(step);
  });
  json.attribute(key::Type, parameter.type);
  json.attribute(key::Size, parameter.size);
}

void writeSpecialization(llvm::json::OStream &json, const ManifestSpecialization &entry) {
  namespace key = keys::Specialization;
  json.attribute(key::Name, entry.name);
  json.attribute(key::Kind, entry.kind);
  json.attribute(key::Symbol, entry.symbol);
  json.attribute(key::Entry, entry.entry);
  writeStrings(json, key::Args, entry.argumentTypes);
  writeStrings(json, key::ArgNames, entry.argumentNames);
  json.attributeArray(key::Params, [&] {
    for (const ManifestParameter &parameter : entry.parameters)
      json.object([&] { writeParameter(json, parameter); });
  });
  json.attribute(key::StaticSharedBytes, entry.staticSharedBytes);
  json.attribute(key::LocalBytes, entry.localBytes);
  json.attribute(key::Synchronizes, entry.synchronizes);
  json.attribute(key::Raises, entry.raises);
  json.attribute(key::Cooperative, entry.cooperative);
  if (entry.maxThreadsPerBlock)
    json.attribute(key::MaxThreadsPerBlock, *entry.maxThreadsPerBlock);
  json.attribute(key::BlockEntry, entry.blockEntry);
  if (!entry.indexChecks.empty())
    json.attribute(key::IndexChecks, entry.indexChecks);
  if (!entry.sites.empty())
    writeStrings(json, key::Sites, entry.sites);
  writeArchList(json, key::Cubins, entry.cubinArchs);
  writeArchList(json, key::Ptx, entry.ptxArchs);
  writeStrings(json, key::Files, entry.files);
  if (!entry.resources.empty())
    writeResources(json, entry.resources);
  if (entry.fatbin)
    writeFatbin(json, *entry.fatbin);
}

} // namespace

void writeManifest(llvm::raw_ostream &os, const ManifestModule &module,
                   llvm::ArrayRef<ManifestSpecialization> specializations) {
  llvm::json::OStream json(os, 2);
  json.object([&] {
    json.attribute(keys::Manifest::Format, ManifestFormat);
    json.attribute(keys::Manifest::Module, module.name);
    json.attribute(keys::Manifest::KilnVersion, module.kilnVersion);
    writeSource(json, module);
    writeCompanion(json, module);
    writeOptions(json, module.options);
    writeArchs(json, module);
    writeConstants(json, module.constants);
    json.attributeArray(keys::Manifest::Specializations, [&] {
      for (const ManifestSpecialization &entry : specializations)
        json.object([&] { writeSpecialization(json, entry); });
    });
  });
  os << '\n';
}

} // namespace kiln::module
