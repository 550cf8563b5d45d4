//===- module/module_reader.cpp - Reading a built module's manifest -------===//
//
// The manifest is read into the writer's records key by key, each key
// spelled through the schema (manifest_keys.h). The runtime's check has
// already vouched for every key it reads, and is the one judge of a
// module (see [Note: one check of built modules] in module_check.h): a key
// the runtime does not read (resources, the module's architectures and
// options) may be malformed in a module the runtime imports, and reads as
// absent, with the writer's default, so that `kiln inspect` and `kiln
// audit` refuse no module that Python imports.
//
//===----------------------------------------------------------------------===//

#include "module/module_reader.h"

#include "module/manifest_format.h"
#include "module/manifest_keys.h"
#include "module/module_check.h"

#include <llvm/ADT/STLExtras.h>
#include <llvm/ADT/STLFunctionalExtras.h>
#include <llvm/ADT/StringExtras.h>

#include <limits>
#include <map>
#include <tuple>

namespace kiln::module {

using llvm::json::Object;
using llvm::json::Value;

static llvm::Error problem(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

// Reading one value into a record's field: false when the value is not of
// the field's kind. Readers of objects are found by argument-dependent
// lookup, so they may follow the templates that use them.

static bool read(const Value &value, std::string &field) {
  std::optional<llvm::StringRef> text = value.getAsString();
  if (!text)
    return false;
  field = text->str();
  return true;
}

static bool read(const Value &value, bool &field) {
  std::optional<bool> flag = value.getAsBoolean();
  if (!flag)
    return false;
  field = *flag;
  return true;
}

static bool read(const Value &value, uint64_t &field) {
  if (std::optional<uint64_t> number = value.getAsUINT64()) {
    field = *number;
    return true;
  }
  // An integer written with a fraction of zero ("2.0").
  std::optional<int64_t> number = value.getAsInteger();
  if (!number || *number < 0)
    return false;
  field = uint64_t(*number);
  return true;
}

static bool read(const Value &value, unsigned &field) {
  uint64_t number = 0;
  if (!read(value, number) || number > std::numeric_limits<unsigned>::max())
    return false;
  field = unsigned(number);
  return true;
}

/// A constant's value, which may be any JSON.
static bool read(const Value &value, Value &field) {
  field = value;
  return true;
}

/// A checksum, as checksumText() writes it; a malformed one leaves
/// `checksum` as it was.
static void readChecksum(const Value &value, uint64_t &checksum) {
  std::optional<llvm::StringRef> text = value.getAsString();
  if (std::optional<uint64_t> parsed = text ? parseChecksumText(*text) : std::nullopt)
    checksum = *parsed;
}

template <typename T> static bool read(const Value &value, std::vector<T> &field) {
  const llvm::json::Array *items = value.getAsArray();
  if (!items)
    return false;
  field.clear();
  for (const Value &item : *items)
    if (!read(item, field.emplace_back()))
      return false;
  return true;
}

template <typename T> static bool read(const Value &value, std::optional<T> &field) {
  T present{};
  if (!read(value, present))
    return false;
  field = std::move(present);
  return true;
}

/// Architectures: a list of numbers, kept as a set, as the writer is given
/// them.
static bool read(const Value &value, std::set<unsigned> &field) {
  std::vector<unsigned> numbers;
  if (!read(value, numbers))
    return false;
  field = std::set<unsigned>(numbers.begin(), numbers.end());
  return true;
}

namespace {

/// Reads the members of one object of the manifest into fields. A member
/// that is absent, null or malformed leaves its field as it was: the
/// writer's default.
class MemberReader {
public:
  explicit MemberReader(const Value &value) : object(value.getAsObject()) {}

  template <typename T> void operator()(std::string_view key, T &field) {
    with(key, [&](const Value &value) {
      if (T parsed{}; read(value, parsed))
        field = std::move(parsed);
    });
  }

  /// Reads the member `key` with `readValue`, which sets its field only
  /// when the value is well formed.
  void with(std::string_view key, llvm::function_ref<void(const Value &)> readValue) {
    if (!object)
      return;
    if (const Value *value = object->get(llvm::StringRef(key));
        value && value->kind() != Value::Null)
      readValue(*value);
  }

  /// Whether the value read is an object.
  bool isObject() const { return object != nullptr; }

private:
  const Object *object;
};

} // namespace

static bool read(const Value &value, ManifestOptions &options) {
  namespace key = keys::Options;
  MemberReader members(value);
  members(key::Fastmath, options.fastmath);
  members(key::Debug, options.debug);
  members(key::Lineinfo, options.lineinfo);
  members(key::Opt, options.opt);
  members(key::MaxRegisters, options.maxRegisters);
  members(key::PtxasFlags, options.ptxasFlags);
  return members.isObject();
}

static bool read(const Value &value, ManifestSource &source) {
  MemberReader members(value);
  members(keys::CompanionSource::File, source.file);
  members(keys::CompanionSource::Sha256, source.sha256);
  return members.isObject();
}

static bool read(const Value &value, ManifestConstant &constant) {
  MemberReader members(value);
  members(keys::Constant::Name, constant.name);
  members(keys::Constant::Type, constant.type);
  members(keys::Constant::Value, constant.value);
  return members.isObject();
}

static bool read(const Value &value, ManifestParameter &parameter) {
  namespace key = keys::Parameter;
  MemberReader members(value);
  members(key::Argument, parameter.argument);
  members(key::Role, parameter.role);
  members(key::Dimension, parameter.dimension);
  members(key::Path, parameter.path);
  members(key::Type, parameter.type);
  members(key::Size, parameter.size);
  return members.isObject();
}

static bool read(const Value &value, ManifestResources &resources) {
  namespace key = keys::Resources;
  MemberReader members(value);
  members(key::Registers, resources.registers);
  members(key::Stack, resources.stackBytes);
  members(key::SpillStores, resources.spillStoreBytes);
  members(key::SpillLoads, resources.spillLoadBytes);
  members(key::Shared, resources.sharedBytes);
  members(key::Local, resources.localBytes);
  return members.isObject();
}

static bool read(const Value &value, ManifestBlob &blob) {
  MemberReader members(value);
  members(keys::Fatbin::Offset, blob.offset);
  members(keys::Fatbin::Size, blob.size);
  members.with(keys::Fatbin::Checksum,
               [&](const Value &checksum) { readChecksum(checksum, blob.checksum); });
  return members.isObject();
}

/// Resources by sm_ name, ordered by architecture ("sm_75" before
/// "sm_100"), as the writer is given them; other names after, by name. An
/// architecture whose resources are no object is left out.
static void readResources(const Value &value,
                          std::vector<std::pair<std::string, ManifestResources>> &resources) {
  const Object *byArch = value.getAsObject();
  if (!byArch)
    return;
  resources.clear();
  for (const auto &[arch, usage] : *byArch) {
    ManifestResources parsed;
    if (read(usage, parsed))
      resources.emplace_back(arch.str(), parsed);
  }
  auto order = [](const std::pair<std::string, ManifestResources> &entry) {
    llvm::StringRef name = entry.first;
    unsigned number = 0;
    bool sm = name.consume_front("sm_") && !name.getAsInteger(10, number);
    return std::make_tuple(!sm, number, entry.first);
  };
  llvm::sort(resources, [&](const auto &a, const auto &b) { return order(a) < order(b); });
}

/// The manifest's "source": the file's name and checksum.
static void readSource(const Value &value, ManifestModule &module) {
  MemberReader members(value);
  members(keys::Source::File, module.sourceFile);
  members.with(keys::Source::Checksum,
               [&](const Value &checksum) { readChecksum(checksum, module.sourceChecksum); });
}

/// The manifest's "archs": what has cubins and PTX.
static void readArchs(const Value &value, ManifestModule &module) {
  MemberReader members(value);
  members(keys::Archs::Cubins, module.cubinArchs);
  members(keys::Archs::Ptx, module.ptxArchs);
}

static void readModuleKeys(const Value &root, ManifestModule &module) {
  namespace key = keys::Manifest;
  MemberReader members(root);
  members(key::Module, module.name);
  members(key::KilnVersion, module.kilnVersion);
  members.with(key::Source, [&](const Value &source) { readSource(source, module); });
  members(key::CompanionOf, module.companionOf);
  members(key::Sources, module.sources);
  members(key::Options, module.options);
  members.with(key::Archs, [&](const Value &archs) { readArchs(archs, module); });
  members(key::Constants, module.constants);
}

static llvm::Expected<ManifestSpecialization> readSpecialization(const Value &value, size_t index) {
  namespace key = keys::Specialization;
  std::string what = "the manifest entry of specialization " + std::to_string(index);
  if (!value.getAsObject())
    return problem(what + " is not an object");
  ManifestSpecialization entry;
  MemberReader members(value);
  members(key::Name, entry.name);
  members(key::Kind, entry.kind);
  members(key::Symbol, entry.symbol);
  members(key::Entry, entry.entry);
  members(key::Args, entry.argumentTypes);
  members(key::ArgNames, entry.argumentNames);
  members(key::Params, entry.parameters);
  members(key::StaticSharedBytes, entry.staticSharedBytes);
  members(key::LocalBytes, entry.localBytes);
  members(key::Synchronizes, entry.synchronizes);
  members(key::Raises, entry.raises);
  members(key::Cooperative, entry.cooperative);
  members(key::MaxThreadsPerBlock, entry.maxThreadsPerBlock);
  members(key::BlockEntry, entry.blockEntry);
  members(key::IndexChecks, entry.indexChecks);
  members(key::Sites, entry.sites);
  members(key::Cubins, entry.cubinArchs);
  members(key::Ptx, entry.ptxArchs);
  members(key::Files, entry.files);
  members.with(key::Resources,
               [&](const Value &resources) { readResources(resources, entry.resources); });
  members(key::Fatbin, entry.fatbin);
  return entry;
}

llvm::Expected<ManifestRecords> readManifestRecords(const Value &manifest) {
  const Object *root = manifest.getAsObject();
  if (!root)
    return problem("its manifest is not a JSON object");
  std::optional<int64_t> format;
  if (const Value *value = root->get(llvm::StringRef(keys::Manifest::Format)))
    format = value->getAsInteger();
  if (format != int64_t(ManifestFormat))
    return problem("manifest format " + (format ? std::to_string(*format) : std::string("none")) +
                   ", this Kiln reads format " + std::to_string(ManifestFormat));
  ManifestRecords records;
  readModuleKeys(manifest, records.module);
  const Value *specializations = root->get(llvm::StringRef(keys::Manifest::Specializations));
  if (!specializations)
    return records;
  const llvm::json::Array *entries = specializations->getAsArray();
  if (!entries)
    return problem("its manifest has a malformed '" + std::string(keys::Manifest::Specializations) +
                   "'");
  for (size_t i = 0; i < entries->size(); ++i) {
    llvm::Expected<ManifestSpecialization> entry = readSpecialization((*entries)[i], i);
    if (!entry)
      return entry.takeError();
    records.specializations.push_back(std::move(*entry));
  }
  return records;
}

std::string describeSpecialization(const ManifestSpecialization &spec) {
  return spec.name + " (" + llvm::join(spec.argumentTypes, ", ") + ")";
}

llvm::Expected<InspectedModule> readModule(llvm::StringRef file) {
  std::string_view checkedBundle;
  ModuleCheck check = checkModuleFile(file, checkedBundle);
  if (check.verdict == ModuleVerdict::Incompatible)
    return problem("it was built by an incompatible Kiln: " + check.problem);
  if (!check.sound())
    return problem(check.problem);
  return readCheckedModule(file, checkedBundle);
}

llvm::Expected<InspectedModule> readCheckedModule(llvm::StringRef file,
                                                  std::string_view checkedBundle) {
  InspectedModule result;
  llvm::Expected<BundleView> bundle = findBundle(checkedBundle);
  if (!bundle)
    return bundle.takeError();
  result.bundle = *bundle;
  result.bundle.fileOffset = size_t(checkedBundle.data() - file.data());
  // checkModule() parsed the manifest with a depth limit, so LLVM's parser,
  // which recurses without one, is safe on it.
  llvm::Expected<Value> manifest = llvm::json::parse(bundle->manifest);
  if (!manifest)
    return problem("the manifest is not valid JSON: " + llvm::toString(manifest.takeError()));
  llvm::Expected<ManifestRecords> records = readManifestRecords(*manifest);
  if (!records)
    return records.takeError();
  result.manifest = std::move(*records);

  std::map<std::pair<std::string, std::string>, size_t> groupOf;
  const std::vector<ManifestSpecialization> &specializations = result.manifest.specializations;
  for (size_t i = 0; i < specializations.size(); ++i) {
    const ManifestSpecialization &spec = specializations[i];
    auto [it, inserted] = groupOf.try_emplace({spec.name, spec.kind}, result.kernels.size());
    if (inserted)
      result.kernels.push_back({spec.name, spec.kind, {}});
    result.kernels[it->second].specializations.push_back(i);
  }
  return result;
}

} // namespace kiln::module
