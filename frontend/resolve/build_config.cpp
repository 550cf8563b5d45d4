//===- frontend/resolve/build_config.cpp ------------------------------------------===//

#include "frontend/resolve/build_config.h"

#include "frontend/source/source_file.h"
#include "support/nearest_file.h"

#include <llvm/ADT/StringExtras.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Path.h>

#define TOML_EXCEPTIONS 0
#define TOML_HEADER_ONLY 1
#include <toml++/toml.h>

namespace kiln {

namespace {

/// Reads the signatures table `tablePath` ("tool.kiln.signatures") of the
/// TOML file at `path` into `result`.
void readSignatureTable(const std::string &path, llvm::ArrayRef<llvm::StringRef> tablePath,
                        llvm::StringRef moduleName, SourceManager &sources, DiagnosticEngine &diags,
                        std::vector<ExternalSignature> &result) {
  llvm::ErrorOr<std::string> read = readSourceFile(path);
  if (!read) {
    diags.report(DiagID::warn_pyproject_unreadable, SourceRange(),
                 {path, readErrorMessage(read.getError())});
    return;
  }
  uint32_t file = sources.addFile(path, std::move(*read));
  llvm::StringRef contents = sources.contents(file);
  std::string tableName = llvm::join(tablePath, ".");
  toml::parse_result parsed = toml::parse(std::string_view(contents.data(), contents.size()), path);
  if (!parsed) {
    const toml::parse_error &error = parsed.error();
    uint32_t line = std::max<uint32_t>(1, static_cast<uint32_t>(error.source().begin.line));
    uint32_t column = std::max<uint32_t>(1, static_cast<uint32_t>(error.source().begin.column));
    SourceLoc at{file, sources.lineStart(file, line) + column - 1};
    diags.report(DiagID::err_pyproject_syntax, SourceRange(at, at),
                 {llvm::sys::path::filename(path).str(), std::string(error.description())});
    return;
  }
  const toml::node *tableNode = &parsed.table();
  for (llvm::StringRef key : tablePath) {
    const toml::table *parent = tableNode ? tableNode->as_table() : nullptr;
    tableNode = parent ? parent->get(std::string_view(key.data(), key.size())) : nullptr;
  }
  const toml::table *signatures = tableNode ? tableNode->as_table() : nullptr;
  if (!signatures)
    return;
  auto offsetOf = [&](const toml::source_position &position) -> uint32_t {
    uint32_t line = std::max<uint32_t>(1, static_cast<uint32_t>(position.line));
    return sources.lineStart(file, line) + static_cast<uint32_t>(position.column) - 1;
  };
  // Where a string value's text is in the file: inside its quotes, when it
  // is a simple string without escapes; else a file of its own.
  auto locate = [&](const toml::node &node, const std::string &text, const std::string &origin,
                    const std::string &function) {
    uint32_t begin = offsetOf(node.source().begin);
    uint32_t end = offsetOf(node.source().end);
    llvm::StringRef raw = contents.slice(begin, end);
    if (raw.size() >= 2 && (raw.front() == '"' || raw.front() == '\'') &&
        raw.substr(1, raw.size() - 2) == text) {
      result.push_back({function, file, begin + 1, end - 1, origin});
      return;
    }
    uint32_t own = sources.addFile(path + " (signature of '" + function + "')", text);
    result.push_back({function, own, 0, static_cast<uint32_t>(text.size()), origin});
  };

  std::string origin = "[" + tableName + "] in " + path;
  // Qualified keys for this module take precedence over plain names.
  std::map<std::string, std::pair<std::string, const toml::node *>> chosen;
  for (const auto &[key, node] : *signatures) {
    std::string name(key.str());
    std::string function = name;
    bool qualified = false;
    if (size_t dot = name.rfind('.'); dot != std::string::npos) {
      if (name.substr(0, dot) != moduleName)
        continue;
      function = name.substr(dot + 1);
      qualified = true;
    }
    if (!qualified && chosen.count(function))
      continue;
    chosen[function] = {name, &node};
  }
  for (const auto &[function, entry] : chosen) {
    const toml::node &node = *entry.second;
    if (const auto *text = node.as_string()) {
      locate(node, text->get(), origin, function);
    } else if (const auto *list = node.as_array()) {
      for (const toml::node &item : *list) {
        if (const auto *itemText = item.as_string()) {
          locate(item, itemText->get(), origin, function);
        } else {
          SourceLoc at{file, offsetOf(item.source().begin)};
          diags.report(DiagID::err_pyproject_signature_type, SourceRange(at, at),
                       {tableName, entry.first});
        }
      }
    } else {
      SourceLoc at{file, offsetOf(node.source().begin)};
      diags.report(DiagID::err_pyproject_signature_type, SourceRange(at, at),
                   {tableName, entry.first});
    }
  }
}

} // namespace

std::vector<ExternalSignature> readBuildSignatures(llvm::StringRef modulePath,
                                                   llvm::StringRef moduleName,
                                                   SourceManager &sources,
                                                   DiagnosticEngine &diags) {
  std::vector<ExternalSignature> result;
  // Without a dotted name, the module is known by its file's.
  std::string name =
      moduleName.empty() ? llvm::sys::path::stem(modulePath).str() : moduleName.str();
  llvm::StringRef folder = llvm::sys::path::parent_path(modulePath);
  if (std::string pyproject = support::findNearestFile(folder, "pyproject.toml");
      !pyproject.empty())
    readSignatureTable(pyproject, {"tool", "kiln", "signatures"}, name, sources, diags, result);
  if (std::string recorded = support::findNearestFile(folder, "kiln-signatures.toml");
      !recorded.empty())
    readSignatureTable(recorded, {"signatures"}, name, sources, diags, result);
  return result;
}

llvm::Expected<std::vector<ExternalSignature>>
parseSignatureFlags(llvm::ArrayRef<std::string> flags, SourceManager &sources) {
  std::vector<ExternalSignature> result;
  for (const std::string &flag : flags) {
    size_t equals = flag.find('=');
    if (equals == std::string::npos || equals == 0 || equals + 1 == flag.size())
      return llvm::createStringError(
          std::errc::invalid_argument,
          "--signature expects NAME=SIGNATURE, as in --signature 'add=void(float32[:])', got '%s'",
          flag.c_str());
    uint32_t file = sources.addFile("<command line>", flag);
    result.push_back({flag.substr(0, equals), file, static_cast<uint32_t>(equals + 1),
                      static_cast<uint32_t>(flag.size()), "--signature"});
  }
  return result;
}

} // namespace kiln
