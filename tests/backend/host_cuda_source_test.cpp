//===- tests/backend/host_cuda_source_test.cpp ----------------------------===//
//
// CUDA C/C++ link files compiled for the CPU engine with the real clang:
// the functions a file defines become callable and link into a kernel's
// module, internal to it; a file that does not compile, or a function no
// file defines, is a reason the call gives when it runs, never an error of
// the build.
//
//===----------------------------------------------------------------------===//

#include "backend/codegen/target_machines.h"
#include "backend/host/host_cuda_source.h"
#include "support/temporary_directory.h"
#include "tests/backend/llvm_ir_testing.h"

#include <llvm/IR/Function.h>

#include <string>

namespace {

using kiln::backend::HostCudaCode;
using kiln::backend::HostCudaSourceOptions;
using kiln::testing::contains;
using kiln::testing::isValidAfter;
using kiln::testing::parseTestIR;

constexpr const char *functionsCu = R"(
#include <helpers.cuh>
extern "C" __device__ __forceinline__ int twice(float *result, float x) {
  *result = scale(x);
  return 0;
}
extern "C" __device__ int unused(int *result) {
  *result = (int)sizeof(size_t);
  return 0;
}
)";

constexpr const char *gpuOnlyCu = R"(
extern "C" __device__ int lane(int *result) {
  *result = threadIdx.x;
  return 0;
}
)";

constexpr const char *kernel = R"(
declare i32 @twice(ptr, float)

define float @kernel(float %x) {
  %slot = alloca float
  %status = call i32 @twice(ptr %slot, float %x)
  %value = load float, ptr %slot
  ret float %value
}
)";

class HostCudaSource : public ::testing::Test {
protected:
  void SetUp() override {
    llvm::Expected<kiln::support::TemporaryDirectory> made =
        kiln::support::TemporaryDirectory::create("kiln-host-cu-test");
    ASSERT_TRUE(bool(made)) << llvm::toString(made.takeError());
    folder.emplace(std::move(*made));
    ASSERT_FALSE(bool(folder->write("functions.cu", functionsCu)));
    ASSERT_FALSE(bool(folder->write("gpu_only.cu", gpuOnlyCu)));
    ASSERT_FALSE(bool(
        folder->write("helpers.cuh", "__device__ inline float scale(float x) { return 2 * x; }")));
    withHeaders = kiln::backend::findHostCudaTools({folder->path()});
    withoutHeaders = kiln::backend::findHostCudaTools({});
  }

  std::optional<kiln::support::TemporaryDirectory> folder;
  HostCudaSourceOptions withHeaders;
  HostCudaSourceOptions withoutHeaders;
  llvm::LLVMContext context;
};

TEST_F(HostCudaSource, DefinedFunctionsAreCallableAndLinkInternalToTheKernel) {
  HostCudaCode code = HostCudaCode::compile({folder->file("functions.cu")}, withHeaders,
                                            kiln::backend::hostTriple(), context);
  EXPECT_EQ(code.callProblem("twice"), std::nullopt);
  std::optional<std::string> missing = code.callProblem("thrice");
  ASSERT_TRUE(missing.has_value()) << "a function no file defines cannot be called";
  EXPECT_TRUE(contains(*missing, "none of functions.cu defines it")) << *missing;

  std::unique_ptr<llvm::Module> module = parseTestIR(kernel, context);
  ASSERT_TRUE(module);
  ASSERT_FALSE(bool(code.linkInto(*module)));
  ASSERT_TRUE(isValidAfter(*module, "linking the host code of functions.cu"));
  const llvm::Function *twice = module->getFunction("twice");
  ASSERT_TRUE(twice && !twice->isDeclaration()) << "the kernel must take in the function it calls";
  EXPECT_TRUE(twice->hasInternalLinkage())
      << "each kernel's copy is internal, so that kernels calling one file link together";
  EXPECT_EQ(module->getFunction("unused"), nullptr) << "only what the kernel calls is linked";
}

TEST_F(HostCudaSource, AFunctionOfOneFileCallsOneOfAnother) {
  ASSERT_FALSE(bool(folder->write("times4.cu", R"(
extern "C" __device__ int twice(float *result, float x);
extern "C" __device__ int times4(float *result, float x) {
  float doubled;
  twice(&doubled, x);
  *result = 2 * doubled;
  return 0;
})")));
  HostCudaCode code =
      HostCudaCode::compile({folder->file("times4.cu"), folder->file("functions.cu")}, withHeaders,
                            kiln::backend::hostTriple(), context);
  std::unique_ptr<llvm::Module> module = parseTestIR(R"(
declare i32 @times4(ptr, float)

define i32 @kernel(ptr %out, float %x) {
  %status = call i32 @times4(ptr %out, float %x)
  ret i32 %status
}
)",
                                                     context);
  ASSERT_TRUE(module);
  ASSERT_FALSE(bool(code.linkInto(*module)));
  ASSERT_TRUE(isValidAfter(*module, "linking two files"));
  const llvm::Function *twice = module->getFunction("twice");
  EXPECT_TRUE(twice && !twice->isDeclaration())
      << "the function times4 calls, from the other file, comes along";
}

TEST_F(HostCudaSource, AFileThatDoesNotCompileForTheHostIsTheReasonItsCallsGive) {
  HostCudaCode code =
      HostCudaCode::compile({folder->file("gpu_only.cu"), folder->file("device.ptx")},
                            withoutHeaders, kiln::backend::hostTriple(), context);
  std::optional<std::string> problem = code.callProblem("lane");
  ASSERT_TRUE(problem.has_value());
  EXPECT_TRUE(contains(*problem, "'gpu_only.cu' does not compile for the CPU engine")) << *problem;
  EXPECT_TRUE(contains(*problem, "threadIdx")) << "clang's first error says why: " << *problem;
}

TEST_F(HostCudaSource, AMissingHeaderIsNamedWithoutItsIncludeFolder) {
  HostCudaCode code = HostCudaCode::compile({folder->file("functions.cu")}, withoutHeaders,
                                            kiln::backend::hostTriple(), context);
  std::optional<std::string> problem = code.callProblem("twice");
  ASSERT_TRUE(problem.has_value());
  EXPECT_TRUE(contains(*problem, "helpers.cuh")) << *problem;
}

TEST_F(HostCudaSource, FilesOfGpuCodeOnlyLeaveTheirFunctionsToTheGpu) {
  HostCudaCode code = HostCudaCode::compile({folder->file("device.ptx")}, withoutHeaders,
                                            kiln::backend::hostTriple(), context);
  std::optional<std::string> problem = code.callProblem("f");
  ASSERT_TRUE(problem.has_value());
  EXPECT_TRUE(contains(*problem, "only a GPU runs")) << *problem;
}

} // namespace

TEST_F(HostCudaSource, EachFileIsCompiledOncePerBuildForEveryKernelThatLinksIt) {
  // Two kernels' modules, each in its own context, as a build compiles them.
  llvm::LLVMContext otherContext;
  HostCudaCode first = HostCudaCode::compile({folder->file("functions.cu")}, withHeaders,
                                             kiln::backend::hostTriple(), context);
  ASSERT_FALSE(bool(folder->write("functions.cu", "this is not C++")));
  HostCudaCode second = HostCudaCode::compile({folder->file("functions.cu")}, withHeaders,
                                              kiln::backend::hostTriple(), otherContext);
  EXPECT_EQ(second.callProblem("twice"), std::nullopt)
      << "the second kernel must reuse the bitcode the build already made of the file";

  unsigned compiled = 0;
  kiln::backend::HostCudaBitcode bitcode;
  auto failing = [&](const std::string &) -> llvm::Expected<std::string> {
    ++compiled;
    return llvm::createStringError("no clang");
  };
  for (int i = 0; i < 2; ++i) {
    llvm::Expected<std::string> made = bitcode.get("some.cu", failing);
    ASSERT_FALSE(bool(made));
    EXPECT_EQ(llvm::toString(made.takeError()), "no clang")
        << "a failure is remembered with its reason";
  }
  EXPECT_EQ(compiled, 1u) << "a file that failed once is not compiled again in the same build";
}
