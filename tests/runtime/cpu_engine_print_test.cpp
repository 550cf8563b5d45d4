//===- tests/runtime/cpu_engine_print_test.cpp - print() in kernels -------===//
//
// print() formats items as Numba's CUDA printimpl does (%lld, %llu, %f,
// True/False, strings), one whole line per call, flushed by the launch.
//
//===----------------------------------------------------------------------===//

#include "runtime/cpu_engine/print_output.h"
#include "tests/runtime/kernel_helpers.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>
#include <sstream>
#include <vector>

namespace kiln::cpu_engine::test {
namespace {

KilnPrintItem intItem(int64_t value) {
  KilnPrintItem item{};
  item.kind = KILN_PRINT_INT64;
  item.value.i64 = value;
  return item;
}

KilnPrintItem uintItem(uint64_t value) {
  KilnPrintItem item{};
  item.kind = KILN_PRINT_UINT64;
  item.value.u64 = value;
  return item;
}

KilnPrintItem floatItem(double value) {
  KilnPrintItem item{};
  item.kind = KILN_PRINT_FLOAT64;
  item.value.f64 = value;
  return item;
}

KilnPrintItem boolItem(bool value) {
  KilnPrintItem item{};
  item.kind = KILN_PRINT_BOOL;
  item.value.i64 = value;
  return item;
}

KilnPrintItem stringItem(const char *value) {
  KilnPrintItem item{};
  item.kind = KILN_PRINT_STRING;
  item.value.string = value;
  return item;
}

KilnPrintItem noneItem() {
  KilnPrintItem item{};
  item.kind = KILN_PRINT_NONE;
  return item;
}

KilnPrintItem complexItem(double real, double imag) {
  KilnPrintItem item{};
  item.kind = KILN_PRINT_COMPLEX128;
  item.value.f64 = real;
  item.imag = imag;
  return item;
}

std::string line(std::vector<KilnPrintItem> items) {
  return formatPrintLine(items.data(), uint32_t(items.size()));
}

TEST(PrintFormat, Integers) {
  EXPECT_EQ(line({intItem(42), intItem(-5), intItem(0)}), "42 -5 0\n");
  EXPECT_EQ(line({intItem(std::numeric_limits<int64_t>::min())}), "-9223372036854775808\n");
  EXPECT_EQ(line({uintItem(std::numeric_limits<uint64_t>::max())}), "18446744073709551615\n");
}

TEST(PrintFormat, FloatsUsePercentF) {
  EXPECT_EQ(line({floatItem(1.5), floatItem(-0.25), floatItem(1.0 / 3)}),
            "1.500000 -0.250000 0.333333\n");
  EXPECT_EQ(line({floatItem(1e20)}), "100000000000000000000.000000\n");
  EXPECT_EQ(line({floatItem(1e-7), floatItem(-0.0)}), "0.000000 -0.000000\n");
  EXPECT_EQ(line({floatItem(INFINITY), floatItem(-INFINITY)}), "inf -inf\n");
  EXPECT_EQ(line({floatItem(1e300)}).size(), 301u + 7 + 1);
}

TEST(PrintFormat, BooleansStringsNone) {
  EXPECT_EQ(line({boolItem(true), boolItem(false)}), "True False\n");
  EXPECT_EQ(line({stringItem("i ="), intItem(3), stringItem("done")}), "i = 3 done\n");
  EXPECT_EQ(line({noneItem()}), "None\n");
  EXPECT_EQ(line({}), "\n");
}

TEST(PrintFormat, ComplexAsTheGpuTargetPrintsIt) {
  EXPECT_EQ(line({complexItem(1, -2), complexItem(0.5, 0)}),
            "(1.000000-2.000000j) (0.500000+0.000000j)\n");
  EXPECT_EQ(line({complexItem(-0.0, -0.0), complexItem(0, INFINITY)}),
            "(-0.000000-0.000000j) (0.000000+infj)\n");
}

/// An engine whose print() goes to a temporary file.
class PrintCapture {
public:
  PrintCapture() : file(std::tmpfile()) {
    EngineOptions options;
    options.printStream = file;
    engine = std::make_unique<Engine>(options);
  }
  ~PrintCapture() { std::fclose(file); }

  /// Everything printed so far; the launch has flushed it.
  std::string text() const {
    std::string contents;
    std::rewind(file);
    char buffer[4096];
    size_t n;
    while ((n = std::fread(buffer, 1, sizeof buffer, file)) > 0)
      contents.append(buffer, n);
    return contents;
  }

  std::FILE *file;
  std::unique_ptr<Engine> engine;
};

// print("thread", i, cuda.threadIdx.x * 0.5, i % 2 == 0, None)
extern "C" void printThread(KilnCpuThread *t, void *const *) {
  int64_t i = globalId(t);
  KilnPrintItem items[] = {stringItem("thread"), intItem(i), floatItem(t->threadIdx[0] * 0.5),
                           boolItem(i % 2 == 0), noneItem()};
  t->services->print(t, items, 5);
}

extern "C" void printBlock(KilnCpuThread *t, void *const *args) {
  forEachThread(t, args, printThread);
}

TEST(PrintOutput, OneLineFromAKernel) {
  PrintCapture capture;
  ASSERT_EQ(outcome(capture.engine->launch(blockKernel(printThread, printBlock, "p"),
                                           config1d(1, 1), nullptr)),
            "ok");
  EXPECT_EQ(capture.text(), "thread 0 0.000000 True None\n");
}

TEST(PrintOutput, LinesNeverInterleave) {
  PrintCapture capture;
  constexpr uint32_t blocks = 16, threads = 128;
  ASSERT_EQ(outcome(capture.engine->launch(threadKernel(printThread, "p"),
                                           config1d(blocks, threads), nullptr)),
            "ok");
  ASSERT_EQ(outcome(capture.engine->launch(blockKernel(printThread, printBlock, "p"),
                                           config1d(blocks, threads), nullptr)),
            "ok");
  std::istringstream lines(capture.text());
  std::map<std::string, int> seen;
  std::string text;
  while (std::getline(lines, text))
    ++seen[text];
  ASSERT_EQ(seen.size(), size_t(blocks) * threads);
  for (int64_t i = 0; i < blocks * threads; ++i) {
    std::ostringstream expected;
    char half[32];
    std::snprintf(half, sizeof half, "%f", double(i % threads) * 0.5);
    expected << "thread " << i << " " << half << " " << (i % 2 == 0 ? "True" : "False") << " None";
    EXPECT_EQ(seen[expected.str()], 2) << expected.str();
  }
}

} // namespace
} // namespace kiln::cpu_engine::test
