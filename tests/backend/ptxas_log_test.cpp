//===- tests/backend/ptxas_log_test.cpp - Reading ptxas and nvJitLink logs ===//
//
// Output captured from ptxas 13.0 and nvJitLink 13.0, parsed into messages
// and resource usage.
//
//===----------------------------------------------------------------------===//

#include "backend/cuda_tools/ptxas_log.h"

#include <gtest/gtest.h>

namespace kiln::cuda_tools {
namespace {

// ptxas -arch=sm_80 -v --maxrregcount=24 --warn-on-spills (nvcc-generated PTX).
constexpr llvm::StringLiteral kPtxasVerbose =
    "ptxas info    : Overriding maximum register limit 256 for 'uses_table' with  24 of "
    "maxrregcount option\n"
    "ptxas warning : Registers are spilled to local memory in function 'heavy', 456 bytes spill "
    "stores, 480 bytes spill loads\n"
    "ptxas info    : 0 bytes gmem, 1024 bytes cmem[3]\n"
    "ptxas info    : Compiling entry function 'uses_table' for 'sm_80'\n"
    "ptxas info    : Function properties for uses_table\n"
    "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
    "ptxas info    : Used 8 registers, used 0 barriers, 360 bytes cmem[0]\n"
    "ptxas info    : Compile time = 1.504 ms\n"
    "ptxas info    : Compiling entry function 'heavy' for 'sm_80'\n"
    "ptxas info    : Function properties for heavy\n"
    "    232 bytes stack frame, 456 bytes spill stores, 480 bytes spill loads\n"
    "ptxas info    : Used 24 registers, used 0 barriers, 232 bytes cumulative stack size, 364 "
    "bytes cmem[0]\n"
    "ptxas info    : Compile time = 20.549 ms\n"
    "ptxas info    : Function properties for _Z3devPfi\n"
    "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n";

TEST(PtxasLog, ResourceUsageOfEachFunction) {
  ToolLog log = parsePtxasLog(kPtxasVerbose);
  EXPECT_EQ(log.usage.globalMemoryBytes, 0u);
  EXPECT_EQ(log.usage.constantMemoryBytes, (std::map<unsigned, uint64_t>{{3, 1024}}));
  ASSERT_EQ(log.usage.functions.size(), 3u);

  const FunctionResources &table = log.usage.functions[0];
  EXPECT_EQ(table.name, "uses_table");
  EXPECT_TRUE(table.isKernel);
  EXPECT_EQ(table.registers, 8u);
  EXPECT_EQ(table.constantMemoryBytes, (std::map<unsigned, uint64_t>{{0, 360}}));

  const FunctionResources *heavy = log.usage.function("heavy");
  ASSERT_NE(heavy, nullptr);
  EXPECT_TRUE(heavy->isKernel);
  EXPECT_EQ(heavy->registers, 24u);
  EXPECT_EQ(heavy->barriers, 0u);
  EXPECT_EQ(heavy->stackFrameBytes, 232u);
  EXPECT_EQ(heavy->spillStoreBytes, 456u);
  EXPECT_EQ(heavy->spillLoadBytes, 480u);
  EXPECT_EQ(heavy->cumulativeStackBytes, 232u);
  EXPECT_EQ(heavy->constantMemoryBytes.at(0), 364u);

  const FunctionResources *device = log.usage.function("_Z3devPfi");
  ASSERT_NE(device, nullptr);
  EXPECT_FALSE(device->isKernel);
  EXPECT_EQ(device->registers, 0u);

  ASSERT_EQ(log.messages.size(), 1u);
  EXPECT_EQ(log.messages[0].severity, ToolSeverity::Warning);
  EXPECT_EQ(log.messages[0].line, 0u);
  EXPECT_FALSE(log.hasErrors());
}

TEST(PtxasLog, SharedMemoryBarriersAndOtherCounts) {
  ToolLog log = parsePtxasLog(
      "ptxas info    : Compiling entry function 'k' for 'sm_75'\n"
      "ptxas info    : Function properties for k\n"
      "    16 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
      "ptxas info    : Used 10 registers, used 1 barriers, 1024 bytes smem, 372 bytes cmem[0], "
      "8 bytes cmem[2], 32 bytes lmem, 2 textures, 1 samplers, 3 surfaces\n");
  const FunctionResources *k = log.usage.function("k");
  ASSERT_NE(k, nullptr);
  EXPECT_EQ(k->registers, 10u);
  EXPECT_EQ(k->barriers, 1u);
  EXPECT_EQ(k->sharedMemoryBytes, 1024u);
  EXPECT_EQ(k->localMemoryBytes, 32u);
  EXPECT_EQ(k->stackFrameBytes, 16u);
  EXPECT_EQ(k->constantMemoryBytes, (std::map<unsigned, uint64_t>{{0, 372}, {2, 8}}));
  EXPECT_EQ(k->textures, 2u);
  EXPECT_EQ(k->samplers, 1u);
  EXPECT_EQ(k->surfaces, 3u);
}

TEST(PtxasLog, ErrorsWithAndWithoutLines) {
  ToolLog log = parsePtxasLog("ptxas /tmp/kiln-ptxas-a1b2c3/kernel.ptx, line 11; error   : "
                              "Arguments mismatch for instruction 'mul.wide'\n"
                              "ptxas /tmp/kiln-ptxas-a1b2c3/kernel.ptx, line 12; warning : "
                              "Double is not supported. Demoting to float\n"
                              "ptxas fatal   : Ptx assembly aborted due to errors\n");
  ASSERT_EQ(log.messages.size(), 2u);
  EXPECT_TRUE(log.hasErrors());
  EXPECT_EQ(log.messages[0].severity, ToolSeverity::Error);
  EXPECT_EQ(log.messages[0].line, 11u);
  EXPECT_EQ(log.messages[0].input, "/tmp/kiln-ptxas-a1b2c3/kernel.ptx");
  EXPECT_EQ(log.messages[0].message, "Arguments mismatch for instruction 'mul.wide'");
  EXPECT_EQ(log.messages[1].severity, ToolSeverity::Warning);
  EXPECT_EQ(log.messages[1].line, 12u);

  // A fatal error alone is kept: it is the explanation.
  log = parsePtxasLog("ptxas fatal   : Unresolved extern function 'f'\n");
  ASSERT_EQ(log.messages.size(), 1u);
  EXPECT_EQ(log.messages[0].severity, ToolSeverity::Fatal);
  EXPECT_EQ(log.messages[0].message, "Unresolved extern function 'f'");
}

TEST(PtxasLog, NvJitLinkLogs) {
  // nvJitLink -verbose: ptxas's report, then the linker's own summary.
  ToolLog info = parsePtxasLog(
      "ptxas info    : 0 bytes gmem\n"
      "ptxas info    : Compiling entry function 'scale_kernel' for 'sm_100'\n"
      "ptxas info    : Function properties for scale_kernel\n"
      "ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
      "ptxas info    : Used 24 registers, used 0 barriers\n"
      "ptxas info    : Compile time = 9.084 ms\n"
      "info    : 0 bytes gmem\n"
      "info    : Function properties for 'scale_kernel':\n"
      "info    : used 26 registers, used 0 barriers, 8 stack, 0 bytes smem, 0 bytes lmem\n");
  EXPECT_TRUE(info.messages.empty());
  ASSERT_EQ(info.usage.functions.size(), 1u);
  EXPECT_EQ(info.usage.functions[0].name, "scale_kernel");
  EXPECT_TRUE(info.usage.functions[0].isKernel);
  EXPECT_EQ(info.usage.functions[0].registers, 26u); // the linked function's
  EXPECT_EQ(info.usage.functions[0].cumulativeStackBytes, 8u);

  ToolLog error = parsePtxasLog(
      "Mercury or Capmerc target was requested, but SASS input helper.cubin was found.\n"
      "error   : Undefined reference to 'kiln_test_scale' in 'kernels.ptx'\n"
      "ERROR 9: finish\n");
  ASSERT_EQ(error.messages.size(), 3u);
  EXPECT_EQ(error.messages[0].severity, ToolSeverity::Note);
  EXPECT_EQ(error.messages[1].severity, ToolSeverity::Error);
  EXPECT_EQ(error.messages[1].message, "Undefined reference to 'kiln_test_scale' in 'kernels.ptx'");
}

TEST(PtxasLog, SourceLinesAreAttached) {
  std::vector<ToolMessage> messages(2);
  messages[0].line = 2;
  messages[1].line = 9;
  attachSourceLines(messages, ".version 7.8\n\t  add.s32 %r1, %r2;  \n");
  EXPECT_EQ(messages[0].sourceLine, "add.s32 %r1, %r2;");
  EXPECT_EQ(messages[1].sourceLine, "");
}

TEST(CudaToolError, RendersErrorsWithTheirLines) {
  std::vector<ToolMessage> messages(3);
  messages[0] = {ToolSeverity::Warning, 3, "", "something odd", ""};
  messages[1] = {ToolSeverity::Error, 11, "", "Unknown symbol '%rd1'",
                 "mul.wide.u32 %rd1, %r2, 4;"};
  messages[2] = {ToolSeverity::Fatal, 0, "", "giving up", ""};
  llvm::Error error = llvm::make_error<CudaToolError>("ptxas", 80, "exit status 255", messages);
  EXPECT_EQ(llvm::toString(std::move(error)), "ptxas failed for sm_80 (exit status 255):\n"
                                              "  line 11: error: Unknown symbol '%rd1'\n"
                                              "      mul.wide.u32 %rd1, %r2, 4;\n"
                                              "  fatal error: giving up");

  // Without errors, every message explains.
  error = llvm::make_error<CudaToolError>("nvJitLink", 90, "linking failed",
                                          std::vector<ToolMessage>{messages[0]});
  EXPECT_EQ(llvm::toString(std::move(error)),
            "nvJitLink failed for sm_90 (linking failed):\n  line 3: warning: something odd");
}

} // namespace
} // namespace kiln::cuda_tools
