//===- module/module_reader.cpp - Reading a built module's manifest -------===//

#include "module/module_reader.h"

#include "module/manifest_format.h"
#include "module/module_check.h"

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
  llvm::Expected<llvm::json::Value> manifest = llvm::json::parse(bundle->manifest);
  if (!manifest)
    return problem("the manifest is not valid JSON: " + llvm::toString(manifest.takeError()));
  result.manifest = std::move(*manifest);
  const llvm::json::Object *root = result.manifest.getAsObject();
  const llvm::json::Array *specializations = root->getArray("specializations");

  std::map<std::pair<std::string, std::string>, size_t> groupOf;
  for (const llvm::json::Value &value : *specializations) {
    const llvm::json::Object *spec = value.getAsObject();
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
