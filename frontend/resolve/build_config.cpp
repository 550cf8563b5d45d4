//===- frontend/resolve/build_config.cpp ------------------------------------------===//

#include "frontend/resolve/build_config.h"

#include "frontend/resolve/signature_table.h"
#include "frontend/source/source_file.h"
#include "support/nearest_file.h"

#include <llvm/ADT/StringExtras.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Path.h>

#include <map>

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
  auto offsetOf = [&](TomlPosition position) -> uint32_t {
    return sources.lineStart(file, position.line) + position.column - 1;
  };
  llvm::Expected<SignatureTableContents> table = readSignatureTableText(contents, path, tablePath);
  if (!table) {
    llvm::handleAllErrors(table.takeError(), [&](const TomlSyntaxError &error) {
      SourceLoc at{file, offsetOf(error.at)};
      diags.report(DiagID::err_pyproject_syntax, SourceRange(at, at),
                   {llvm::sys::path::filename(path).str(), error.description});
    });
    return;
  }
  std::string tableName = llvm::join(tablePath, ".");
  std::string origin = "[" + tableName + "] in " + path;
  // Where a signature's text is in the file: inside its quotes, when it is
  // a simple string without escapes; else a file of its own.
  auto locate = [&](const WrittenSignature &written, const std::string &function) {
    const std::string &text = *written.text;
    uint32_t begin = offsetOf(written.begin);
    uint32_t end = offsetOf(written.end);
    llvm::StringRef raw = contents.slice(begin, end);
    if (raw.size() >= 2 && (raw.front() == '"' || raw.front() == '\'') &&
        raw.substr(1, raw.size() - 2) == text) {
      result.push_back({function, file, begin + 1, end - 1, origin});
      return;
    }
    uint32_t own = sources.addFile(path + " (signature of '" + function + "')", text);
    result.push_back({function, own, 0, static_cast<uint32_t>(text.size()), origin});
  };

  // Qualified keys for this module take precedence over plain names.
  std::map<std::string, const SignatureTableRow *> chosen;
  for (const SignatureTableRow &row : table->rows) {
    llvm::StringRef key = row.key;
    std::string function = row.key;
    bool qualified = false;
    if (size_t dot = key.rfind('.'); dot != llvm::StringRef::npos) {
      if (key.take_front(dot) != moduleName)
        continue;
      function = key.drop_front(dot + 1).str();
      qualified = true;
    }
    if (!qualified && chosen.count(function))
      continue;
    chosen[function] = &row;
  }
  for (const auto &[function, row] : chosen) {
    for (const WrittenSignature &written : row->signatures) {
      if (written.text) {
        locate(written, function);
      } else {
        SourceLoc at{file, offsetOf(written.begin)};
        diags.report(DiagID::err_pyproject_signature_type, SourceRange(at, at),
                     {tableName, row->key});
      }
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
