//===- tests/backend/cuda_toolkit_test.cpp - Finding the CUDA toolkit -----===//
//
// The search order of backend/cuda_tools/cuda_toolkit.h, checked on the installed
// toolkit and on fake ones built in temporary directories.
//
//===----------------------------------------------------------------------===//

#include "backend/cuda_tools/cuda_toolkit.h"
#include "backend/cuda_tools/toolkit_version_memo.h"
#include "support/temporary_directory.h"
#include "tests/backend/test_support.h"

#include <gtest/gtest.h>
#include <llvm/Support/FileSystem.h>

namespace kiln::cuda_tools {
namespace {

using testing::errorMessage;
using testing::toolkit;

bool contains(const std::string &text, llvm::StringRef part) {
  return llvm::StringRef(text).contains(part);
}

/// A directory that looks like a toolkit: bin/ptxas is a shell script
/// printing `ptxasVersionOutput`.
struct FakeToolkit {
  support::TemporaryDirectory directory;

  static FakeToolkit create(llvm::StringRef ptxasVersionOutput) {
    llvm::Expected<support::TemporaryDirectory> directory =
        support::TemporaryDirectory::create("kiln-fake-cuda");
    if (!directory) {
      ADD_FAILURE() << llvm::toString(directory.takeError());
      std::abort();
    }
    FakeToolkit fake{std::move(*directory)};
    fake.makeDirectory("bin");
    fake.writeExecutable("bin/ptxas",
                         "#!/bin/sh\nprintf '%s\\n' '" + ptxasVersionOutput.str() + "'\n");
    return fake;
  }

  std::string root() const { return directory.path(); }

  void makeDirectory(llvm::StringRef relative) {
    EXPECT_FALSE(llvm::sys::fs::create_directories(directory.file(relative)));
  }
  void writeFile(llvm::StringRef relative, llvm::StringRef contents) {
    EXPECT_FALSE(static_cast<bool>(directory.write(relative, contents)));
  }
  void writeExecutable(llvm::StringRef relative, llvm::StringRef contents) {
    writeFile(relative, contents);
    EXPECT_FALSE(llvm::sys::fs::setPermissions(directory.file(relative),
                                               llvm::sys::fs::all_read | llvm::sys::fs::all_exe |
                                                   llvm::sys::fs::owner_write));
  }
};

ToolkitSearchEnvironment emptyEnvironment() {
  ToolkitSearchEnvironment environment;
  environment.defaultRoot = "/nonexistent/kiln-test/cuda";
  return environment;
}

TEST(CudaToolkit, FindsTheInstalledToolkitAndEveryComponent) {
  const CudaToolkit &found = toolkit();
  ASSERT_FALSE(found.root.empty());
  EXPECT_GE(found.version.major, 13u);
  for (ToolkitComponent component : kToolkitComponents) {
    llvm::Expected<std::string> path = found.require(component);
    KILN_ASSERT_OK(path);
    EXPECT_TRUE(llvm::sys::fs::exists(*path)) << *path;
  }
}

TEST(CudaToolkit, VersionAgreesWithWhatCMakeFound) {
  // CMake's FindCUDAToolkit reads the same toolkit's nvcc --version.
  // (version.json gives the toolkit's release, 13.0.1 say, where the
  // compilers say 13.0.88: only major.minor must agree.)
  const CudaVersion &version = toolkit().version;
  EXPECT_EQ(std::to_string(version.major) + "." + std::to_string(version.minor),
            KILN_CMAKE_CUDA_VERSION_MAJOR_MINOR);
}

TEST(CudaToolkit, CudaHomeComesFirst) {
  ToolkitSearchEnvironment environment = emptyEnvironment();
  environment.cudaHome = toolkit().root;
  environment.cudaPath = "/nonexistent/cuda-path";
  llvm::Expected<CudaToolkit> found = findCudaToolkit(environment);
  KILN_ASSERT_OK(found);
  EXPECT_EQ(found->source, ToolkitSource::CudaHome);
  EXPECT_EQ(found->root, toolkit().root);
}

TEST(CudaToolkit, CudaPathIsUsedWithoutCudaHome) {
  ToolkitSearchEnvironment environment = emptyEnvironment();
  environment.cudaPath = toolkit().root;
  llvm::Expected<CudaToolkit> found = findCudaToolkit(environment);
  KILN_ASSERT_OK(found);
  EXPECT_EQ(found->source, ToolkitSource::CudaPath);
}

TEST(CudaToolkit, CudaHomeNamingNoDirectoryIsAnErrorWithoutFallback) {
  ToolkitSearchEnvironment environment = emptyEnvironment();
  environment.cudaHome = "/nonexistent/kiln-test/cuda-home";
  environment.cudaPath = toolkit().root; // valid, but CUDA_HOME decides
  environment.path = "/usr/local/cuda/bin";
  std::string message = errorMessage(findCudaToolkit(environment));
  EXPECT_TRUE(contains(message, "$CUDA_HOME is '/nonexistent/kiln-test/cuda-home', which is not a "
                                "directory"))
      << message;
  EXPECT_TRUE(contains(message, "bin/ptxas")) << message;
}

TEST(CudaToolkit, CudaPathWithoutPtxasIsAnError) {
  llvm::Expected<support::TemporaryDirectory> empty =
      support::TemporaryDirectory::create("kiln-empty-cuda");
  KILN_ASSERT_OK(empty);
  ToolkitSearchEnvironment environment = emptyEnvironment();
  environment.cudaPath = empty->path();
  std::string message = errorMessage(findCudaToolkit(environment));
  EXPECT_TRUE(
      contains(message, "$CUDA_PATH is '" + empty->path() + "', which holds no CUDA toolkit"))
      << message;
  EXPECT_TRUE(contains(message, "'" + empty->path() + "/bin/ptxas' is missing or not executable"))
      << message;
}

TEST(CudaToolkit, PtxasOnPathLocatesTheToolkit) {
  ToolkitSearchEnvironment environment = emptyEnvironment();
  environment.path = "/nonexistent/kiln-test/bin:" + toolkit().root + "/bin:/usr/bin";
  llvm::Expected<CudaToolkit> found = findCudaToolkit(environment);
  KILN_ASSERT_OK(found);
  EXPECT_EQ(found->source, ToolkitSource::PtxasOnPath);
  // The root is the real directory (/usr/local/cuda may be a symlink).
  llvm::SmallString<256> realRoot;
  ASSERT_FALSE(llvm::sys::fs::real_path(toolkit().root, realRoot));
  EXPECT_EQ(found->root, std::string(realRoot));
}

TEST(CudaToolkit, DefaultLocationIsTheLastResort) {
  ToolkitSearchEnvironment environment = emptyEnvironment();
  environment.path = "/nonexistent/kiln-test/bin";
  environment.defaultRoot = toolkit().root;
  llvm::Expected<CudaToolkit> found = findCudaToolkit(environment);
  KILN_ASSERT_OK(found);
  EXPECT_EQ(found->source, ToolkitSource::DefaultLocation);
}

/// A Python environment holding NVIDIA's CUDA 12 and 13 wheels as pip lays
/// them out: nvidia/cuda_nvcc (12), nvidia/cu13 (13; ptxas from
/// nvidia-cuda-nvcc, libdevice from nvidia-nvvm in the same folder).
FakeToolkit pythonEnvironmentWithCudaWheels() {
  FakeToolkit environment = FakeToolkit::create("unused");
  std::string packages = "lib/python3.11/site-packages/nvidia/";
  environment.makeDirectory(packages + "cuda_nvcc/bin");
  environment.writeExecutable(packages + "cuda_nvcc/bin/ptxas",
                              "#!/bin/sh\necho 'Cuda compilation tools, release 12.9, V12.9.86'\n");
  environment.makeDirectory(packages + "cu13/bin");
  environment.writeExecutable(packages + "cu13/bin/ptxas",
                              "#!/bin/sh\necho 'Cuda compilation tools, release 13.5, V13.5.37'\n");
  environment.writeExecutable(packages + "cu13/bin/fatbinary", "#!/bin/sh\n");
  environment.makeDirectory(packages + "cu13/nvvm/libdevice");
  environment.writeFile(packages + "cu13/nvvm/libdevice/libdevice.10.bc", "BC");
  environment.makeDirectory("bin");
  environment.makeDirectory(packages + "kiln");
  return environment;
}

TEST(CudaToolkit, WheelsOfTheProgramsPythonEnvironmentComeBeforeTheDefaultLocation) {
  FakeToolkit python = pythonEnvironmentWithCudaWheels();
  std::vector<std::string> packages = sitePackagesNear(python.directory.file("bin/kiln"));
  ASSERT_EQ(packages.size(), 1u);
  EXPECT_EQ(packages[0], python.directory.file("lib/python3.11/site-packages"));
  // kiln._compiler, in site-packages/kiln, finds the same environment.
  EXPECT_EQ(sitePackagesNear(python.directory.file(
                "lib/python3.11/site-packages/kiln/_compiler.cpython-311-x86_64-linux-gnu.so")),
            packages);
  // So does the program auditwheel moves out of bin/ in a repaired wheel.
  EXPECT_EQ(sitePackagesNear(
                python.directory.file("lib/python3.11/site-packages/kiln_compiler.scripts/kiln")),
            packages);
  // And the shared compiler library that both load, in the environment's
  // lib/kiln/.
  EXPECT_EQ(sitePackagesNear(python.directory.file("lib/kiln/libkiln-compiler.so")), packages);

  ToolkitSearchEnvironment environment = emptyEnvironment();
  environment.path = "/nonexistent/kiln-test/bin";
  environment.sitePackages = packages;
  environment.defaultRoot = toolkit().root;
  llvm::Expected<CudaToolkit> found = findCudaToolkit(environment);
  KILN_ASSERT_OK(found);
  EXPECT_EQ(found->source, ToolkitSource::PythonEnvironment);
  // The newest CUDA's wheels win over CUDA 12's.
  EXPECT_EQ(found->root, packages[0] + "/nvidia/cu13");
  EXPECT_EQ(found->version.str(), "13.5.37");
  EXPECT_EQ(found->location(ToolkitComponent::Libdevice).path,
            packages[0] + "/nvidia/cu13/nvvm/libdevice/libdevice.10.bc");
  EXPECT_TRUE(found->location(ToolkitComponent::Fatbinary).path.has_value());
}

TEST(CudaToolkit, PathComesBeforeTheWheels) {
  FakeToolkit python = pythonEnvironmentWithCudaWheels();
  ToolkitSearchEnvironment environment = emptyEnvironment();
  environment.path = toolkit().root + "/bin";
  environment.sitePackages = sitePackagesNear(python.directory.file("bin/kiln"));
  llvm::Expected<CudaToolkit> found = findCudaToolkit(environment);
  KILN_ASSERT_OK(found);
  EXPECT_EQ(found->source, ToolkitSource::PtxasOnPath);
}

TEST(CudaToolkit, CudaTwelvesWheelLayoutIsAToolkitToo) {
  FakeToolkit python = pythonEnvironmentWithCudaWheels();
  std::string packages = python.directory.file("lib/python3.11/site-packages");
  EXPECT_FALSE(llvm::sys::fs::remove_directories(packages + "/nvidia/cu13"));
  ToolkitSearchEnvironment environment = emptyEnvironment();
  environment.path = "/nonexistent/kiln-test/bin";
  environment.sitePackages = {packages};
  llvm::Expected<CudaToolkit> found = findCudaToolkit(environment);
  KILN_ASSERT_OK(found);
  EXPECT_EQ(found->root, packages + "/nvidia/cuda_nvcc");
  EXPECT_EQ(found->version.major, 12u);
  // nvidia-cuda-nvcc-cu12 has no fatbinary: an error when something needs it.
  std::string message = errorMessage(found->require(ToolkitComponent::Fatbinary));
  EXPECT_TRUE(contains(message, "NVIDIA's CUDA wheels in the Python environment")) << message;
}

TEST(CudaToolkit, AProgramOutsideAnyPythonEnvironmentHasNoSitePackages) {
  EXPECT_TRUE(sitePackagesNear("/nonexistent/kiln-test/build/driver/kiln").empty());
}

TEST(CudaToolkit, NothingFoundSaysWhereItLooked) {
  ToolkitSearchEnvironment environment = emptyEnvironment();
  environment.path = "/nonexistent/kiln-test/bin";
  std::string message = errorMessage(findCudaToolkit(environment));
  EXPECT_TRUE(contains(message, "no CUDA toolkit found")) << message;
  EXPECT_TRUE(contains(message, "CUDA_HOME and CUDA_PATH are not set")) << message;
  EXPECT_TRUE(contains(message, "/nonexistent/kiln-test/cuda/bin/ptxas does not exist")) << message;
  EXPECT_TRUE(contains(message, "kiln-compiler[cuda]")) << message;
}

/// A search that finds `fake` through $CUDA_HOME.
ToolkitSearchEnvironment cudaHomeAt(const FakeToolkit &fake) {
  ToolkitSearchEnvironment environment = emptyEnvironment();
  environment.cudaHome = fake.root();
  return environment;
}

/// Finds the toolkit of `environment` and checks the version it reports and
/// where that version came from.
void expectVersion(const ToolkitSearchEnvironment &environment, const CudaVersion &version,
                   llvm::StringRef source) {
  llvm::Expected<CudaToolkit> found = findCudaToolkit(environment);
  KILN_ASSERT_OK(found);
  EXPECT_EQ(found->version, version) << "the version from " << source.str();
  EXPECT_EQ(found->versionSource, source);
}

TEST(CudaToolkit, VersionComesFromVersionJsonFirst) {
  FakeToolkit fake = FakeToolkit::create("Cuda compilation tools, release 12.8, V12.8.93");
  fake.writeFile(
      "version.json",
      R"({"cuda": {"name": "CUDA SDK", "version": "13.1.0"}, "nvcc": {"version": "13.1.80"}})");
  expectVersion(cudaHomeAt(fake), {13, 1, 0}, "version.json");
}

TEST(CudaToolkit, VersionFromPtxasWithoutVersionJson) {
  FakeToolkit fake = FakeToolkit::create("Cuda compilation tools, release 12.8, V12.8.93");
  expectVersion(cudaHomeAt(fake), {12, 8, 93}, "ptxas --version");
}

TEST(CudaToolkit, VersionPtxasReportedIsRememberedUntilPtxasChanges) {
  FakeToolkit fake = FakeToolkit::create("Cuda compilation tools, release 12.8, V12.8.93");
  ToolkitSearchEnvironment environment = cudaHomeAt(fake);
  // In a folder that does not exist yet, as a cache's before its first build.
  environment.versionMemo = fake.directory.file("cache/toolkits.json");

  expectVersion(environment, {12, 8, 93}, "ptxas --version");
  EXPECT_TRUE(llvm::sys::fs::exists(*environment.versionMemo))
      << "what ptxas reported was not written down";
  expectVersion(environment, {12, 8, 93}, "ptxas --version, remembered");

  // Another ptxas in its place (another size) is asked again.
  fake.writeExecutable(
      "bin/ptxas", "#!/bin/sh\nprintf '%s\\n' 'Cuda compilation tools, release 12.10, V12.10.5'\n");
  expectVersion(environment, {12, 10, 5}, "ptxas --version");
}

TEST(CudaToolkit, DamagedVersionMemoIsAskedPastAndRewritten) {
  FakeToolkit fake = FakeToolkit::create("Cuda compilation tools, release 12.8, V12.8.93");
  fake.writeFile("toolkits.json", "{\"ptxas\": [{\"path\": 7}, \"no\"");
  ToolkitSearchEnvironment environment = cudaHomeAt(fake);
  environment.versionMemo = fake.directory.file("toolkits.json");

  expectVersion(environment, {12, 8, 93}, "ptxas --version");
  expectVersion(environment, {12, 8, 93}, "ptxas --version, remembered");
}

TEST(CudaToolkit, VersionMemoKeepsTheMostRecentlyAskedPtxas) {
  FakeToolkit fake = FakeToolkit::create("unused");
  ToolkitVersionMemo memo(fake.directory.file("toolkits.json"));
  std::vector<std::string> files;
  for (size_t i = 0; i <= ToolkitVersionMemo::capacity; ++i) {
    std::string name = "ptxas" + std::to_string(i);
    fake.writeFile(name, name);
    files.push_back(fake.directory.file(name));
    memo.remember(files.back(), CudaVersion{12, static_cast<unsigned>(i), 0});
  }
  EXPECT_EQ(memo.recall(files.front()), std::nullopt)
      << "the memo keeps more than " << ToolkitVersionMemo::capacity << " files";
  EXPECT_EQ(memo.recall(files.back()), (CudaVersion{12, ToolkitVersionMemo::capacity, 0}));
  EXPECT_EQ(memo.recall(files[1]), (CudaVersion{12, 1, 0}));
  EXPECT_EQ(memo.recall(fake.directory.file("never-asked")), std::nullopt);
}

TEST(CudaToolkit, UnknownVersionIsAnError) {
  FakeToolkit fake = FakeToolkit::create("not a version");
  ToolkitSearchEnvironment environment = cudaHomeAt(fake);
  std::string message = errorMessage(findCudaToolkit(environment));
  EXPECT_TRUE(contains(message, "cannot tell the version of the CUDA toolkit at '" + fake.root()))
      << message;
}

TEST(CudaToolkit, MissingComponentsAreErrorsListingWhereKilnLooked) {
  FakeToolkit fake = FakeToolkit::create("Cuda compilation tools, release 13.0, V13.0.88");
  fake.makeDirectory("nvvm/libdevice");
  fake.writeFile("nvvm/libdevice/libdevice.10.bc", "BC");
  fake.makeDirectory("lib");
  fake.writeFile("lib/libnvJitLink.so.13", "not really a library");
  ToolkitSearchEnvironment environment = cudaHomeAt(fake);
  llvm::Expected<CudaToolkit> found = findCudaToolkit(environment);
  KILN_ASSERT_OK(found);

  // Present: ptxas, libdevice, and the versioned nvJitLink.
  EXPECT_TRUE(found->location(ToolkitComponent::Ptxas).path.has_value());
  EXPECT_EQ(found->location(ToolkitComponent::Libdevice).path,
            fake.root() + "/nvvm/libdevice/libdevice.10.bc");
  EXPECT_EQ(found->location(ToolkitComponent::NvJitLink).path,
            fake.root() + "/lib/libnvJitLink.so.13");

  std::string message = errorMessage(found->require(ToolkitComponent::Fatbinary));
  EXPECT_TRUE(
      contains(message, "the CUDA toolkit at '" + fake.root() +
                            "' (found through $CUDA_HOME) has no fatbinary; looked for:\n  " +
                            fake.root() + "/bin/fatbinary"))
      << message;
  EXPECT_FALSE(errorMessage(found->require(ToolkitComponent::Nvcc)).empty());

  // A non-executable tool does not count.
  fake.writeFile("bin/nvcc", "#!/bin/sh\n");
  found = findCudaToolkit(environment);
  KILN_ASSERT_OK(found);
  EXPECT_FALSE(found->location(ToolkitComponent::Nvcc).path.has_value());
}

TEST(CudaToolkit, NvJitLinkSearchCoversLib64LibAndTargets) {
  FakeToolkit fake = FakeToolkit::create("Cuda compilation tools, release 13.0, V13.0.88");
  ToolkitSearchEnvironment environment = cudaHomeAt(fake);
  llvm::Expected<CudaToolkit> found = findCudaToolkit(environment);
  KILN_ASSERT_OK(found);
  std::string message = errorMessage(found->require(ToolkitComponent::NvJitLink));
  for (llvm::StringRef path : {"/lib64/libnvJitLink.so", "/lib64/libnvJitLink.so.13",
                               "/lib/libnvJitLink.so", "/targets/x86_64-linux/lib/libnvJitLink.so"})
    EXPECT_TRUE(contains(message, fake.root() + path.str())) << message;
}

TEST(CudaVersionParsing, VersionStrings) {
  EXPECT_EQ(parseCudaVersion("13.0"), (CudaVersion{13, 0, 0}));
  EXPECT_EQ(parseCudaVersion("13.0.88"), (CudaVersion{13, 0, 88}));
  EXPECT_EQ(parseCudaVersion("12.4.131.1"), (CudaVersion{12, 4, 131}));
  EXPECT_FALSE(parseCudaVersion("13"));
  EXPECT_FALSE(parseCudaVersion("a.b"));
  EXPECT_EQ((CudaVersion{13, 0, 0}).str(), "13.0");
  EXPECT_EQ((CudaVersion{13, 0, 88}).str(), "13.0.88");
}

TEST(CudaVersionParsing, PtxasVersionOutput) {
  EXPECT_EQ(parsePtxasVersionOutput("ptxas: NVIDIA (R) Ptx optimizing assembler\n"
                                    "Cuda compilation tools, release 13.0, V13.0.88\n"
                                    "Build cuda_13.0.r13.0/compiler.36424714_0\n"),
            (CudaVersion{13, 0, 88}));
  EXPECT_EQ(parsePtxasVersionOutput("Cuda compilation tools, release 12.4"),
            (CudaVersion{12, 4, 0}));
  EXPECT_FALSE(parsePtxasVersionOutput("ptxas 1.0"));
}

} // namespace
} // namespace kiln::cuda_tools
