//===- pipeline/project_settings.cpp --------------------------------------===//

#include "pipeline/project_settings.h"

#include "backend/cuda_tools/arch_list.h"
#include "cache/cache_location.h"
#include "frontend/resolve/build_config.h"
#include "frontend/source/source_file.h"
#include "support/nearest_file.h"

#include <llvm/ADT/StringExtras.h>
#include <llvm/Support/FormatVariadic.h>
#include <llvm/Support/Path.h>

#define TOML_EXCEPTIONS 0
#define TOML_HEADER_ONLY 1
#include <toml++/toml.h>

#include <set>

namespace kiln::pipeline {

namespace {

/// Every key [tool.kiln] may hold: the settings read here, `signatures`
/// (read by the front end) and `modules` (which the setuptools hook lists).
const std::set<std::string> &knownKeys() {
  static const std::set<std::string> keys = {"archs",
                                             "cache-dir",
                                             "cache-max-size",
                                             "remote-cache",
                                             "jobs",
                                             "opt",
                                             "fastmath",
                                             "lineinfo",
                                             "max-registers",
                                             "ptxas-options",
                                             "modules",
                                             "signatures",
                                             "switchable-index-checks"};
  return keys;
}

class SettingsReader {
public:
  SettingsReader(std::string path, const toml::table &table)
      : path(std::move(path)), table(table) {}

  /// An error at `node`'s line: "PATH:LINE: [tool.kiln] KEY WHAT".
  llvm::Error error(const toml::node &node, llvm::StringRef key, const llvm::Twine &what) const {
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   path + ":" + std::to_string(node.source().begin.line) +
                                       ": [tool.kiln] " + key + " " + what);
  }

  /// A string, as a list of one, or a list of strings and numbers (the
  /// numbers of an arch list: 75, 8.6).
  llvm::Expected<std::optional<std::vector<std::string>>> strings(const toml::table &from,
                                                                  llvm::StringRef key) const {
    const toml::node *node = from.get(std::string_view(key.data(), key.size()));
    if (!node)
      return std::nullopt;
    if (const auto *text = node->as_string())
      return std::optional<std::vector<std::string>>({text->get()});
    const toml::array *items = node->as_array();
    if (!items)
      return error(*node, key, "must be a string or a list of strings");
    std::vector<std::string> parts;
    for (const toml::node &item : *items) {
      if (const auto *text = item.as_string())
        parts.push_back(text->get());
      else if (const auto *number = item.as_integer())
        parts.push_back(std::to_string(number->get()));
      else if (const auto *decimal = item.as_floating_point())
        parts.push_back(llvm::formatv("{0:f1}", decimal->get()).str());
      else
        return error(item, key, "must be a string or a list of strings");
    }
    return std::optional<std::vector<std::string>>(std::move(parts));
  }

  llvm::Expected<std::optional<std::string>> text(llvm::StringRef key) const {
    const toml::node *node = table.get(std::string_view(key.data(), key.size()));
    if (!node)
      return std::nullopt;
    const auto *value = node->as_string();
    if (!value)
      return error(*node, key, "must be a string");
    return std::optional<std::string>(value->get());
  }

  llvm::Expected<std::optional<unsigned>> number(llvm::StringRef key, unsigned least,
                                                 unsigned most) const {
    const toml::node *node = table.get(std::string_view(key.data(), key.size()));
    if (!node)
      return std::nullopt;
    const auto *value = node->as_integer();
    if (!value || value->get() < least || value->get() > most)
      return error(*node, key,
                   "must be a whole number from " + llvm::Twine(least) + " to " +
                       llvm::Twine(most));
    return std::optional<unsigned>(static_cast<unsigned>(value->get()));
  }

  llvm::Expected<std::optional<bool>> boolean(llvm::StringRef key) const {
    const toml::node *node = table.get(std::string_view(key.data(), key.size()));
    if (!node)
      return std::nullopt;
    const auto *value = node->as_boolean();
    if (!value)
      return error(*node, key, "must be true or false");
    return std::optional<bool>(value->get());
  }

  /// A modules entry's archs for `moduleName`, else the project's; checked.
  llvm::Expected<std::optional<std::string>> archs(llvm::StringRef moduleName) const {
    if (const toml::array *modules = table["modules"].as_array(); modules && !moduleName.empty())
      for (const toml::node &entry : *modules) {
        const toml::table *module = entry.as_table();
        const toml::value<std::string> *name = module ? (*module)["name"].as_string() : nullptr;
        if (name && name->get() == moduleName && module->contains("archs"))
          return checkedArchs(*module);
      }
    return checkedArchs(table);
  }

private:
  llvm::Expected<std::optional<std::string>> checkedArchs(const toml::table &from) const {
    llvm::Expected<std::optional<std::vector<std::string>>> entries = strings(from, "archs");
    if (!entries)
      return entries.takeError();
    if (!*entries)
      return std::nullopt;
    std::string list = llvm::join(**entries, ";");
    if (llvm::Expected<cuda_tools::ArchSet> parsed = cuda_tools::parseArchList(list); !parsed)
      return error(*from.get("archs"), "archs",
                   "'" + list + "': " + llvm::toString(parsed.takeError()));
    return std::optional<std::string>(std::move(list));
  }

  std::string path;
  const toml::table &table;
};

template <typename T> llvm::Error take(llvm::Expected<T> value, T &into) {
  if (!value)
    return value.takeError();
  into = std::move(*value);
  return llvm::Error::success();
}

} // namespace

std::string ProjectSettings::origin() const {
  return "[tool.kiln] of " + path;
}

llvm::Expected<ProjectSettings> readProjectSettings(llvm::StringRef folder,
                                                    llvm::StringRef moduleName) {
  ProjectSettings settings;
  std::string path = support::findNearestFile(folder, "pyproject.toml");
  if (path.empty())
    return settings;
  llvm::ErrorOr<std::string> contents = readSourceFile(path);
  if (!contents)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "cannot read " + path + ": " +
                                       readErrorMessage(contents.getError()));
  toml::parse_result parsed = toml::parse(*contents, path);
  if (!parsed)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   path + ":" + std::to_string(parsed.error().source().begin.line) +
                                       ": " + std::string(parsed.error().description()));
  const toml::table *kiln = parsed.table()["tool"]["kiln"].as_table();
  if (!kiln)
    return settings;
  settings.path = path;
  SettingsReader reader(path, *kiln);

  if (llvm::Error failed = take(reader.archs(moduleName), settings.archs))
    return failed;

  std::optional<std::string> directory;
  if (llvm::Error failed = take(reader.text("cache-dir"), directory))
    return failed;
  if (directory) {
    llvm::SmallString<256> absolute(llvm::sys::path::parent_path(path));
    llvm::sys::path::append(absolute, *directory);
    llvm::sys::path::remove_dots(absolute, /*remove_dot_dot=*/true);
    settings.cacheDirectory = absolute.str().str();
  }

  if (const toml::node *size = kiln->get("cache-max-size")) {
    if (const auto *number = size->as_integer())
      settings.cacheMaxSize = std::to_string(number->get());
    else if (const auto *text = size->as_string())
      settings.cacheMaxSize = text->get();
    if (!settings.cacheMaxSize)
      return reader.error(*size, "cache-max-size", "must be a size such as \"4G\"");
    if (llvm::Expected<uint64_t> bytes = cache::parseSize(*settings.cacheMaxSize); !bytes)
      return reader.error(*size, "cache-max-size", llvm::toString(bytes.takeError()));
  }

  // A string of remotes separated by spaces, as $KILN_REMOTE_CACHE, or a list.
  std::optional<std::vector<std::string>> remotes;
  if (llvm::Error failed = take(reader.strings(*kiln, "remote-cache"), remotes))
    return failed;
  if (remotes) {
    settings.remoteCaches.emplace();
    for (const std::string &entry : *remotes) {
      llvm::SmallVector<llvm::StringRef, 4> urls;
      llvm::SplitString(entry, urls, " \t\n");
      for (llvm::StringRef url : urls)
        settings.remoteCaches->push_back(url.str());
    }
  }

  if (llvm::Error failed = take(reader.number("jobs", 0, 1024), settings.jobs))
    return failed;
  if (llvm::Error failed = take(reader.number("max-registers", 1, 255), settings.maxRegisters))
    return failed;
  if (llvm::Error failed = take(reader.number("opt", 0, 3), settings.opt))
    return failed;
  if (settings.opt && *settings.opt != 0 && *settings.opt != 3)
    return reader.error(*(*kiln)["opt"].node(), "opt", "must be 0 or 3");
  if (llvm::Error failed = take(reader.boolean("fastmath"), settings.fastmath))
    return failed;
  if (llvm::Error failed = take(reader.boolean("lineinfo"), settings.lineinfo))
    return failed;
  if (llvm::Error failed =
          take(reader.boolean("switchable-index-checks"), settings.switchableIndexChecks))
    return failed;

  std::optional<std::vector<std::string>> ptxas;
  if (llvm::Error failed = take(reader.strings(*kiln, "ptxas-options"), ptxas))
    return failed;
  if (ptxas)
    settings.ptxasOptions = std::move(*ptxas);

  for (const auto &[key, node] : *kiln)
    if (!knownKeys().count(std::string(key.str())))
      settings.unknownKeys.push_back(std::string(key.str()));
  return settings;
}

} // namespace kiln::pipeline
