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

void writeArchs(llvm::json::OStream &json, std::string_view key, const std::set<unsigned> &archs) {
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

void writeOptions(llvm::json::OStream &json, const ManifestOptions &options) {
  namespace key = keys::Options;
  json.attribute(key::Fastmath, options.fastmath);
  json.attribute(key::Debug, options.debug);
  json.attribute(key::Lineinfo, options.lineinfo);
  json.attribute(key::Opt, optionalValue(options.opt));
  json.attribute(key::MaxRegisters, optionalValue(options.maxRegisters));
  writeStrings(json, key::PtxasFlags, options.ptxasFlags);
}

void writeModuleKeys(llvm::json::OStream &json, const ManifestModule &module) {
  namespace key = keys::Manifest;
  json.attribute(key::KilnVersion, module.kilnVersion);
  json.attributeObject(key::Source, [&] {
    json.attribute(keys::Source::File, module.sourceFile);
    json.attribute(keys::Source::Checksum, checksumText(module.sourceChecksum));
  });
  if (!module.companionOf.empty()) {
    json.attribute(key::CompanionOf, module.companionOf);
    json.attributeArray(key::Sources, [&] {
      for (const ManifestSource &source : module.sources)
        json.object([&] {
          json.attribute(keys::CompanionSource::File, source.file);
          json.attribute(keys::CompanionSource::Sha256, source.sha256);
        });
    });
  }
  json.attributeObject(key::Options, [&] { writeOptions(json, module.options); });
  json.attributeObject(key::Archs, [&] {
    writeArchs(json, keys::Archs::Cubins, module.cubinArchs);
    writeArchs(json, keys::Archs::Ptx, module.ptxArchs);
  });
  json.attributeArray(key::Constants, [&] {
    for (const ManifestConstant &constant : module.constants)
      json.object([&] {
        json.attribute(keys::Constant::Name, constant.name);
        json.attribute(keys::Constant::Type, constant.type);
        json.attribute(keys::Constant::Value, constant.value);
      });
  });
}

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

void writeResources(llvm::json::OStream &json, const ManifestResources &resources) {
  namespace key = keys::Resources;
  json.attribute(key::Registers, resources.registers);
  json.attribute(key::Stack, resources.stackBytes);
  json.attribute(key::SpillStores, resources.spillStoreBytes);
  json.attribute(key::SpillLoads, resources.spillLoadBytes);
  json.attribute(key::Shared, resources.sharedBytes);
  json.attribute(key::Local, resources.localBytes);
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
  writeArchs(json, key::Cubins, entry.cubinArchs);
  writeArchs(json, key::Ptx, entry.ptxArchs);
  writeStrings(json, key::Files, entry.files);
  if (!entry.resources.empty())
    json.attributeObject(key::Resources, [&] {
      for (const auto &[arch, resources] : entry.resources)
        json.attributeObject(arch, [&] { writeResources(json, resources); });
    });
  if (entry.fatbin)
    json.attributeObject(key::Fatbin, [&] {
      json.attribute(keys::Fatbin::Offset, entry.fatbin->offset);
      json.attribute(keys::Fatbin::Size, entry.fatbin->size);
      json.attribute(keys::Fatbin::Checksum, checksumText(entry.fatbin->checksum));
    });
}

} // namespace

void writeManifest(llvm::raw_ostream &os, const ManifestModule &module,
                   llvm::ArrayRef<ManifestSpecialization> specializations) {
  llvm::json::OStream json(os, 2);
  json.object([&] {
    json.attribute(keys::Manifest::Format, ManifestFormat);
    json.attribute(keys::Manifest::Module, module.name);
    writeModuleKeys(json, module);
    json.attributeArray(keys::Manifest::Specializations, [&] {
      for (const ManifestSpecialization &entry : specializations)
        json.object([&] { writeSpecialization(json, entry); });
    });
  });
  os << '\n';
}

} // namespace kiln::module
