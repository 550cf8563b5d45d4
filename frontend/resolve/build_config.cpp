//===- frontend/resolve/build_config.cpp ------------------------------------------===//

#include "frontend/resolve/build_config.h"

#include <llvm/Support/FileSystem.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/Path.h>

#define TOML_EXCEPTIONS 0
#define TOML_HEADER_ONLY 1
#include <toml++/toml.h>

namespace kiln {

namespace {

/// The nearest pyproject.toml at or above the directory of `path`.
std::string findPyproject(llvm::StringRef path) {
  llvm::SmallString<256> directory(path);
  llvm::sys::fs::make_absolute(directory);
  llvm::sys::path::remove_filename(directory);
  while (!directory.empty()) {
    llvm::SmallString<256> candidate(directory);
    llvm::sys::path::append(candidate, "pyproject.toml");
    if (llvm::sys::fs::is_regular_file(candidate))
      return candidate.str().str();
    llvm::StringRef parent = llvm::sys::path::parent_path(directory);
    if (parent == directory)
      break;
    directory = parent;
  }
  return "";
}

} // namespace

std::vector<ExternalSignature> readPyprojectSignatures(llvm::StringRef modulePath,
                                                       llvm::StringRef moduleName,
                                                       SourceManager &sources,
                                                       DiagnosticEngine &diags) {
  std::vector<ExternalSignature> result;
  std::string path = findPyproject(modulePath);
  if (path.empty())
    return result;
  auto buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer) {
    diags.report(DiagID::warn_pyproject_unreadable, SourceRange(),
                 {path, buffer.getError().message()});
    return result;
  }
  uint32_t file = sources.addFile(path, (*buffer)->getBuffer().str());
  llvm::StringRef contents = sources.contents(file);
  toml::parse_result parsed = toml::parse(std::string_view(contents.data(), contents.size()), path);
  if (!parsed) {
    const toml::parse_error &error = parsed.error();
    uint32_t line = std::max<uint32_t>(1, static_cast<uint32_t>(error.source().begin.line));
    uint32_t column = std::max<uint32_t>(1, static_cast<uint32_t>(error.source().begin.column));
    SourceLoc at{file, sources.lineStart(file, line) + column - 1};
    diags.report(DiagID::err_pyproject_syntax, SourceRange(at, at),
                 {std::string(error.description())});
    return result;
  }
  const toml::table &root = parsed.table();
  const toml::table *signatures = root["tool"]["kiln"]["signatures"].as_table();
  if (!signatures)
    return result;

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

  std::string origin = "[tool.kiln.signatures] in " + path;
  // Qualified keys for this module take precedence over plain names.
  std::map<std::string, std::pair<std::string, const toml::node *>> chosen;
  for (const auto &[key, node] : *signatures) {
    std::string name(key.str());
    std::string function = name;
    bool qualified = false;
    if (size_t dot = name.rfind('.'); dot != std::string::npos) {
      if (moduleName.empty() || name.substr(0, dot) != moduleName)
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
          diags.report(DiagID::err_pyproject_signature_type, SourceRange(at, at), {entry.first});
        }
      }
    } else {
      SourceLoc at{file, offsetOf(node.source().begin)};
      diags.report(DiagID::err_pyproject_signature_type, SourceRange(at, at), {entry.first});
    }
  }
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
