//===- tests/backend/ptxas_test.cpp - Assembling PTX with ptxas -----------===//
//
// The hand-written kernel of data/block_sum.ptx (a loop, shared memory, an
// atomic) assembled for every CUDA 13 architecture, resource usage read from
// ptxas -v, ptxas errors as structured errors, and the option handling.
//
//===----------------------------------------------------------------------===//

#include "backend/cuda_tools/cuda_archs.h"
#include "backend/cuda_tools/cuda_source.h"
#include "backend/cuda_tools/ptxas.h"
#include "tests/backend/test_support.h"

#include <gtest/gtest.h>

namespace kiln::cuda_tools {
namespace {

using testing::errorMessage;
using testing::readData;
using testing::toolkit;
using testing::withTarget;

bool contains(const std::string &text, llvm::StringRef part) {
  return llvm::StringRef(text).contains(part);
}

/// The architecture recorded in a cubin's ELF header (EF_CUDA_SM, bits 8-15
/// of e_flags), as ptxas 13 writes it for every architecture.
unsigned cubinArch(llvm::StringRef cubin) {
  return (testing::cubinElfFlags(cubin) >> 8) & 0xff;
}

class PtxasForEveryArch : public ::testing::TestWithParam<unsigned> {};

TEST_P(PtxasForEveryArch, AssemblesBlockSumAndReportsItsResources) {
  unsigned arch = GetParam();
  // sm_75..sm_90 from PTX of their own target (sm_88 from sm_87), newer
  // architectures from sm_90 PTX.
  unsigned target = ptxTargetForCubin(arch);
  EXPECT_EQ(target, arch > 90 ? 90u : arch == 88 ? 87u : arch);
  std::string ptx = withTarget(readData("block_sum.ptx"), target);
  ASSERT_TRUE(contains(ptx, "\n.target sm_" + std::to_string(target) + "\n"));

  llvm::Expected<AssembledCubin> result = assemblePtx(toolkit(), ptx, arch);
  KILN_ASSERT_OK(result);
  ASSERT_TRUE(llvm::StringRef(result->cubin)
                  .starts_with("\x7f"
                               "ELF"));
  EXPECT_EQ(cubinArch(result->cubin), arch);
  EXPECT_TRUE(result->warnings.empty());

  const FunctionResources *kernel = result->usage.function("block_sum");
  ASSERT_NE(kernel, nullptr);
  EXPECT_TRUE(kernel->isKernel);
  EXPECT_GT(kernel->registers, 4u);
  EXPECT_LE(kernel->registers, 32u);
  EXPECT_EQ(kernel->barriers, 1u);
  EXPECT_EQ(kernel->sharedMemoryBytes, 1024u);
  EXPECT_EQ(kernel->stackFrameBytes, 0u);
  EXPECT_EQ(kernel->spillStoreBytes, 0u);
  EXPECT_EQ(kernel->spillLoadBytes, 0u);
  if (arch < 90) {
    // Before sm_90, ptxas reports the parameter bank and __constant__ data.
    EXPECT_GT(kernel->constantMemoryBytes.at(0), 0u);
    EXPECT_EQ(result->usage.constantMemoryBytes.at(3), 4u);
  }
}

INSTANTIATE_TEST_SUITE_P(Cuda13, PtxasForEveryArch, ::testing::ValuesIn(cudaArchitectures()),
                         [](const ::testing::TestParamInfo<unsigned> &test) {
                           return "sm_" + std::to_string(test.param);
                         });

TEST(Ptxas, Sm90PtxAssemblesForEveryNewerArchitecture) {
  std::string ptx = withTarget(readData("block_sum.ptx"), 90);
  for (unsigned arch : {100u, 103u, 110u, 120u, 121u}) {
    llvm::Expected<AssembledCubin> result = assemblePtx(toolkit(), ptx, arch);
    KILN_ASSERT_OK(result);
    EXPECT_EQ(cubinArch(result->cubin), arch);
  }
}

TEST(Ptxas, Llvm19PtxForSm90AssemblesForEveryNewerArchitecture) {
  // PTX as LLVM 19's NVPTX back end writes it (comments before .version).
  std::string ptx = readData("llvm19_kernel.sm_90.ptx");
  for (unsigned arch : {90u, 100u, 103u, 110u, 120u, 121u}) {
    llvm::Expected<AssembledCubin> result = assemblePtx(toolkit(), ptx, arch);
    KILN_ASSERT_OK(result);
    EXPECT_EQ(cubinArch(result->cubin), arch);
    const FunctionResources *kernel = result->usage.function("kern");
    ASSERT_NE(kernel, nullptr);
    EXPECT_EQ(kernel->sharedMemoryBytes, 1024u);
  }
}

TEST(Ptxas, PtxForANewerTargetIsRefused) {
  std::string message =
      errorMessage(assemblePtx(toolkit(), withTarget(readData("block_sum.ptx"), 90), 80));
  EXPECT_TRUE(contains(message, "cannot assemble PTX for sm_80: its .target is sm_90")) << message;
}

TEST(Ptxas, ArchitecturesOutsideCuda13AreRefused) {
  std::string message = errorMessage(assemblePtx(toolkit(), readData("block_sum.ptx"), 70));
  EXPECT_TRUE(contains(message, "sm_70: not an architecture CUDA 13 supports")) << message;
}

TEST(Ptxas, SyntaxErrorsBecomeAStructuredError) {
  std::string ptx = withTarget(readData("block_sum.ptx"), 80);
  // Break one instruction: ptxas reports the line.
  size_t at = ptx.find("add.f32 \t%f1, %f1, %f2;");
  ASSERT_NE(at, std::string::npos);
  ptx.replace(at, 3, "adx");
  unsigned line = 1 + std::count(ptx.begin(), ptx.begin() + at, '\n');

  llvm::Expected<AssembledCubin> result = assemblePtx(toolkit(), ptx, 80);
  ASSERT_FALSE(static_cast<bool>(result));
  bool sawToolError = false;
  llvm::Error rest = llvm::handleErrors(result.takeError(), [&](const CudaToolError &error) {
    sawToolError = true;
    EXPECT_EQ(error.tool(), "ptxas");
    EXPECT_EQ(error.arch(), 80u);
    std::vector<const ToolMessage *> explained = error.explanation();
    ASSERT_FALSE(explained.empty());
    EXPECT_EQ(explained.front()->severity, ToolSeverity::Error);
    EXPECT_EQ(explained.front()->line, line);
    EXPECT_TRUE(contains(explained.front()->message, "adx")) << explained.front()->message;
    EXPECT_EQ(explained.front()->sourceLine, "adx.f32 \t%f1, %f1, %f2;");
    EXPECT_TRUE(explained.front()->input.empty()); // not the temporary file's name
    // "Ptx assembly aborted due to errors" adds nothing and is dropped.
    for (const ToolMessage &message : error.messages())
      EXPECT_FALSE(contains(message.message, "aborted")) << message.message;

    std::string rendered;
    llvm::raw_string_ostream(rendered) << error.message();
    EXPECT_TRUE(llvm::StringRef(rendered).starts_with("ptxas failed for sm_80 (exit status 255):\n"
                                                      "  line " +
                                                      std::to_string(line) + ": error: "))
        << rendered;
    EXPECT_FALSE(contains(rendered, "kiln-ptxas")) << rendered;
    EXPECT_FALSE(contains(rendered, "kernel.ptx")) << rendered;
  });
  EXPECT_FALSE(static_cast<bool>(rest)) << llvm::toString(std::move(rest));
  EXPECT_TRUE(sawToolError);
}

TEST(Ptxas, ErrorsWithoutALineAreKept) {
  // Too much shared memory: ptxas names the function, not a line.
  std::string ptx = withTarget(readData("block_sum.ptx"), 80);
  size_t at = ptx.find("partial[1024]");
  ASSERT_NE(at, std::string::npos);
  ptx.replace(at, 13, "partial[262144]");
  std::string message = errorMessage(assemblePtx(toolkit(), ptx, 80));
  EXPECT_TRUE(contains(message, "ptxas failed for sm_80")) << message;
  EXPECT_TRUE(contains(message, "shared")) << message;
}

TEST(Ptxas, MalformedPtxIsRefusedBeforeRunningPtxas) {
  std::string message = errorMessage(assemblePtx(toolkit(), "// nothing here\n", 80));
  EXPECT_TRUE(contains(message, "does not start with a .version directive")) << message;
}

TEST(Ptxas, OptionsBecomeFlags) {
  PtxasOptions options;
  EXPECT_EQ(ptxasFlags(options), (std::vector<std::string>{"-O3"}));
  options.optimizationLevel = 1;
  options.maxRegisters = 64;
  options.lineInfo = true;
  options.extraFlags = {"--warn-on-spills", "-dlcm=ca"};
  EXPECT_EQ(ptxasFlags(options), (std::vector<std::string>{"-O1", "--maxrregcount=64", "-lineinfo",
                                                           "--warn-on-spills", "-dlcm=ca"}));
  options.debug = true; // -g implies -O0 and carries line information itself
  EXPECT_EQ(ptxasFlags(options), (std::vector<std::string>{"-O0", "--maxrregcount=64", "-g",
                                                           "--warn-on-spills", "-dlcm=ca"}));
}

TEST(Ptxas, InvalidOptionsAreRefused) {
  PtxasOptions options;
  options.optimizationLevel = 4;
  EXPECT_TRUE(contains(errorMessage(validatePtxasOptions(options)), "optimisation level 4"));
  options = {};
  options.maxRegisters = 8;
  EXPECT_TRUE(contains(errorMessage(validatePtxasOptions(options)), "8 registers"));
  for (llvm::StringRef flag : {"-o", "--output-file=x", "-arch=sm_80", "--gpu-name", "-m32"}) {
    options = {};
    options.extraFlags = {flag.str()};
    EXPECT_TRUE(contains(errorMessage(validatePtxasOptions(options)), "cannot be passed through"))
        << flag.str();
  }
  options = {};
  options.extraFlags = {"warn-on-spills"};
  EXPECT_TRUE(contains(errorMessage(validatePtxasOptions(options)), "does not start with '-'"));
  EXPECT_FALSE(
      errorMessage(assemblePtx(toolkit(), readData("block_sum.ptx"), 90, options)).empty());
}

TEST(Ptxas, UnknownPassThroughFlagsAreReportedByPtxas) {
  PtxasOptions options;
  options.extraFlags = {"--no-such-ptxas-option"};
  std::string message =
      errorMessage(assemblePtx(toolkit(), readData("block_sum.ptx"), 90, options));
  EXPECT_TRUE(contains(message, "ptxas failed for sm_90")) << message;
  EXPECT_TRUE(contains(message, "Unknown option")) << message;
}

TEST(Ptxas, DebugLineInfoAndRegisterLimitsAssemble) {
  std::string ptx = readData("block_sum.ptx");
  for (PtxasOptions options :
       {PtxasOptions{0, 0, false, true, {}}, PtxasOptions{2, 32, true, false, {}},
        PtxasOptions{3, 0, false, false, {"-dlcm=cg"}}}) {
    llvm::Expected<AssembledCubin> result = assemblePtx(toolkit(), ptx, 90, options);
    KILN_ASSERT_OK(result);
    EXPECT_NE(result->usage.function("block_sum"), nullptr);
  }
}

TEST(Ptxas, CubinsAreReproducibleEvenWithDebugInformation) {
  // With -g ptxas records its command line, file names included, in the cubin.
  std::string ptx = readData("block_sum.ptx");
  PtxasOptions debug;
  debug.debug = true;
  for (const PtxasOptions &options : {PtxasOptions{}, debug}) {
    llvm::Expected<AssembledCubin> first = assemblePtx(toolkit(), ptx, 90, options);
    llvm::Expected<AssembledCubin> second = assemblePtx(toolkit(), ptx, 90, options);
    KILN_ASSERT_OK(first);
    KILN_ASSERT_OK(second);
    EXPECT_TRUE(first->cubin == second->cubin) << "debug " << options.debug;
  }
}

TEST(Ptxas, SpillsAreReportedWhenRegistersAreLimited) {
  llvm::Expected<LinkInput> ptx = compileCudaSource(
      toolkit(), testing::dataPath("register_pressure.cu"), 80, CudaSourceOutput::Ptx);
  KILN_ASSERT_OK(ptx);
  PtxasOptions options;
  options.maxRegisters = 24;
  options.extraFlags = {"--warn-on-spills"};
  llvm::Expected<AssembledCubin> result = assemblePtx(toolkit(), ptx->data, 80, options);
  KILN_ASSERT_OK(result);
  const FunctionResources *kernel = result->usage.function("register_pressure");
  ASSERT_NE(kernel, nullptr);
  EXPECT_EQ(kernel->registers, 24u);
  EXPECT_GT(kernel->spillStoreBytes, 0u);
  EXPECT_GT(kernel->spillLoadBytes, 0u);
  EXPECT_GT(kernel->stackFrameBytes, 0u);
  EXPECT_GE(kernel->cumulativeStackBytes, kernel->stackFrameBytes);
  ASSERT_EQ(result->warnings.size(), 1u);
  EXPECT_TRUE(contains(result->warnings[0].message,
                       "Registers are spilled to local memory in function 'register_pressure'"))
      << result->warnings[0].message;

  // Without the limit, no spills.
  result = assemblePtx(toolkit(), ptx->data, 80);
  KILN_ASSERT_OK(result);
  EXPECT_EQ(result->usage.function("register_pressure")->spillStoreBytes, 0u);
  EXPECT_GT(result->usage.function("register_pressure")->registers, 24u);
}

} // namespace
} // namespace kiln::cuda_tools
