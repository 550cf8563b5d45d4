//===- tests/backend/nvjitlink_test.cpp - Linking with nvJitLink ----------===//
//
// Kiln's PTX (data/scale_caller.ptx) calls a device function written in CUDA
// C++ (data/scale_helper.cu); nvcc compiles the helper and nvJitLink links
// both into a cubin, for every CUDA 13 architecture.
//
//===----------------------------------------------------------------------===//

#include "backend/cuda_tools/cuda_archs.h"
#include "backend/cuda_tools/cuda_source.h"
#include "backend/cuda_tools/nvjitlink.h"
#include "tests/backend/test_support.h"

#include <gtest/gtest.h>

namespace kiln::cuda_tools {
namespace {

using testing::dataPath;
using testing::errorMessage;
using testing::readData;
using testing::toolkit;
using testing::withTarget;

bool contains(const std::string &text, llvm::StringRef part) {
  return llvm::StringRef(text).contains(part);
}

unsigned cubinArch(llvm::StringRef cubin) {
  return (testing::cubinElfFlags(cubin) >> 8) & 0xff;
}

const NvJitLink &linker() {
  static const NvJitLink *loaded = [] {
    llvm::Expected<NvJitLink> linker = NvJitLink::load(toolkit());
    if (!linker) {
      ADD_FAILURE() << llvm::toString(linker.takeError());
      std::abort();
    }
    return new NvJitLink(std::move(*linker));
  }();
  return *loaded;
}

LinkInput callerPtx(unsigned arch) {
  return {LinkInputKind::Ptx, "kernels.ptx",
          withTarget(readData("scale_caller.ptx"), ptxTargetForCubin(arch))};
}

TEST(NvJitLink, LoadsTheToolkitsLibrary) {
  EXPECT_EQ(linker().version().major, toolkit().version.major);
  EXPECT_EQ(linker().libraryPath(), *toolkit().location(ToolkitComponent::NvJitLink).path);
}

TEST(NvJitLink, MissingLibraryIsAClearError) {
  std::string message = errorMessage(NvJitLink::load("/nonexistent/libnvJitLink.so"));
  EXPECT_TRUE(contains(message, "cannot load /nonexistent/libnvJitLink.so")) << message;
}

class LinkForEveryArch : public ::testing::TestWithParam<unsigned> {};

TEST_P(LinkForEveryArch, PtxWithACudaDeviceFunctionCompiledByNvcc) {
  unsigned arch = GetParam();
  llvm::Expected<LinkInput> helper = compileCudaSource(toolkit(), dataPath("scale_helper.cu"), arch,
                                                       CudaSourceOutput::RelocatableCubin);
  KILN_ASSERT_OK(helper);
  EXPECT_EQ(helper->kind, LinkInputKind::Cubin);
  EXPECT_EQ(helper->name, "scale_helper.cubin");
  EXPECT_EQ(cubinArch(helper->data), arch);

  llvm::Expected<LinkedCubin> linked = linker().link(arch, {callerPtx(arch), *helper});
  KILN_ASSERT_OK(linked);
  ASSERT_TRUE(llvm::StringRef(linked->cubin)
                  .starts_with("\x7f"
                               "ELF"));
  EXPECT_EQ(cubinArch(linked->cubin), arch);
  EXPECT_TRUE(contains(linked->cubin, "scale_kernel"));
  const FunctionResources *kernel = linked->usage.function("scale_kernel");
  ASSERT_NE(kernel, nullptr);
  EXPECT_TRUE(kernel->isKernel);
  EXPECT_GT(kernel->registers, 0u);
}

INSTANTIATE_TEST_SUITE_P(Cuda13, LinkForEveryArch, ::testing::ValuesIn(cudaArchitectures()),
                         [](const ::testing::TestParamInfo<unsigned> &test) {
                           return "sm_" + std::to_string(test.param);
                         });

TEST(NvJitLink, LinksCudaSourceCompiledToPtx) {
  llvm::Expected<LinkInput> helper =
      compileCudaSource(toolkit(), dataPath("scale_helper.cu"), 120, CudaSourceOutput::Ptx);
  KILN_ASSERT_OK(helper);
  EXPECT_EQ(helper->kind, LinkInputKind::Ptx);
  EXPECT_EQ(helper->name, "scale_helper.ptx");
  EXPECT_TRUE(contains(helper->data, ".target sm_120"));
  EXPECT_TRUE(contains(helper->data, ".visible .func")) << helper->data;
  EXPECT_TRUE(contains(helper->data, "kiln_test_scale")) << helper->data;
  llvm::Expected<LinkedCubin> linked = linker().link(120, {callerPtx(120), *helper});
  KILN_ASSERT_OK(linked);
  EXPECT_EQ(cubinArch(linked->cubin), 120u);
}

TEST(NvJitLink, LinksPtxAloneLikePtxas) {
  LinkOptions options;
  options.optimizationLevel = 2; // only 0 and 3 are nvJitLink's; 2 goes to ptxas
  options.maxRegisters = 32;
  options.lineInfo = true;
  options.extraPtxasFlags = {"--warn-on-spills"};
  llvm::Expected<LinkedCubin> linked = linker().link(
      100, {{LinkInputKind::Ptx, "block_sum.ptx", readData("block_sum.ptx")}}, options);
  KILN_ASSERT_OK(linked);
  const FunctionResources *kernel = linked->usage.function("block_sum");
  ASSERT_NE(kernel, nullptr);
  EXPECT_EQ(kernel->sharedMemoryBytes, 1024u);
  EXPECT_EQ(kernel->barriers, 1u);
}

TEST(NvJitLink, LinkingIsReproducible) {
  llvm::Expected<LinkInput> helper = compileCudaSource(toolkit(), dataPath("scale_helper.cu"), 100,
                                                       CudaSourceOutput::RelocatableCubin);
  KILN_ASSERT_OK(helper);
  LinkOptions debug;
  debug.debug = true;
  for (const LinkOptions &options : {LinkOptions{}, debug}) {
    llvm::Expected<LinkedCubin> first = linker().link(100, {callerPtx(100), *helper}, options);
    llvm::Expected<LinkedCubin> second = linker().link(100, {callerPtx(100), *helper}, options);
    KILN_ASSERT_OK(first);
    KILN_ASSERT_OK(second);
    EXPECT_TRUE(first->cubin == second->cubin) << "debug " << options.debug;
  }
}

TEST(NvJitLink, OptionsBecomeFlags) {
  LinkOptions options;
  EXPECT_EQ(nvJitLinkFlags(90, options), (std::vector<std::string>{"-arch=sm_90", "-O3"}));
  options.optimizationLevel = 1;
  options.maxRegisters = 40;
  options.lineInfo = true;
  options.extraPtxasFlags = {"-dlcm=ca"};
  EXPECT_EQ(nvJitLinkFlags(80, options),
            (std::vector<std::string>{"-arch=sm_80", "-Xptxas=-O1", "-maxrregcount=40", "-lineinfo",
                                      "-Xptxas=-dlcm=ca"}));
  options.debug = true;
  EXPECT_EQ(nvJitLinkFlags(80, options),
            (std::vector<std::string>{"-arch=sm_80", "-O0", "-maxrregcount=40", "-g",
                                      "-Xptxas=-dlcm=ca"}));
}

TEST(NvJitLink, UndefinedFunctionsAreReportedWithTheLog) {
  llvm::Expected<LinkedCubin> linked = linker().link(90, {callerPtx(90)});
  ASSERT_FALSE(static_cast<bool>(linked));
  bool sawToolError = false;
  llvm::Error rest = llvm::handleErrors(linked.takeError(), [&](const CudaToolError &error) {
    sawToolError = true;
    EXPECT_EQ(error.tool(), "nvJitLink");
    EXPECT_EQ(error.arch(), 90u);
    EXPECT_TRUE(contains(error.summary(), "NVJITLINK_ERROR")) << error.summary();
    std::string message = error.message();
    EXPECT_TRUE(
        contains(message, "error: Undefined reference to 'kiln_test_scale' in 'kernels.ptx'"))
        << message;
  });
  EXPECT_FALSE(static_cast<bool>(rest)) << llvm::toString(std::move(rest));
  EXPECT_TRUE(sawToolError);
}

TEST(NvJitLink, CubinsMustBeForTheLinkedArchitecture) {
  llvm::Expected<LinkInput> helper = compileCudaSource(toolkit(), dataPath("scale_helper.cu"), 80,
                                                       CudaSourceOutput::RelocatableCubin);
  KILN_ASSERT_OK(helper);
  std::string message = errorMessage(linker().link(90, {callerPtx(90), *helper}));
  EXPECT_TRUE(contains(message, "nvJitLink failed for sm_90")) << message;
  EXPECT_TRUE(contains(message, "scale_helper.cubin")) << message;
}

TEST(NvJitLink, PtxNewerThanTheArchitectureIsRefused) {
  std::string message = errorMessage(linker().link(80, {callerPtx(90)}));
  EXPECT_TRUE(contains(message, "cannot link 'kernels.ptx' for sm_80: its .target is sm_90"))
      << message;
}

TEST(NvJitLink, PtxSyntaxErrorsNameTheLine) {
  LinkInput broken = callerPtx(90);
  size_t at = broken.data.find("ld.global.f32");
  ASSERT_NE(at, std::string::npos);
  broken.data.replace(at, 2, "lx");
  std::string message = errorMessage(linker().link(90, {broken}));
  EXPECT_TRUE(contains(message, "nvJitLink failed for sm_90")) << message;
  EXPECT_TRUE(contains(message, "lx.global.f32")) << message;
}

TEST(NvJitLink, InputKindsComeFromFileNames) {
  std::vector<std::pair<llvm::StringRef, LinkInputKind>> expected = {
      {"a.ptx", LinkInputKind::Ptx},       {"dir/b.cubin", LinkInputKind::Cubin},
      {"c.fatbin", LinkInputKind::Fatbin}, {"d.o", LinkInputKind::Object},
      {"libe.a", LinkInputKind::Library},  {"f.ltoir", LinkInputKind::LtoIr}};
  for (auto [path, kind] : expected) {
    llvm::Expected<LinkInputKind> found = linkInputKindForPath(path);
    KILN_ASSERT_OK(found);
    EXPECT_EQ(*found, kind) << path.str();
  }
  std::string message = errorMessage(linkInputKindForPath("helper.cu"));
  EXPECT_TRUE(contains(message, "compiled with nvcc first")) << message;

  llvm::Expected<LinkInput> input = readLinkInput(dataPath("block_sum.ptx"));
  KILN_ASSERT_OK(input);
  EXPECT_EQ(input->name, "block_sum.ptx");
  EXPECT_EQ(input->kind, LinkInputKind::Ptx);
}

TEST(CudaSource, CompilationIsReproducible) {
  CudaSourceOptions debug;
  debug.debug = true;
  for (const CudaSourceOptions &options : {CudaSourceOptions{}, debug}) {
    llvm::Expected<LinkInput> first = compileCudaSource(
        toolkit(), dataPath("scale_helper.cu"), 86, CudaSourceOutput::RelocatableCubin, options);
    llvm::Expected<LinkInput> second = compileCudaSource(
        toolkit(), dataPath("scale_helper.cu"), 86, CudaSourceOutput::RelocatableCubin, options);
    KILN_ASSERT_OK(first);
    KILN_ASSERT_OK(second);
    EXPECT_TRUE(first->data == second->data) << "debug " << options.debug;
  }
}

TEST(CudaSource, CompilerErrorsQuoteNvcc) {
  std::string message = errorMessage(compileCudaSource(toolkit(), dataPath("syntax_error.cu"), 80,
                                                       CudaSourceOutput::RelocatableCubin));
  EXPECT_TRUE(
      contains(message, "nvcc could not compile '" + dataPath("syntax_error.cu") + "' for sm_80"))
      << message;
  EXPECT_TRUE(contains(message, "undefined_variable")) << message;
}

TEST(CudaSource, DefinesAndIncludeDirectoriesReachNvcc) {
  CudaSourceOptions options;
  options.defines = {"undefined_variable=2.0f"};
  options.includeDirectories = {dataPath("")};
  llvm::Expected<LinkInput> compiled =
      compileCudaSource(toolkit(), dataPath("syntax_error.cu"), 80, CudaSourceOutput::Ptx, options);
  KILN_ASSERT_OK(compiled);
  EXPECT_TRUE(contains(compiled->data, "kiln_broken"));
}

TEST(CudaSource, MissingFilesAndBadArchitecturesAreErrors) {
  EXPECT_TRUE(contains(
      errorMessage(compileCudaSource(toolkit(), "/nonexistent/x.cu", 80, CudaSourceOutput::Ptx)),
      "no such file"));
  EXPECT_TRUE(contains(errorMessage(compileCudaSource(toolkit(), dataPath("scale_helper.cu"), 72,
                                                      CudaSourceOutput::Ptx)),
                       "sm_72: not an architecture CUDA 13 supports"));
}

} // namespace
} // namespace kiln::cuda_tools
