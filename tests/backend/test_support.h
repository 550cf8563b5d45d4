//===- tests/backend/test_support.h - Shared helpers of the back-end tests ===//
//
// The toolkit the tests use (found as kiln finds it), the files in data/,
// and assertions for llvm::Expected.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "backend/cuda_tools/cuda_toolkit.h"
#include "support/temporary_directory.h"

#include <gtest/gtest.h>
#include <llvm/ADT/StringRef.h>
#include <llvm/Support/Error.h>

#include <string>

namespace kiln::cuda_tools::testing {

/// Asserts that an llvm::Expected holds a value, printing the error if not.
#define KILN_ASSERT_OK(expected)                                                                   \
  ASSERT_TRUE(static_cast<bool>(expected)) << llvm::toString((expected).takeError())

/// The message of a failed Expected, or "" when it holds a value (which is
/// dropped).
template <typename T> std::string errorMessage(llvm::Expected<T> expected) {
  if (expected)
    return "";
  return llvm::toString(expected.takeError());
}

inline std::string errorMessage(llvm::Error error) {
  return error ? llvm::toString(std::move(error)) : "";
}

/// The toolkit, found once as kiln finds it; the test fails without one.
inline const CudaToolkit &toolkit() {
  static const CudaToolkit *found = [] {
    llvm::Expected<CudaToolkit> toolkit = findCudaToolkit();
    if (!toolkit) {
      ADD_FAILURE() << "these tests need the CUDA toolkit: " << llvm::toString(toolkit.takeError());
      return new CudaToolkit();
    }
    return new CudaToolkit(std::move(*toolkit));
  }();
  return *found;
}

inline std::string dataPath(llvm::StringRef name) {
  return std::string(KILN_SOURCE_DIR) + "/tests/backend/data/" + name.str();
}

/// A file of tests/backend/data.
inline std::string readData(llvm::StringRef name) {
  llvm::Expected<std::string> bytes = support::readFileBytes(dataPath(name));
  if (!bytes) {
    ADD_FAILURE() << llvm::toString(bytes.takeError());
    return "";
  }
  return *bytes;
}

/// `ptx` with its `.target sm_NN` line set to sm_<arch>.
inline std::string withTarget(llvm::StringRef ptx, unsigned arch) {
  std::string text = ptx.str();
  size_t at = text.find("\n.target sm_");
  if (at == std::string::npos)
    return text;
  size_t end = text.find('\n', at + 1);
  return text.substr(0, at) + "\n.target sm_" + std::to_string(arch) + text.substr(end);
}

/// The e_flags of a cubin's ELF header; bits 8-15 hold its architecture
/// (EF_CUDA_SM), as ptxas 13 writes it for every architecture from sm_75 to
/// sm_121.
inline unsigned cubinElfFlags(llvm::StringRef cubin) {
  if (cubin.size() < 52)
    return 0;
  const auto *bytes = reinterpret_cast<const unsigned char *>(cubin.data());
  return bytes[48] | bytes[49] << 8 | bytes[50] << 16 | unsigned(bytes[51]) << 24;
}

} // namespace kiln::cuda_tools::testing
