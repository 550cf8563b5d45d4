//===- module/module_reader.cpp - Reading a built module's manifest -------===//

#include "module/module_reader.h"

#include "module/manifest_format.h"

#include <map>

namespace kiln::bundle {

static llvm::Error problem(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

std::string describeSpecialization(const llvm::json::Object &spec) {
  std::string text = spec.getString("name").value_or("?").str();
  text += " (";
  if (const llvm::json::Array *args = spec.getArray("args"))
    for (size_t i = 0; i < args->size(); ++i)
      text += (i ? ", " : "") + (*args)[i].getAsString().value_or("?").str();
  return text + ")";
}

llvm::Expected<InspectedModule> readModule(llvm::StringRef file) {
  InspectedModule result;
  llvm::Expected<BundleView> bundle = findBundle(file);
  if (!bundle)
    return bundle.takeError();
  result.bundle = *bundle;
  llvm::Expected<llvm::json::Value> manifest = llvm::json::parse(bundle->manifest);
  if (!manifest)
    return problem("the manifest is not valid JSON: " + llvm::toString(manifest.takeError()));
  result.manifest = std::move(*manifest);
  const llvm::json::Object *root = result.manifest.getAsObject();
  if (!root)
    return problem("the manifest is not a JSON object");
  std::optional<int64_t> format = root->getInteger("format");
  if (format != int64_t(bundle::ManifestFormat))
    return problem("the manifest has format " + (format ? std::to_string(*format) : "none") +
                   "; this Kiln reads format " + std::to_string(bundle::ManifestFormat));
  const llvm::json::Array *specializations = root->getArray("specializations");
  if (!specializations || !root->getString("module"))
    return problem("the manifest lacks 'module' or 'specializations'");

  std::map<std::pair<std::string, std::string>, size_t> groupOf;
  for (const llvm::json::Value &value : *specializations) {
    const llvm::json::Object *spec = value.getAsObject();
    if (!spec)
      return problem("the manifest has a specialization that is not an object");
    std::string description = describeSpecialization(*spec);
    const llvm::json::Object *fatbin = spec->getObject("fatbin");
    std::optional<int64_t> offset = fatbin ? fatbin->getInteger("offset") : std::nullopt;
    std::optional<int64_t> size = fatbin ? fatbin->getInteger("size") : std::nullopt;
    std::optional<llvm::StringRef> checksum = fatbin ? fatbin->getString("checksum") : std::nullopt;
    if (!offset || !size || !checksum || *offset < 0 || *size < 0)
      return problem("the manifest has no valid 'fatbin' for " + description);
    llvm::StringRef payload = bundle->payload;
    if (uint64_t(*offset) > payload.size() || uint64_t(*size) > payload.size() - *offset)
      return problem("the fat binary of " + description + " (offset " + std::to_string(*offset) +
                     ", " + std::to_string(*size) + " bytes) lies outside the payload's " +
                     std::to_string(payload.size()) + " bytes");
    llvm::StringRef blob = payload.substr(*offset, *size);
    std::string actual = bundle::checksumText(kilnChecksum(blob.data(), blob.size()));
    if (actual != *checksum)
      return problem("the fat binary of " + description + " is damaged: its checksum is " + actual +
                     ", the manifest says " + *checksum);
    std::string name = spec->getString("name").value_or("").str();
    std::string kind = spec->getString("kind").value_or("").str();
    auto [it, inserted] = groupOf.try_emplace({name, kind}, result.kernels.size());
    if (inserted)
      result.kernels.push_back({name, kind, {}});
    result.kernels[it->second].specializations.push_back(spec);
  }
  return result;
}

} // namespace kiln::bundle
