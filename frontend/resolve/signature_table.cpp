//===- frontend/resolve/signature_table.cpp - signature tables -------------===//

#include "frontend/resolve/signature_table.h"

#include <llvm/Support/raw_ostream.h>

#define TOML_EXCEPTIONS 0
#define TOML_HEADER_ONLY 1
#include <toml++/toml.h>

#include <algorithm>

namespace kiln {

char TomlSyntaxError::ID = 0;

void TomlSyntaxError::log(llvm::raw_ostream &os) const {
  os << at.line << ':' << at.column << ": " << description;
}

std::error_code TomlSyntaxError::convertToErrorCode() const {
  return std::make_error_code(std::errc::invalid_argument);
}

namespace {

TomlPosition positionOf(const toml::source_position &position) {
  return {std::max<uint32_t>(1, static_cast<uint32_t>(position.line)),
          std::max<uint32_t>(1, static_cast<uint32_t>(position.column))};
}

WrittenSignature writtenSignature(const toml::node &node) {
  WrittenSignature written;
  if (const auto *text = node.as_string())
    written.text = text->get();
  written.begin = positionOf(node.source().begin);
  written.end = positionOf(node.source().end);
  return written;
}

} // namespace

llvm::Expected<SignatureTableContents>
readSignatureTableText(llvm::StringRef contents, llvm::StringRef path,
                       llvm::ArrayRef<llvm::StringRef> tablePath) {
  toml::parse_result parsed =
      toml::parse(std::string_view(contents.data(), contents.size()), path.str());
  if (!parsed)
    return llvm::make_error<TomlSyntaxError>(positionOf(parsed.error().source().begin),
                                             std::string(parsed.error().description()));
  SignatureTableContents result;
  const toml::node *node = &parsed.table();
  for (llvm::StringRef key : tablePath) {
    const toml::table *parent = node->as_table();
    node = parent ? parent->get(std::string_view(key.data(), key.size())) : nullptr;
    if (!node)
      return result;
  }
  const toml::table *table = node->as_table();
  if (!table) {
    result.isTable = false;
    return result;
  }
  for (const auto &[key, value] : *table) {
    SignatureTableRow &row = result.rows.emplace_back();
    row.key = std::string(key.str());
    if (const toml::array *list = value.as_array()) {
      for (const toml::node &item : *list)
        row.signatures.push_back(writtenSignature(item));
    } else {
      row.signatures.push_back(writtenSignature(value));
    }
  }
  return result;
}

} // namespace kiln
