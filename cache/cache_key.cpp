//===- cache/cache_key.cpp ------------------------------------------------===//

#include "cache/cache_key.h"

#include <llvm/ADT/StringExtras.h>
#include <llvm/Config/llvm-config.h>
#include <llvm/Support/Process.h>

namespace kiln::cache {

HexDigest digestOf(llvm::StringRef bytes) {
  llvm::BLAKE3Result<32> hash = llvm::BLAKE3::hash<32>(
      llvm::ArrayRef<uint8_t>(reinterpret_cast<const uint8_t *>(bytes.data()), bytes.size()));
  return llvm::toHex(hash, /*LowerCase=*/true);
}

bool isHexDigest(llvm::StringRef text) {
  return text.size() == 64 && llvm::all_of(text, [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

KeyBuilder::KeyBuilder() {
  add("kiln-cache-key", "1");
}

KeyBuilder &KeyBuilder::add(llvm::StringRef name, llvm::StringRef value) {
  std::string field = name.str() + "=" + std::to_string(value.size()) + ":";
  hasher.update(field);
  hasher.update(value);
  hasher.update(";");
  return *this;
}

KeyBuilder &KeyBuilder::add(llvm::StringRef name, uint64_t value) {
  return add(name, std::to_string(value));
}

HexDigest KeyBuilder::finish() {
  llvm::BLAKE3Result<32> hash = hasher.final();
  return llvm::toHex(hash, /*LowerCase=*/true);
}

CompilerIdentity CompilerIdentity::current(llvm::StringRef kilnVersion,
                                           llvm::StringRef cudaVersion) {
  CompilerIdentity identity{kilnVersion.str(), LLVM_VERSION_STRING, cudaVersion.str()};
  if (std::optional<std::string> test = llvm::sys::Process::GetEnv("KILN_CACHE_TEST_KILN_VERSION"))
    identity.kiln = *test;
  if (std::optional<std::string> test = llvm::sys::Process::GetEnv("KILN_CACHE_TEST_LLVM_VERSION"))
    identity.llvm = *test;
  return identity;
}

void CompilerIdentity::addTo(KeyBuilder &key) const {
  key.add("kiln", kiln).add("llvm", llvm).add("cuda", cuda);
}

} // namespace kiln::cache
