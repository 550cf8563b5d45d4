//===- tests/backend/fatbin_test.cpp - Building and reading fat binaries --===//
//
// Fat binaries made by the toolkit's fatbinary from Kiln's cubins and PTX,
// read back by backend/cuda_tools/fatbin_reader.h.
//
//===----------------------------------------------------------------------===//

#include "backend/cuda_tools/fatbin_reader.h"
#include "backend/cuda_tools/fatbinary.h"
#include "backend/cuda_tools/ptxas.h"
#include "support/tool_runner.h"
#include "tests/backend/test_support.h"

#include <gtest/gtest.h>
#include <llvm/ADT/StringExtras.h>

namespace kiln::cuda_tools {
namespace {

using testing::errorMessage;
using testing::readData;
using testing::toolkit;
using testing::withTarget;

bool contains(const std::string &text, llvm::StringRef part) {
  return llvm::StringRef(text).contains(part);
}

/// What fatbinary stores of PTX: each line with its runs of spaces and tabs
/// squeezed to one space (none at the start), then without its comment.
/// (The test kernel has no block comments.)
std::string asFatbinaryStoresIt(llvm::StringRef ptx) {
  std::string stored;
  llvm::SmallVector<llvm::StringRef, 0> lines;
  ptx.split(lines, '\n');
  for (size_t i = 0; i < lines.size(); ++i) {
    std::string squeezed;
    for (char c : lines[i].ltrim(" \t")) {
      bool blank = c == ' ' || c == '\t';
      if (blank && !squeezed.empty() && squeezed.back() == ' ')
        continue;
      squeezed += blank ? ' ' : c;
    }
    stored += llvm::StringRef(squeezed).take_front(squeezed.find("//")).str();
    if (i + 1 < lines.size())
      stored += '\n';
  }
  return stored;
}

/// The images of the tests' fat binary: sm_75, sm_80, sm_90 and sm_120
/// cubins of block_sum, and its compute_90 PTX.
const std::vector<FatbinImage> &images() {
  static const std::vector<FatbinImage> *built = [] {
    auto *result = new std::vector<FatbinImage>;
    std::string ptx = readData("block_sum.ptx");
    for (unsigned arch : {75u, 80u, 90u, 120u}) {
      llvm::Expected<AssembledCubin> cubin =
          assemblePtx(toolkit(), withTarget(ptx, std::min(arch, 90u)), arch);
      if (!cubin) {
        ADD_FAILURE() << llvm::toString(cubin.takeError());
        continue;
      }
      result->push_back({FatbinImageKind::Cubin, arch, std::move(cubin->cubin)});
    }
    result->push_back({FatbinImageKind::Ptx, 90, ptx});
    return result;
  }();
  return *built;
}

TEST(Fatbinary, HoldsExactlyTheImagesGiven) {
  llvm::Expected<std::string> fatbin = createFatbinary(toolkit(), images());
  KILN_ASSERT_OK(fatbin);
  llvm::Expected<std::vector<FatbinEntry>> entries = readFatbin(*fatbin);
  KILN_ASSERT_OK(entries);
  ASSERT_EQ(entries->size(), 5u);

  // Cubins first, then PTX, each by ascending architecture.
  const char *labels[] = {"sm_75 cubin", "sm_80 cubin", "sm_90 cubin", "sm_120 cubin",
                          "compute_90 PTX"};
  for (size_t i = 0; i < entries->size(); ++i) {
    const FatbinEntry &entry = (*entries)[i];
    EXPECT_EQ(entry.label(), labels[i]);
    EXPECT_FALSE(entry.compressed());
    EXPECT_TRUE(entry.is64Bit);
    EXPECT_FALSE(entry.debug);
    EXPECT_EQ(entry.payloadSize % 8, 0u);
    EXPECT_GE(entry.payloadSize, entry.image.size());
  }
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ((*entries)[i].kind, FatbinEntryKind::Cubin);
    EXPECT_EQ((*entries)[i].arch, images()[i].arch);
    EXPECT_TRUE((*entries)[i].image == images()[i].bytes) << (*entries)[i].label();
  }
  const FatbinEntry &ptx = (*entries)[4];
  EXPECT_EQ(ptx.kind, FatbinEntryKind::Ptx);
  EXPECT_EQ(ptx.arch, 90u);
  EXPECT_EQ(ptx.versionMajor, 7u); // .version 7.8
  EXPECT_EQ(ptx.versionMinor, 8u);
  EXPECT_EQ(ptx.image, asFatbinaryStoresIt(images()[4].bytes));
}

TEST(Fatbinary, StoredPtxKeepsItsLineNumbers) {
  // fatbinary drops comments and squeezes blanks but keeps every line, so
  // the driver's JIT errors point at the lines Kiln wrote.
  llvm::Expected<std::string> fatbin =
      createFatbinary(toolkit(), {{FatbinImageKind::Ptx, 90, images()[4].bytes}});
  KILN_ASSERT_OK(fatbin);
  llvm::Expected<std::vector<FatbinEntry>> entries = readFatbin(*fatbin);
  KILN_ASSERT_OK(entries);
  ASSERT_EQ(entries->size(), 1u);
  const std::string &stored = entries->front().image;
  EXPECT_FALSE(contains(stored, "//"));
  EXPECT_FALSE(contains(stored, "\n\t"));
  EXPECT_EQ(std::count(stored.begin(), stored.end(), '\n'),
            std::count(images()[4].bytes.begin(), images()[4].bytes.end(), '\n'));
}

TEST(Fatbinary, PtxTextIsWhatFatbinaryStores) {
  // The cache finds this text in a fat binary to keep the PTX once; lines
  // that end in blanks or a comment, and a "//" inside a string, included.
  std::string ptx = images()[4].bytes + "\t// trailing\n\tret; \t// after code\n"
                                        "\t.file 1 \"/a//b\tc.py\"  \n";
  llvm::Expected<std::string> fatbin =
      createFatbinary(toolkit(), {{FatbinImageKind::Ptx, 90, ptx}});
  KILN_ASSERT_OK(fatbin);
  llvm::Expected<std::vector<FatbinEntry>> entries = readFatbin(*fatbin);
  KILN_ASSERT_OK(entries);
  ASSERT_EQ(entries->size(), 1u);
  EXPECT_EQ(llvm::StringRef(entries->front().image).rtrim('\0').str(), fatbinaryPtxText(ptx))
      << "fatbinaryPtxText no longer rewrites PTX as fatbinary does";
}

TEST(Fatbinary, IsReproducibleAndIndependentOfInputOrder) {
  llvm::Expected<std::string> first = createFatbinary(toolkit(), images());
  KILN_ASSERT_OK(first);
  std::vector<FatbinImage> reversed(images().rbegin(), images().rend());
  llvm::Expected<std::string> second = createFatbinary(toolkit(), reversed);
  KILN_ASSERT_OK(second);
  EXPECT_TRUE(*first == *second);
  // Each run uses its own temporary directory; none names it in the output.
  EXPECT_FALSE(contains(*first, "kiln-fatbinary"));
  EXPECT_FALSE(contains(*first, ".cubin"));
}

TEST(Fatbinary, CompressedPtxIsReportedAsSuch) {
  FatbinaryOptions options;
  options.compression = FatbinCompression::Ptx;
  llvm::Expected<std::string> fatbin = createFatbinary(toolkit(), images(), options);
  KILN_ASSERT_OK(fatbin);
  llvm::Expected<std::vector<FatbinEntry>> entries = readFatbin(*fatbin);
  KILN_ASSERT_OK(entries);
  ASSERT_EQ(entries->size(), 5u);
  for (size_t i = 0; i < 4; ++i)
    EXPECT_FALSE((*entries)[i].compressed());
  const FatbinEntry &ptx = (*entries)[4];
  EXPECT_EQ(ptx.compression, FatbinCompressionMethod::Zstd);
  EXPECT_TRUE(ptx.image.empty());
  // The stored text and its terminating NUL.
  EXPECT_EQ(ptx.uncompressedSize, asFatbinaryStoresIt(images()[4].bytes).size() + 1);
  EXPECT_GT(ptx.compressedSize, 0u);
  EXPECT_LE(ptx.compressedSize, ptx.payloadSize);

  options.compression = FatbinCompression::All;
  fatbin = createFatbinary(toolkit(), images(), options);
  KILN_ASSERT_OK(fatbin);
  entries = readFatbin(*fatbin);
  KILN_ASSERT_OK(entries);
  for (const FatbinEntry &entry : *entries)
    EXPECT_TRUE(entry.compressed()) << entry.label();
  EXPECT_EQ(entries->front().uncompressedSize, images().front().bytes.size());
}

TEST(Fatbinary, BadImagesAreRefused) {
  const FatbinImage &sm75 = images()[0];
  EXPECT_TRUE(contains(errorMessage(createFatbinary(toolkit(), {})), "at least one image"));
  EXPECT_TRUE(
      contains(errorMessage(createFatbinary(toolkit(), {sm75, sm75})), "two sm_75 cubin images"));
  EXPECT_TRUE(
      contains(errorMessage(createFatbinary(toolkit(), {{FatbinImageKind::Cubin, 80, "text"}})),
               "the sm_80 cubin is not an ELF file"));
  EXPECT_TRUE(contains(
      errorMessage(createFatbinary(toolkit(), {{FatbinImageKind::Ptx, 80, images()[4].bytes}})),
      "the compute_80 PTX has .target sm_90"));
  EXPECT_TRUE(
      contains(errorMessage(createFatbinary(toolkit(), {{FatbinImageKind::Cubin, 72, sm75.bytes}})),
               "not an architecture CUDA 13 supports"));
  // fatbinary itself checks that a cubin is for the architecture it is filed under.
  std::string message =
      errorMessage(createFatbinary(toolkit(), {{FatbinImageKind::Cubin, 80, sm75.bytes}}));
  EXPECT_TRUE(contains(message, "fatbinary failed")) << message;
  EXPECT_TRUE(contains(message, "elf arch does not match")) << message;
}

TEST(FatbinReader, ReadsWhatNvccMakes) {
  // A third-party producer: nvcc's default fat binary (compressed PTX).
  llvm::Expected<support::TemporaryDirectory> directory =
      support::TemporaryDirectory::create("kiln-test-nvcc");
  KILN_ASSERT_OK(directory);
  llvm::Expected<std::string> nvcc = toolkit().require(ToolkitComponent::Nvcc);
  KILN_ASSERT_OK(nvcc);
  llvm::Expected<support::ToolOutput> output = support::runTool(
      *nvcc, {"-fatbin", "-rdc=true", "-gencode", "arch=compute_80,code=[sm_80,compute_80]",
              "-gencode", "arch=compute_100,code=sm_100", testing::dataPath("scale_helper.cu"),
              "-o", directory->file("helper.fatbin")});
  KILN_ASSERT_OK(output);
  ASSERT_EQ(output->exitCode, 0) << output->standardError;
  llvm::Expected<std::string> fatbin = directory->read("helper.fatbin");
  KILN_ASSERT_OK(fatbin);
  llvm::Expected<std::vector<FatbinEntry>> entries = readFatbin(*fatbin);
  KILN_ASSERT_OK(entries);
  std::vector<std::string> labels;
  for (const FatbinEntry &entry : *entries)
    labels.push_back(entry.label());
  llvm::sort(labels);
  EXPECT_EQ(labels, (std::vector<std::string>{"compute_80 PTX", "sm_100 cubin", "sm_80 cubin"}));
}

} // namespace
} // namespace kiln::cuda_tools
