//===- module/module_check.cpp - Whether a built module is sound ----------===//

#include "module/module_check.h"

#include "module/elf_section_reader.h"
#include "module/manifest_format.h"
#include "module/manifest_json.h"
#include "module/manifest_keys.h"

#include <cctype>
#include <cstring>
#include <set>
#include <tuple>
#include <vector>

namespace kiln::module {

namespace {

ModuleCheck damaged(std::string what) {
  ModuleCheck check;
  check.verdict = ModuleVerdict::Damaged;
  check.problem = std::move(what);
  return check;
}

ModuleCheck incompatible(std::string what) {
  ModuleCheck check;
  check.verdict = ModuleVerdict::Incompatible;
  check.problem = std::move(what);
  return check;
}

/// Whether [offset, offset + size) lies in [0, limit), without overflow.
bool inside(uint64_t offset, uint64_t size, uint64_t limit) {
  return offset <= limit && size <= limit - offset;
}

/// One machine parameter, as the manifest's "params" spell it.
struct Parameter {
  int64_t argument;
  std::string role;
  int64_t dimension;
  std::vector<int64_t> path;
  std::string type;

  bool operator==(const Parameter &other) const {
    return argument == other.argument && role == other.role && dimension == other.dimension &&
           path == other.path && type == other.type;
  }
};

/// A manifest key as messages quote it: 'kind'.
std::string quoted(std::string_view key) {
  return "'" + std::string(key) + "'";
}

std::string_view trim(std::string_view text) {
  while (!text.empty() && text.front() == ' ')
    text.remove_prefix(1);
  while (!text.empty() && text.back() == ' ')
    text.remove_suffix(1);
  return text;
}

bool startsWith(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

/// `text` split at `separator`s outside brackets.
std::vector<std::string_view> splitTopLevel(std::string_view text) {
  std::vector<std::string_view> parts;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '(' || c == '[' || c == '{')
      ++depth;
    else if (c == ')' || c == ']' || c == '}')
      --depth;
    else if (c == ',' && depth == 0) {
      parts.push_back(trim(text.substr(start, i - start)));
      start = i + 1;
    }
  }
  parts.push_back(trim(text.substr(start)));
  return parts;
}

/// The machine type of a scalar type name, or null when it is not one.
const char *scalarMachineType(std::string_view name) {
  static const struct {
    const char *name, *machine;
  } scalars[] = {
      {"bool", "i8"},     {"boolean", "i8"}, {"int8", "i8"},     {"int16", "i16"},
      {"int32", "i32"},   {"int64", "i64"},  {"uint8", "u8"},    {"uint16", "u16"},
      {"uint32", "u32"},  {"uint64", "u64"}, {"float16", "f16"}, {"float32", "f32"},
      {"float64", "f64"},
  };
  for (const auto &scalar : scalars)
    if (name == scalar.name)
      return scalar.machine;
  // uint8*: an address.
  if (!name.empty() && name.back() == '*')
    return "ptr";
  // datetime64[D], timedelta64[s]: int64 counts of their unit.
  if ((startsWith(name, "datetime64[") || startsWith(name, "timedelta64[")) && name.back() == ']')
    return "i64";
  return nullptr;
}

/// The element types of a tuple type as Numba prints it: "UniTuple(int64 x
/// 2)", "Tuple(int64, float32)", a named tuple's "Point(int64, float64)" or
/// "Point(int64 x 2)"; none for other types (and for the empty tuple).
std::vector<std::string_view> tupleElements(std::string_view text) {
  size_t paren = text.find('(');
  if (paren == std::string_view::npos || paren == 0 || text.back() != ')')
    return {};
  std::string_view name = text.substr(0, paren);
  for (std::string_view other :
       {"array", "Record", "Array", "NestedArray", "nestedarray", "omitted", "BoundFunction"})
    if (name == other)
      return {};
  for (char c : name)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_'))
      return {};
  std::string_view inner = trim(text.substr(paren + 1, text.size() - paren - 2));
  if (inner.empty())
    return {};
  std::vector<std::string_view> parts = splitTopLevel(inner);
  size_t times = parts.size() == 1 ? parts[0].rfind(" x ") : std::string_view::npos;
  if (times == std::string_view::npos)
    return parts;
  int64_t count = 0;
  for (char c : parts[0].substr(times + 3))
    count = c >= '0' && c <= '9' && count < 4096 ? count * 10 + (c - '0') : 4096;
  return std::vector<std::string_view>(size_t(count), parts[0].substr(0, times));
}

/// The parameters a kernel argument of type `text` (a manifest type string)
/// takes: the kernel ABI of docs/abi.md, which the compiler applies to its
/// own types. Types without a run-time value take none. Tuples nest at most
/// as deep as the manifest's JSON may.
void expectedParameters(int64_t argument, std::string_view text, std::vector<int64_t> &path,
                        std::vector<Parameter> &out) {
  text = trim(text);
  if (startsWith(text, "readonly "))
    text = trim(text.substr(9));
  auto push = [&](const char *role, int64_t dimension, std::string type) {
    out.push_back({argument, role, dimension, path, std::move(type)});
  };
  if (const char *machine = scalarMachineType(text)) {
    push("value", 0, machine);
  } else if (text == "complex64" || text == "complex128") {
    const char *part = text == "complex64" ? "f32" : "f64";
    push("real", 0, part);
    push("imag", 0, part);
  } else if (startsWith(text, "array(") && text.back() == ')') {
    std::vector<std::string_view> parts = splitTopLevel(text.substr(6, text.size() - 7));
    int64_t rank = 0;
    if (parts.size() >= 2 && parts[1].size() >= 2 && parts[1].back() == 'd')
      for (char c : parts[1].substr(0, parts[1].size() - 1))
        rank = c >= '0' && c <= '9' && rank < 64 ? rank * 10 + (c - '0') : 64;
    push("data", 0, "ptr");
    for (int64_t d = 0; d < rank; ++d)
      push("shape", d, "i64");
    for (int64_t d = 0; d < rank; ++d)
      push("stride", d, "i64");
  } else if (startsWith(text, "Record(")) {
    push("record", 0, "ptr");
  } else if ((startsWith(text, "Enum<") || startsWith(text, "IntEnum<")) && text.back() == ')' &&
             text.rfind(">(") != std::string_view::npos && path.size() < ManifestNestingLimit) {
    // Enum<int64>(Color): the member's value, its only part.
    size_t open = text.find('<') + 1;
    path.push_back(0);
    expectedParameters(argument, text.substr(open, text.rfind(">(") - open), path, out);
    path.pop_back();
  } else if (path.size() < ManifestNestingLimit) {
    std::vector<std::string_view> elements = tupleElements(text);
    for (size_t i = 0; i < elements.size(); ++i) {
      path.push_back(int64_t(i));
      expectedParameters(argument, elements[i], path, out);
      path.pop_back();
    }
  }
}

/// Reads the manifest's parameter `value`; false when it is malformed.
bool readParameter(const JsonValue &value, Parameter &parameter) {
  namespace key = keys::Parameter;
  const JsonValue *argument = value.member(key::Argument);
  const JsonValue *role = value.member(key::Role);
  const JsonValue *type = value.member(key::Type);
  if (!argument || !argument->integer() || !role || !role->string() || !type || !type->string())
    return false;
  parameter.argument = *argument->integer();
  parameter.role = *role->string();
  parameter.type = *type->string();
  parameter.dimension = 0;
  if (const JsonValue *dimension = value.member(key::Dimension)) {
    if (!dimension->integer())
      return false;
    parameter.dimension = *dimension->integer();
  }
  if (const JsonValue *path = value.member(key::Path)) {
    if (!path->array())
      return false;
    for (const JsonValue &step : *path->array()) {
      if (!step.integer())
        return false;
      parameter.path.push_back(*step.integer());
    }
  }
  return true;
}

bool isStringArray(const JsonValue *value) {
  if (!value || !value->array())
    return false;
  for (const JsonValue &element : *value->array())
    if (!element.string())
      return false;
  return true;
}

bool isIntegerArray(const JsonValue &value) {
  if (!value.array())
    return false;
  for (const JsonValue &element : *value.array())
    if (!element.integer())
      return false;
  return true;
}

/// What is wrong with the keys of the manifest's specialization `spec`
/// (number `index`) that the runtime reads at import: its name and kind.
std::optional<std::string> outlineProblem(const JsonValue &spec, size_t index) {
  std::string what = "the manifest entry of specialization " + std::to_string(index);
  if (!spec.isObject())
    return what + " is not an object";
  const JsonValue *name = spec.member(keys::Specialization::Name);
  if (!name || !name->string() || name->string()->empty())
    return what + " has no name";
  if (const JsonValue *kind = spec.member(keys::Specialization::Kind); kind && !kind->string())
    return "the manifest entry of '" + *name->string() + "' (specialization " +
           std::to_string(index) + ") has a malformed " + quoted(keys::Specialization::Kind);
  return std::nullopt;
}

/// The fat binaries found intact so far, as (offset, size, checksum): the
/// kernels of one image share its fat binary, which is checked once.
using IntactFatBinaries = std::set<std::tuple<uint64_t, uint64_t, uint64_t>>;

/// What is wrong with the manifest's specialization `spec` (number `index`),
/// or nothing. Its fat binary is checked against its checksum when `intact`
/// is given.
std::optional<std::string> specializationProblem(const JsonValue &spec, size_t index,
                                                 std::string_view payload,
                                                 IntactFatBinaries *intact) {
  namespace key = keys::Specialization;
  if (std::optional<std::string> problem = outlineProblem(spec, index))
    return problem;
  const JsonValue *name = spec.member(key::Name);
  std::string what = "the manifest entry of '" + *name->string() + "' (specialization " +
                     std::to_string(index) + ")";
  const JsonValue *entry = spec.member(key::Entry);
  if (!entry || !entry->string())
    return what + " has no entry point";
  if (const JsonValue *symbol = spec.member(key::Symbol); symbol && !symbol->string())
    return what + " has a malformed " + quoted(key::Symbol);
  const JsonValue *args = spec.member(key::Args);
  if (!isStringArray(args))
    return what + " has no list of argument types";
  size_t arity = args->array()->size();
  if (const JsonValue *names = spec.member(key::ArgNames);
      names && (!isStringArray(names) || names->array()->size() != arity))
    return what + " has argument names that do not match its arguments";
  for (std::string_view bytes : {key::StaticSharedBytes, key::LocalBytes})
    if (const JsonValue *value = spec.member(bytes);
        value && (!value->integer() || *value->integer() < 0))
      return what + " has a malformed " + quoted(bytes);
  for (std::string_view flag : {key::Synchronizes, key::Raises, key::Cooperative, key::BlockEntry})
    if (const JsonValue *value = spec.member(flag); value && !value->boolean())
      return what + " has a malformed " + quoted(flag);
  for (std::string_view archs : {key::Cubins, key::Ptx})
    if (const JsonValue *value = spec.member(archs); value && !isIntegerArray(*value))
      return what + " has a malformed " + quoted(archs);
  if (const JsonValue *sites = spec.member(key::Sites); sites && !isStringArray(sites))
    return what + " has a malformed " + quoted(key::Sites);
  if (const JsonValue *copies = spec.member(key::IndexChecks);
      copies && (!copies->string() || !isIndexChecksSpelling(*copies->string())))
    return what + " has a malformed " + quoted(key::IndexChecks);

  const JsonValue *params = spec.member(key::Params);
  if (!params || !params->array())
    return what + " has no parameter layout";
  std::vector<Parameter> expected;
  std::vector<int64_t> path;
  for (size_t i = 0; i < arity; ++i)
    expectedParameters(int64_t(i), *(*args->array())[i].string(), path, expected);
  std::vector<Parameter> listed;
  for (const JsonValue &value : *params->array()) {
    Parameter parameter;
    if (!readParameter(value, parameter))
      return what + " has a malformed parameter";
    listed.push_back(std::move(parameter));
  }
  if (listed != expected)
    return what + " has a parameter layout (" + std::to_string(listed.size()) +
           " parameters) that is not the one its argument types take (" +
           std::to_string(expected.size()) + " parameters)";

  if (const JsonValue *fatbin = spec.member(key::Fatbin);
      fatbin && fatbin->kind() != JsonValue::Kind::Null) {
    const JsonValue *offset = fatbin->member(keys::Fatbin::Offset);
    const JsonValue *size = fatbin->member(keys::Fatbin::Size);
    const JsonValue *checksum = fatbin->member(keys::Fatbin::Checksum);
    std::optional<uint64_t> claimed =
        checksum && checksum->string() ? parseChecksumText(*checksum->string()) : std::nullopt;
    if (!offset || !offset->integer() || *offset->integer() < 0 || !size || !size->integer() ||
        *size->integer() < 0 || !claimed)
      return "the fat binary of '" + *name->string() + "' (specialization " +
             std::to_string(index) + ") has a malformed manifest entry";
    uint64_t start = uint64_t(*offset->integer()), bytes = uint64_t(*size->integer());
    if (!inside(start, bytes, payload.size()))
      return "the fat binary of '" + *name->string() + "' (specialization " +
             std::to_string(index) + ") lies outside the module's payload";
    if (intact && !intact->count({start, bytes, *claimed})) {
      if (std::optional<std::string> problem =
              checkFatBinary(payload.substr(start, bytes), *claimed, *name->string(), index))
        return problem;
      intact->insert({start, bytes, *claimed});
    }
  }
  return std::nullopt;
}

} // namespace

ModuleCheck checkImage(const ImageFacts &image) {
  if (image.formatVersion != KILN_MODULE_FORMAT_VERSION)
    return incompatible("module format " + std::to_string(image.formatVersion) +
                        ", this Kiln reads format " + std::to_string(KILN_MODULE_FORMAT_VERSION));
  if (image.cpuAbiVersion != KILN_CPU_ABI_VERSION)
    return incompatible("host code of CPU ABI version " + std::to_string(image.cpuAbiVersion) +
                        ", this Kiln runs version " + std::to_string(KILN_CPU_ABI_VERSION));
  return {};
}

std::optional<std::string> checkFatBinary(std::string_view fatbin, uint64_t checksum,
                                          std::string_view kernelName, size_t index) {
  uint64_t actual = kilnChecksum(fatbin.data(), fatbin.size());
  if (actual == checksum)
    return std::nullopt;
  return "the fat binary of '" + std::string(kernelName) + "' (specialization " +
         std::to_string(index) + ") fails its checksum: it is " + checksumText(actual) +
         ", the manifest says " + checksumText(checksum);
}

std::optional<std::string> checkSpecialization(std::string_view entry, size_t index,
                                               std::string_view payload) {
  // The entry lies three levels deep in the manifest (document,
  // specializations, entry): it may nest as deep as the rest allows.
  std::string problem;
  std::optional<JsonValue> spec = parseJson(entry, ManifestNestingLimit - 2, problem);
  if (!spec)
    return "the manifest entry of specialization " + std::to_string(index) + " cannot be read (" +
           problem + ")";
  return specializationProblem(*spec, index, payload, nullptr);
}

ModuleCheck checkModule(const ImageFacts &image, std::string_view bundle, CheckScope scope,
                        ManifestIndex *index) {
  if (ModuleCheck versions = checkImage(image); !versions.sound())
    return versions;
  KilnBundleHeader header;
  if (bundle.size() < sizeof header)
    return damaged("its bundle header is truncated");
  std::memcpy(&header, bundle.data(), sizeof header);
  if (std::memcmp(header.magic, KILN_BUNDLE_MAGIC, sizeof header.magic) != 0)
    return damaged("its bundle has no valid header");
  if (header.formatVersion != KILN_MODULE_FORMAT_VERSION ||
      header.headerSize != sizeof(KilnBundleHeader))
    return damaged("its bundle header does not match the module's format version");
  if (header.manifestOffset < sizeof header ||
      !inside(header.manifestOffset, header.manifestSize, bundle.size()))
    return damaged("its manifest lies outside the bundle");
  if (!inside(header.payloadOffset, header.payloadSize, bundle.size()) ||
      header.payloadOffset % 16 != 0)
    return damaged("its payload lies outside the bundle");
  std::string_view manifestText = bundle.substr(header.manifestOffset, header.manifestSize);
  std::string_view payload = bundle.substr(header.payloadOffset, header.payloadSize);
  if (kilnChecksum(manifestText.data(), manifestText.size()) != header.manifestChecksum)
    return damaged("its manifest fails its checksum");
  if (header.manifestChecksum != image.manifestChecksum)
    return damaged("its kernel data does not belong to its code (the file changed after it was "
                   "loaded, or was pieced together from two builds)");

  std::string problem;
  // Deferred, the manifest is read as an outline: the document and its
  // lists (levels 1 and 2), and of the entries and constants (level 3) the
  // keys checked at import.
  bool everything = scope == CheckScope::Everything;
  static const JsonOutline outline{3,
                                   {keys::Specialization::Name, keys::Specialization::Kind,
                                    keys::Constant::Name, keys::Constant::Type,
                                    keys::Constant::Value}};
  std::optional<JsonValue> manifest =
      everything ? parseJson(manifestText, ManifestNestingLimit, problem)
                 : parseOutline(manifestText, ManifestNestingLimit, outline, problem);
  if (!manifest)
    return damaged("its manifest cannot be read (" + problem + ")");
  if (!manifest->isObject())
    return damaged("its manifest is not a JSON object");
  ModuleCheck identity;
  if (const JsonValue *module = manifest->member(keys::Manifest::Module);
      module && module->string())
    identity.moduleName = *module->string();
  if (const JsonValue *version = manifest->member(keys::Manifest::KilnVersion);
      version && version->string())
    identity.kilnVersion = *version->string();
  if (const JsonValue *format = manifest->member(keys::Manifest::Format))
    identity.manifestFormat = format->integer();
  auto failed = [&](ModuleCheck check) {
    check.moduleName = identity.moduleName;
    check.kilnVersion = identity.kilnVersion;
    check.manifestFormat = identity.manifestFormat;
    return check;
  };
  if (identity.manifestFormat != int64_t(ManifestFormat))
    return failed(incompatible(
        "manifest format " +
        (identity.manifestFormat ? std::to_string(*identity.manifestFormat) : std::string("none")) +
        ", this Kiln reads format " + std::to_string(ManifestFormat)));
  const JsonValue *module = manifest->member(keys::Manifest::Module);
  if (!module || !module->string())
    return failed(damaged("its manifest names no module"));
  if (!image.moduleName.empty() && *module->string() != image.moduleName)
    return failed(damaged("its manifest describes module '" + *module->string() + "'"));
  const JsonValue *specializations = manifest->member(keys::Manifest::Specializations);
  if (!specializations || !specializations->array())
    return failed(damaged("its manifest lists no specializations"));
  const std::vector<JsonValue> &listed = *specializations->array();
  if (listed.size() != image.specializationCount)
    return failed(damaged("its manifest lists " + std::to_string(listed.size()) +
                          " specializations but its code has " +
                          std::to_string(image.specializationCount)));
  IntactFatBinaries intact;
  for (size_t i = 0; i < listed.size(); ++i)
    if (std::optional<std::string> entryProblem =
            everything ? specializationProblem(listed[i], i, payload, &intact)
                       : outlineProblem(listed[i], i))
      return failed(damaged(*entryProblem));
  if (const JsonValue *constants = manifest->member(keys::Manifest::Constants)) {
    if (!constants->array())
      return failed(damaged("its manifest's constants are not a list"));
    for (const JsonValue &constant : *constants->array()) {
      const JsonValue *name = constant.member(keys::Constant::Name);
      if (!name || !name->string() || !constant.member(keys::Constant::Value))
        return failed(damaged("its manifest has a malformed constant"));
      if (const JsonValue *type = constant.member(keys::Constant::Type); type && !type->string())
        return failed(damaged("its manifest has a malformed constant"));
    }
    if (index) {
      index->constantsBegin = constants->sourceBegin();
      index->constantsEnd = constants->sourceEnd();
    }
  }
  if (const JsonValue *source = manifest->member(keys::Manifest::Source); index && source) {
    const JsonValue *file = source->member(keys::Source::File);
    const JsonValue *checksum = source->member(keys::Source::Checksum);
    std::optional<uint64_t> value =
        checksum && checksum->string() ? parseChecksumText(*checksum->string()) : std::nullopt;
    if (file && file->string() && value) {
      index->sourceFile = *file->string();
      index->sourceChecksum = *value;
    }
  }
  if (index)
    for (const JsonValue &spec : listed) {
      const JsonValue *kind = spec.member(keys::Specialization::Kind);
      index->specializations.push_back({*spec.member(keys::Specialization::Name)->string(),
                                        kind ? *kind->string() : std::string("kernel"),
                                        spec.sourceBegin(), spec.sourceEnd()});
    }
  return identity;
}

std::optional<ImageFacts> findImage(std::string_view file, uint64_t manifestChecksum) {
  constexpr size_t checksumAt = offsetof(KilnModuleImage, manifestChecksum);
  const char *wanted = reinterpret_cast<const char *>(&manifestChecksum);
  for (size_t at = file.find(std::string_view(wanted, 8), checksumAt); at != std::string_view::npos;
       at = file.find(std::string_view(wanted, 8), at + 1)) {
    size_t start = at - checksumAt;
    if (start % alignof(KilnModuleImage) != 0)
      continue;
    uint32_t words[4];
    std::memcpy(words, file.data() + start, sizeof words);
    if (words[0] != KILN_MODULE_IMAGE_MAGIC)
      continue;
    ImageFacts facts;
    facts.formatVersion = words[1];
    facts.cpuAbiVersion = words[2];
    facts.specializationCount = words[3];
    std::memcpy(&facts.bundleSize, file.data() + start + offsetof(KilnModuleImage, bundleSize),
                sizeof facts.bundleSize);
    facts.manifestChecksum = manifestChecksum;
    return facts;
  }
  return std::nullopt;
}

ModuleCheck checkModuleFile(std::string_view file, std::string_view &bundle) {
  size_t magicAt = file.find(std::string_view(KILN_BUNDLE_MAGIC, 8));
  if (magicAt == std::string_view::npos)
    return damaged("no Kiln bundle in this file (is it a module built by `kiln build --module`?)");
  KilnBundleHeader header;
  if (file.size() - magicAt < sizeof header)
    return damaged("the file is truncated inside its bundle header");
  std::memcpy(&header, file.data() + magicAt, sizeof header);
  if (header.formatVersion != KILN_MODULE_FORMAT_VERSION)
    return incompatible("bundle format " + std::to_string(header.formatVersion) +
                        ", this Kiln reads format " + std::to_string(KILN_MODULE_FORMAT_VERSION));
  std::optional<ImageFacts> image = findImage(file, header.manifestChecksum);
  if (!image)
    return damaged("its code holds no module image for its kernel data (the file is not a "
                   "module Kiln built, or its bundle was replaced)");
  MemoryByteSource source(file);
  SectionLocation section;
  std::string problem;
  if (!locateElfSection(source, KILN_BUNDLE_SECTION, "kernel data", image->bundleSize, section,
                        problem))
    return damaged(problem);
  bundle = file.substr(section.fileOffset, section.size);
  ModuleCheck check = checkModule(*image, bundle);
  std::string init;
  if (check.sound() && findExportedSymbol(source, "PyInit_", init, problem)) {
    std::string_view made = std::string_view(init).substr(std::strlen("PyInit_"));
    std::string_view described = check.moduleName;
    described = described.substr(described.rfind('.') + 1);
    if (described != made) {
      check.verdict = ModuleVerdict::Damaged;
      check.problem = "its manifest describes module '" + check.moduleName +
                      "', but its code makes '" + std::string(made) + "'";
    }
  }
  return check;
}

} // namespace kiln::module
