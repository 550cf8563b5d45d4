//===- pipeline/signature_file.cpp - kiln-signatures.toml ------------------===//

#include "pipeline/signature_file.h"

#include "frontend/resolve/signature_table.h"
#include "frontend/source/source_file.h"
#include "support/replace_file.h"

#include <llvm/ADT/ScopeExit.h>
#include <llvm/ADT/StringExtras.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Format.h>
#include <llvm/Support/Path.h>
#include <llvm/Support/raw_ostream.h>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

namespace kiln::pipeline {

namespace {

constexpr llvm::StringLiteral Header =
    "# Kernel signatures recorded from test runs; `kiln build` reads them.\n";

llvm::Error fileError(std::error_code code, llvm::StringRef what, llvm::StringRef path) {
  return llvm::createStringError(code, "cannot %s '%s': %s", what.str().c_str(), path.str().c_str(),
                                 code.message().c_str());
}

/// `text` as a TOML basic string, written as recorders write it (Python's
/// json.dumps without ensure_ascii, and DEL escaped, which TOML requires):
/// short escapes, \\u00XX for other control characters, UTF-8 as it is;
/// so the file is the same whoever wrote it.
void writeQuoted(llvm::raw_ostream &os, llvm::StringRef text) {
  os << '"';
  for (char c : text) {
    switch (c) {
    case '"':
      os << "\\\"";
      break;
    case '\\':
      os << "\\\\";
      break;
    case '\b':
      os << "\\b";
      break;
    case '\f':
      os << "\\f";
      break;
    case '\n':
      os << "\\n";
      break;
    case '\r':
      os << "\\r";
      break;
    case '\t':
      os << "\\t";
      break;
    default:
      if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
        os << llvm::format("\\u%04x", static_cast<unsigned char>(c));
      else
        os << c;
    }
  }
  os << '"';
}

/// An open descriptor of the file at `path`, holding its lock. The file is
/// replaced rather than rewritten, so a lock taken on a file that has since
/// been replaced is dropped and taken on the new one.
llvm::Expected<int> lockFile(llvm::StringRef path) {
  std::string name = path.str();
  for (;;) {
    int descriptor = ::open(name.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (descriptor < 0)
      return fileError(std::error_code(errno, std::generic_category()), "open", path);
    if (::flock(descriptor, LOCK_EX) != 0) {
      std::error_code code(errno, std::generic_category());
      ::close(descriptor);
      return fileError(code, "lock", path);
    }
    struct stat opened, current;
    if (::fstat(descriptor, &opened) == 0 && ::stat(name.c_str(), &current) == 0 &&
        opened.st_ino == current.st_ino && opened.st_dev == current.st_dev)
      return descriptor;
    ::close(descriptor);
  }
}

} // namespace

llvm::Expected<SignatureTable> readSignatureTable(llvm::StringRef path,
                                                  llvm::ArrayRef<llvm::StringRef> tablePath) {
  SignatureTable table;
  llvm::ErrorOr<std::string> text = readSourceFile(path);
  if (!text) {
    if (text.getError() == std::errc::no_such_file_or_directory)
      return table;
    return llvm::createStringError(text.getError(), "cannot read '%s': %s", path.str().c_str(),
                                   readErrorMessage(text.getError()).c_str());
  }
  llvm::Expected<SignatureTableContents> contents = readSignatureTableText(*text, path, tablePath);
  if (!contents)
    return llvm::createStringError(std::errc::invalid_argument, "%s:%s", path.str().c_str(),
                                   llvm::toString(contents.takeError()).c_str());
  if (!contents->isTable)
    return llvm::createStringError(std::errc::invalid_argument, "%s: [%s] is not a table",
                                   path.str().c_str(), llvm::join(tablePath, ".").c_str());
  for (const SignatureTableRow &row : contents->rows) {
    std::set<std::string> &entry = table[row.key];
    for (const WrittenSignature &written : row.signatures) {
      if (!written.text)
        return llvm::createStringError(std::errc::invalid_argument,
                                       "%s: the signatures of '%s' must be a string or a list of "
                                       "strings",
                                       path.str().c_str(), row.key.c_str());
      entry.insert(*written.text);
    }
  }
  return table;
}

std::string renderSignatureFile(const SignatureTable &table) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << Header << "[signatures]\n";
  for (const auto &[kernel, signatures] : table) {
    writeQuoted(os, kernel);
    os << " = [\n";
    for (const std::string &signature : signatures) {
      os << "    ";
      writeQuoted(os, signature);
      os << ",\n";
    }
    os << "]\n";
  }
  return text;
}

llvm::Error updateSignatureFile(llvm::StringRef path,
                                llvm::function_ref<void(SignatureTable &)> change) {
  llvm::Expected<int> descriptor = lockFile(path);
  if (!descriptor)
    return descriptor.takeError();
  auto unlock = llvm::make_scope_exit([&] { ::close(*descriptor); });
  llvm::Expected<SignatureTable> table = readSignatureTable(path, {"signatures"});
  if (!table)
    return table.takeError();
  SignatureTable before = *table;
  change(*table);
  uint64_t size = 0;
  if (*table == before && !llvm::sys::fs::file_size(path, size) && size != 0)
    return llvm::Error::success();
  return support::replaceFile(path, renderSignatureFile(*table));
}

} // namespace kiln::pipeline
