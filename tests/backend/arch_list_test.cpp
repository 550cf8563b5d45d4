//===- tests/backend/arch_list_test.cpp - Architecture lists --------------===//
//
// Every grammar of backend/cuda_tools/arch_list.h, CUDAARCHS, `native` without a GPU,
// the canonical form, and the errors.
//
//===----------------------------------------------------------------------===//

#include "backend/cuda_tools/arch_list.h"
#include "backend/cuda_tools/cuda_archs.h"
#include "backend/cuda_tools/native_gpu.h"
#include "tests/backend/test_support.h"

#include <gtest/gtest.h>

#include <cstdlib>

namespace kiln::cuda_tools {
namespace {

using testing::errorMessage;

using Archs = std::set<unsigned>;

llvm::Expected<std::vector<unsigned>> noGpu() {
  return llvm::createStringError("the test has no GPU");
}

/// Parses with a `native` probe that must not be called.
llvm::Expected<ArchSet> parse(llvm::StringRef list) {
  return parseArchList(list, noGpu);
}

ArchSet parseOrFail(llvm::StringRef list) {
  llvm::Expected<ArchSet> set = parse(list);
  if (!set) {
    ADD_FAILURE() << "'" << list.str() << "': " << llvm::toString(set.takeError());
    return {};
  }
  return *set;
}

TEST(ArchList, CMakePlainNumbersMeanCubinAndPtx) {
  ArchSet set = parseOrFail("75;80;90");
  EXPECT_EQ(set.cubins, (Archs{75, 80, 90}));
  EXPECT_EQ(set.ptx, (Archs{75, 80, 90}));
}

TEST(ArchList, CMakeRealAndVirtualSuffixes) {
  ArchSet set = parseOrFail("80-real;90-virtual;86-real");
  EXPECT_EQ(set.cubins, (Archs{80, 86}));
  EXPECT_EQ(set.ptx, (Archs{90}));
}

TEST(ArchList, SeparatorsMayBeSemicolonsCommasOrSpaces) {
  ArchSet expected = parseOrFail("75-real;80-real;86-real;90");
  EXPECT_EQ(parseOrFail("75-real,80-real,86-real,90"), expected);
  EXPECT_EQ(parseOrFail("75-real 80-real  86-real\t90"), expected);
  EXPECT_EQ(parseOrFail(" 75-real;, 80-real ,86-real;;90 "), expected);
}

TEST(ArchList, TorchNumbersMeanCubinsAndPlusPtxAddsPtx) {
  ArchSet set = parseOrFail("7.5 8.0 9.0+PTX");
  EXPECT_EQ(set.cubins, (Archs{75, 80, 90}));
  EXPECT_EQ(set.ptx, (Archs{90}));
  EXPECT_EQ(parseOrFail("8.0;9.0+PTX"), parseOrFail("80-real;90"));
  EXPECT_EQ(parseOrFail("8.6+ptx"), parseOrFail("86"));
  EXPECT_EQ(parseOrFail("10.0 12.1"), parseOrFail("100-real;121-real"));
}

TEST(ArchList, NumbersWithPlusPtxMakePlainNumbersCubinsOnly) {
  // "75;80;90+PTX", as setuptools users write it: PTX for compute_90 only.
  ArchSet set = parseOrFail("75;80;90+PTX");
  EXPECT_EQ(set.cubins, (Archs{75, 80, 90}));
  EXPECT_EQ(set.ptx, (Archs{90}));
  EXPECT_EQ(parseOrFail("90+ptx"), parseOrFail("90"));
  // Without +PTX anywhere, plain numbers keep CMake's meaning.
  EXPECT_EQ(parseOrFail("75;80").ptx, (Archs{75, 80}));
}

TEST(ArchList, NvccNames) {
  ArchSet set = parseOrFail("sm_80 sm_120 compute_90");
  EXPECT_EQ(set.cubins, (Archs{80, 120}));
  EXPECT_EQ(set.ptx, (Archs{90}));
}

TEST(ArchList, GrammarsMix) {
  EXPECT_EQ(parseOrFail("7.5;80-real;sm_86;9.0+PTX"), parseOrFail("75-real;80-real;86-real;90"));
}

TEST(ArchList, DuplicatesCollapse) {
  EXPECT_EQ(parseOrFail("80;80-real;8.0;sm_80"), parseOrFail("80"));
}

TEST(ArchList, AllIsEveryCuda13ArchitectureWithTheNewestPtxKilnEmbeds) {
  // nvcc -arch=all adds compute_120 PTX (checked with nvcc -dryrun); Kiln's
  // newest PTX is compute_90.
  ArchSet set = parseOrFail("all");
  EXPECT_EQ(set.cubins, (Archs{75, 80, 86, 87, 88, 89, 90, 100, 103, 110, 120, 121}));
  EXPECT_EQ(set.ptx, (Archs{90}));
}

TEST(ArchList, AllMajorIsTheOldestArchitectureAndEveryN0) {
  ArchSet set = parseOrFail("all-major");
  EXPECT_EQ(set.cubins, (Archs{75, 80, 90, 100, 110, 120}));
  EXPECT_EQ(set.ptx, (Archs{90}));
}

TEST(ArchList, RealArchitecturesAbove90AreBuiltFromSm90Ptx) {
  ArchSet set = parseOrFail("100-real;103-real;110-real;120-real;121-real");
  EXPECT_EQ(set.cubins, (Archs{100, 103, 110, 120, 121}));
  EXPECT_TRUE(set.ptx.empty());
  EXPECT_EQ(set.ptxTargets(), (Archs{90}));
}

TEST(ArchList, PtxAbove90IsAnErrorExplainingTheJit) {
  std::string message = errorMessage(parse("80;100"));
  EXPECT_NE(message.find("'100'"), std::string::npos) << message;
  EXPECT_NE(message.find("compute_100 PTX cannot be embedded"), std::string::npos) << message;
  EXPECT_NE(message.find("newest PTX Kiln emits is compute_90"), std::string::npos) << message;
  EXPECT_NE(message.find("JIT-compiles"), std::string::npos) << message;
  EXPECT_NE(message.find("add -real"), std::string::npos) << message;

  for (llvm::StringRef list : {"120-virtual", "12.0+PTX", "compute_121", "103"})
    EXPECT_NE(errorMessage(parse(list)).find("cannot be embedded"), std::string::npos)
        << list.str();
}

TEST(ArchList, Sm88CubinsComeFromSm87PtxAndCompute88IsAnError) {
  ArchSet set = parseOrFail("88-real");
  EXPECT_EQ(set.ptxTargets(), (Archs{87}));
  std::string message = errorMessage(parse("88"));
  EXPECT_NE(message.find("LLVM 19 has no sm_88 PTX target"), std::string::npos) << message;
}

TEST(ArchList, ArchitectureSpecificTargetsAreRefused) {
  for (llvm::StringRef list : {"90a", "90a-real", "sm_90a", "100f", "compute_100a", "9.0a"}) {
    std::string message = errorMessage(parse(list));
    EXPECT_NE(message.find("architecture-specific"), std::string::npos)
        << list.str() << ": " << message;
  }
}

TEST(ArchList, ArchitecturesCuda13DroppedOrNeverHadAreErrors) {
  std::string message = errorMessage(parse("70;80"));
  EXPECT_NE(message.find("'70'"), std::string::npos) << message;
  EXPECT_NE(message.find("no longer supported by CUDA 13"), std::string::npos) << message;
  message = errorMessage(parse("95-real"));
  EXPECT_NE(message.find("not an architecture CUDA 13 supports (75, 80, 86, 87, 88, 89, 90, 100, "
                         "103, 110, 120, 121)"),
            std::string::npos)
      << message;
  EXPECT_NE(errorMessage(parse("6.1")).find("no longer supported"), std::string::npos);
}

TEST(ArchList, MalformedEntriesAreErrorsThatShowTheAcceptedForms) {
  for (llvm::StringRef list : {"abc", "80-fake", "8.", "8.10", "sm80", "80+PTY", "-real", "90;x"}) {
    std::string message = errorMessage(parse(list));
    EXPECT_FALSE(message.empty()) << list.str();
  }
  std::string message = errorMessage(parse("80;volta"));
  EXPECT_NE(message.find("'volta': not an architecture; expected CMake's 80, 80-real"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("9.0+PTX"), std::string::npos) << message;
}

TEST(ArchList, EmptyListsAreErrors) {
  EXPECT_NE(errorMessage(parse("")).find("the architecture list is empty"), std::string::npos);
  EXPECT_NE(errorMessage(parse(" ;, ")).find("the architecture list is empty"), std::string::npos);
}

TEST(ArchList, SpecialValuesStandAlone) {
  std::string message = errorMessage(parse("all;80"));
  EXPECT_NE(message.find("'all' stands for a whole list"), std::string::npos) << message;
  EXPECT_FALSE(errorMessage(parse("80 native")).empty());
}

TEST(ArchList, CMakeFalseValuesAreErrors) {
  std::string message = errorMessage(parse("OFF"));
  EXPECT_NE(message.find("turns CUDA architectures off"), std::string::npos) << message;
}

TEST(ArchList, NativeWithoutAGpuIsAClearError) {
  // This machine has no GPU; on one with a GPU, `native` lists its GPUs.
  llvm::Expected<std::vector<unsigned>> gpus = probeNativeGpuArchitectures();
  llvm::Expected<ArchSet> set = parseArchList("native");
  if (gpus) {
    KILN_ASSERT_OK(set);
    EXPECT_EQ(set->cubins, Archs(gpus->begin(), gpus->end()));
    return;
  }
  std::string reason = llvm::toString(gpus.takeError());
  std::string message = errorMessage(std::move(set));
  EXPECT_NE(message.find("'native' means the GPUs of this machine, but"), std::string::npos)
      << message;
  EXPECT_NE(message.find(reason), std::string::npos) << message;
  EXPECT_NE(message.find("name the architectures instead"), std::string::npos) << message;
  // The reason names what was tried: the driver library, or what it said.
  EXPECT_TRUE(reason.find("libcuda.so.1") != std::string::npos ||
              reason.find("cuInit") != std::string::npos ||
              reason.find("no GPU") != std::string::npos)
      << reason;
}

TEST(ArchList, NativeBuildsCubinsForEachGpu) {
  auto twoGpus = []() -> llvm::Expected<std::vector<unsigned>> {
    return std::vector<unsigned>{86, 120, 86};
  };
  llvm::Expected<ArchSet> set = parseArchList("native", twoGpus);
  KILN_ASSERT_OK(set);
  EXPECT_EQ(set->cubins, (Archs{86, 120}));
  EXPECT_TRUE(set->ptx.empty());

  auto oldGpu = []() -> llvm::Expected<std::vector<unsigned>> { return std::vector<unsigned>{70}; };
  std::string message = errorMessage(parseArchList("native", oldGpu));
  EXPECT_NE(message.find("sm_70 GPU, which CUDA 13 does not support"), std::string::npos)
      << message;
}

TEST(ArchList, CanonicalFormIsCMakeGrammarAndParsesBack) {
  EXPECT_EQ(defaultArchSet().str(), "75-real;80-real;86-real;89-real;90;100-real;120-real");
  for (llvm::StringRef list : {"75;80;90", "80-real;90-virtual", "7.5 8.0 9.0+PTX", "all",
                               "all-major", "sm_121 compute_87", "90-virtual"}) {
    ArchSet set = parseOrFail(list);
    EXPECT_EQ(parseOrFail(set.str()), set) << list.str() << " -> " << set.str();
  }
  EXPECT_EQ(parseOrFail("9.0+PTX 8.0 7.5").str(), "75-real;80-real;90");
  EXPECT_EQ(parseOrFail("90-virtual;80-real").str(), "80-real;90-virtual");
}

TEST(ArchList, DescribeNamesCubinsAndPtx) {
  EXPECT_EQ(defaultArchSet().describe(),
            "sm_75 sm_80 sm_86 sm_89 sm_90 sm_100 sm_120 cubins, compute_90 PTX");
  EXPECT_EQ(parseOrFail("90-virtual").describe(), "compute_90 PTX");
}

TEST(ArchList, DefaultIsSevenCubinsAndCompute90Ptx) {
  ArchSet set = defaultArchSet();
  EXPECT_EQ(set.cubins, (Archs{75, 80, 86, 89, 90, 100, 120}));
  EXPECT_EQ(set.ptx, (Archs{90}));
  EXPECT_EQ(set.ptxTargets(), (Archs{75, 80, 86, 89, 90}));
}

TEST(CudaArchs, PtxTargetForEachCubin) {
  std::map<unsigned, unsigned> expected = {{75, 75},  {80, 80},  {86, 86},  {87, 87},
                                           {88, 87},  {89, 89},  {90, 90},  {100, 90},
                                           {103, 90}, {110, 90}, {120, 90}, {121, 90}};
  ASSERT_EQ(cudaArchitectures().size(), expected.size());
  for (unsigned arch : cudaArchitectures())
    EXPECT_EQ(ptxTargetForCubin(arch), expected[arch]) << arch;
}

TEST(ArchSelection, CommandLineThenCudaArchsThenDefault) {
  llvm::Expected<ArchSelection> selection = selectArchitectures("80-real", "90", noGpu);
  KILN_ASSERT_OK(selection);
  EXPECT_EQ(selection->source, ArchListSource::CommandLine);
  EXPECT_EQ(selection->archs.str(), "80-real");

  selection = selectArchitectures(std::nullopt, "8.6;9.0+PTX", noGpu);
  KILN_ASSERT_OK(selection);
  EXPECT_EQ(selection->source, ArchListSource::CudaArchsVariable);
  EXPECT_EQ(selection->text, "8.6;9.0+PTX");
  EXPECT_EQ(selection->archs.str(), "86-real;90");

  for (std::optional<std::string> unset :
       {std::optional<std::string>(), std::optional<std::string>(" ")}) {
    selection = selectArchitectures(std::nullopt, unset, noGpu);
    KILN_ASSERT_OK(selection);
    EXPECT_EQ(selection->source, ArchListSource::Default);
    EXPECT_EQ(selection->archs, defaultArchSet());
  }
}

TEST(ArchSelection, AConfiguredListComesAfterTheEnvironmentAndBeforeTheDefault) {
  ConfiguredArchList configured{"75;80", "[tool.kiln] of /p/pyproject.toml"};
  llvm::Expected<ArchSelection> selection =
      selectArchitectures(std::nullopt, std::nullopt, noGpu, configured);
  KILN_ASSERT_OK(selection);
  EXPECT_EQ(selection->source, ArchListSource::Configured);
  EXPECT_EQ(selection->archs.str(), "75;80");
  selection = selectArchitectures(std::nullopt, "90", noGpu, configured);
  KILN_ASSERT_OK(selection);
  EXPECT_EQ(selection->source, ArchListSource::CudaArchsVariable);
  selection = selectArchitectures("86", "90", noGpu, configured);
  KILN_ASSERT_OK(selection);
  EXPECT_EQ(selection->source, ArchListSource::CommandLine);

  std::string message = errorMessage(selectArchitectures(
      std::nullopt, std::nullopt, noGpu, ConfiguredArchList{"sm_61", configured.origin}));
  EXPECT_NE(message.find("archs = 'sm_61' (from [tool.kiln] of /p/pyproject.toml)"),
            std::string::npos)
      << message;
}

TEST(ArchSelection, ErrorsSayWhereTheListCameFrom) {
  std::string message = errorMessage(selectArchitectures(std::nullopt, "75;100", noGpu));
  EXPECT_NE(message.find("invalid architecture list CUDAARCHS='75;100' (from the environment)"),
            std::string::npos)
      << message;
  message = errorMessage(selectArchitectures("sm_61", std::nullopt, noGpu));
  EXPECT_NE(message.find("invalid architecture list --arch 'sm_61'"), std::string::npos) << message;
  // An explicit empty --arch is an error, not the default.
  EXPECT_NE(errorMessage(selectArchitectures("", std::nullopt, noGpu)).find("empty"),
            std::string::npos);
}

TEST(ArchSelection, ReadsCudaArchsFromTheEnvironment) {
  const char *saved = std::getenv("CUDAARCHS");
  std::optional<std::string> previous = saved ? std::optional<std::string>(saved) : std::nullopt;
  ::setenv("CUDAARCHS", "87-real;90-virtual", 1);
  llvm::Expected<ArchSelection> selection = selectArchitectures(std::nullopt);
  if (previous)
    ::setenv("CUDAARCHS", previous->c_str(), 1);
  else
    ::unsetenv("CUDAARCHS");
  KILN_ASSERT_OK(selection);
  EXPECT_EQ(selection->source, ArchListSource::CudaArchsVariable);
  EXPECT_EQ(selection->archs.str(), "87-real;90-virtual");
}

} // namespace
} // namespace kiln::cuda_tools
