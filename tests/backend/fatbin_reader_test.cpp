//===- tests/backend/fatbin_reader_test.cpp - Damaged fat binaries --------===//
//
// The reader on truncated, corrupted and randomly damaged fat binaries: it
// must answer with an error (or, for harmless damage, entries within the
// input), never crash or read out of bounds. With clang this test also runs
// under AddressSanitizer and UndefinedBehaviorSanitizer.
//
//===----------------------------------------------------------------------===//

#include "backend/cuda_tools/fatbin_reader.h"
#include "backend/cuda_tools/fatbinary.h"
#include "backend/cuda_tools/ptxas.h"
#include "tests/backend/test_support.h"

#include <gtest/gtest.h>
#include <llvm/Support/Endian.h>
#include <llvm/Support/MathExtras.h>

#include <random>

namespace kiln::cuda_tools {
namespace {

using testing::errorMessage;
using testing::readData;
using testing::toolkit;
using testing::withTarget;

bool contains(const std::string &text, llvm::StringRef part) {
  return llvm::StringRef(text).contains(part);
}

/// sm_80 and sm_100 cubins and compute_90 PTX, uncompressed, then the same
/// with compressed PTX appended as a second container.
const std::string &sample() {
  static const std::string *bytes = [] {
    auto *result = new std::string;
    std::string ptx = readData("block_sum.ptx");
    std::vector<FatbinImage> images;
    for (unsigned arch : {80u, 100u}) {
      llvm::Expected<AssembledCubin> cubin =
          assemblePtx(toolkit(), withTarget(ptx, std::min(arch, 90u)), arch);
      if (!cubin) {
        ADD_FAILURE() << llvm::toString(cubin.takeError());
        return result;
      }
      images.push_back({FatbinImageKind::Cubin, arch, std::move(cubin->cubin)});
    }
    images.push_back({FatbinImageKind::Ptx, 90, ptx});
    llvm::Expected<std::string> plain = createFatbinary(toolkit(), images);
    FatbinaryOptions compressed;
    compressed.compression = FatbinCompression::Ptx;
    llvm::Expected<std::string> packed = createFatbinary(toolkit(), {images[2]}, compressed);
    if (!plain || !packed) {
      ADD_FAILURE() << errorMessage(std::move(plain)) << errorMessage(std::move(packed));
      return result;
    }
    *result = *plain;
    result->resize(llvm::alignTo(result->size(), 8), '\0');
    *result += *packed;
    return result;
  }();
  return *bytes;
}

/// Every entry the reader returns lies within the input.
void expectWithinInput(const std::vector<FatbinEntry> &entries, size_t size) {
  for (const FatbinEntry &entry : entries) {
    EXPECT_LE(entry.offset + entry.headerSize + entry.payloadSize, size);
    EXPECT_LE(entry.image.size(), entry.payloadSize);
  }
}

TEST(FatbinReader, ReadsConcatenatedContainers) {
  llvm::Expected<std::vector<FatbinEntry>> entries = readFatbin(sample());
  KILN_ASSERT_OK(entries);
  ASSERT_EQ(entries->size(), 4u);
  EXPECT_EQ((*entries)[0].label(), "sm_80 cubin");
  EXPECT_EQ((*entries)[1].label(), "sm_100 cubin");
  EXPECT_EQ((*entries)[2].label(), "compute_90 PTX");
  EXPECT_FALSE((*entries)[2].compressed());
  EXPECT_EQ((*entries)[3].label(), "compute_90 PTX");
  EXPECT_TRUE((*entries)[3].compressed());
  expectWithinInput(*entries, sample().size());
}

TEST(FatbinReader, ZeroPaddingAfterTheLastContainerIsAllowed) {
  std::string padded = sample() + std::string(24, '\0');
  llvm::Expected<std::vector<FatbinEntry>> entries = readFatbin(padded);
  KILN_ASSERT_OK(entries);
  EXPECT_EQ(entries->size(), 4u);
}

TEST(FatbinReader, EveryTruncationIsAnError) {
  const std::string &bytes = sample();
  ASSERT_FALSE(bytes.empty());
  // The second container starts where the first one's entries end.
  size_t firstEnd = 16 + llvm::support::endian::read64le(bytes.data() + 8);
  for (size_t size = 0; size < bytes.size(); ++size) {
    llvm::Expected<std::vector<FatbinEntry>> entries =
        readFatbin(llvm::StringRef(bytes).take_front(size));
    // Cutting exactly after the first container (or its padding) leaves a
    // whole fat binary.
    bool whole = size >= firstEnd && size <= llvm::alignTo(firstEnd, 8);
    if (whole) {
      EXPECT_TRUE(static_cast<bool>(entries)) << size;
      if (entries)
        expectWithinInput(*entries, size);
      else
        llvm::consumeError(entries.takeError());
      continue;
    }
    EXPECT_FALSE(static_cast<bool>(entries)) << "a " << size << "-byte prefix was accepted";
    if (!entries)
      llvm::consumeError(entries.takeError());
  }
}

/// Writes a little-endian value into a copy of the sample.
template <typename T> std::string patched(size_t offset, T value) {
  std::string bytes = sample();
  llvm::support::endian::write<T, llvm::endianness::little>(bytes.data() + offset, value);
  return bytes;
}

TEST(FatbinReader, CorruptedFieldsAreNamed) {
  constexpr size_t entry = 16; // the first entry's header
  EXPECT_TRUE(contains(errorMessage(readFatbin("")), "the input is empty"));
  EXPECT_TRUE(contains(errorMessage(readFatbin(patched<uint32_t>(0, 0x7f454c46))),
                       "not a fat binary (magic 0x7f454c46, expected 0xba55ed50)"));
  EXPECT_TRUE(contains(errorMessage(readFatbin(patched<uint16_t>(4, 2))),
                       "unsupported fat binary version 2"));
  EXPECT_TRUE(contains(errorMessage(readFatbin(patched<uint16_t>(6, 8))), "header size 8"));
  EXPECT_TRUE(contains(errorMessage(readFatbin(patched<uint64_t>(8, ~0ull))), "truncated"));
  EXPECT_TRUE(contains(errorMessage(readFatbin(patched<uint32_t>(entry + 4, 8))),
                       "image header size 8 is smaller than 64"));
  EXPECT_TRUE(contains(errorMessage(readFatbin(patched<uint32_t>(entry + 4, 0xffffffffu))),
                       "runs past the end of the container"));
  EXPECT_TRUE(contains(errorMessage(readFatbin(patched<uint64_t>(entry + 8, ~0ull - 8))),
                       "sm_80 cubin image of"));
  // Damage inside the cubin: its section table moved past the image.
  EXPECT_TRUE(contains(errorMessage(readFatbin(patched<uint64_t>(entry + 64 + 40, 1u << 30))),
                       "section headers lie past its image"));
  std::string message = errorMessage(readFatbin(patched<uint32_t>(entry + 64, 0)));
  EXPECT_TRUE(
      contains(message, "invalid fat binary at offset 0x10: the cubin image is not an ELF file"))
      << message;
}

TEST(FatbinReader, RandomDamageNeverCrashes) {
  const std::string &bytes = sample();
  ASSERT_FALSE(bytes.empty());
  std::mt19937_64 random(20240601);
  unsigned accepted = 0, rejected = 0;
  for (int round = 0; round < 20000; ++round) {
    std::string damaged = bytes;
    int flips = 1 + static_cast<int>(random() % 8);
    for (int i = 0; i < flips; ++i) {
      // Half the damage lands in the first 256 bytes, where the headers are.
      size_t at = random() % 2 ? random() % std::min<size_t>(256, damaged.size())
                               : random() % damaged.size();
      switch (random() % 3) {
      case 0:
        damaged[at] = static_cast<char>(damaged[at] ^ (1u << (random() % 8)));
        break;
      case 1:
        damaged[at] = static_cast<char>(random());
        break;
      default:
        damaged[at] = static_cast<char>(0xff);
      }
    }
    if (random() % 4 == 0)
      damaged.resize(random() % damaged.size());
    llvm::Expected<std::vector<FatbinEntry>> entries = readFatbin(damaged);
    if (entries) {
      ++accepted;
      expectWithinInput(*entries, damaged.size());
    } else {
      ++rejected;
      EXPECT_TRUE(contains(llvm::toString(entries.takeError()), "invalid fat binary at offset"));
    }
  }
  // Both outcomes happen: damage inside an image's code goes unnoticed.
  EXPECT_GT(accepted, 0u);
  EXPECT_GT(rejected, 0u);
}

} // namespace
} // namespace kiln::cuda_tools
