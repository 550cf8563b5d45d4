//===- tests/pipeline/cuda_includes_test.cpp ------------------------------===//
//
// The headers of a CUDA C/C++ link file, as its cache keys and the build's
// dependency file list them, found by scanning #include lines on disk.
//
//===----------------------------------------------------------------------===//

#include "pipeline/cuda_includes.h"

#include <gtest/gtest.h>
#include <llvm/ADT/SmallString.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Path.h>
#include <llvm/Support/raw_ostream.h>

#include <string>
#include <vector>

namespace {

using kiln::pipeline::includedFiles;

class CudaIncludes : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("kiln-cuda-includes", root));
  }
  void TearDown() override { llvm::sys::fs::remove_directories(root); }

  /// Writes `text` to `relative` under the test's folder; its absolute path.
  std::string write(llvm::StringRef relative, llvm::StringRef text) {
    llvm::SmallString<256> path(root);
    llvm::sys::path::append(path, relative);
    llvm::sys::fs::create_directories(llvm::sys::path::parent_path(path));
    std::error_code error;
    llvm::raw_fd_ostream out(path, error);
    out << text;
    return std::string(path);
  }
  std::string folder(llvm::StringRef relative) {
    llvm::SmallString<256> path(root);
    llvm::sys::path::append(path, relative);
    return std::string(path);
  }

  llvm::SmallString<256> root;
};

TEST_F(CudaIncludes, FollowsQuotedIncludesFromTheIncludingFilesFolder) {
  std::string file = write("src/kernels.cu", "#include \"local.cuh\"\nint f();\n");
  std::string local = write("src/local.cuh", "  #  include \"detail/deep.cuh\"\n");
  std::string deep = write("src/detail/deep.cuh", "#define DEEP 1\n");
  EXPECT_EQ(includedFiles(file, {}), (std::vector<std::string>{deep, local}))
      << "a quoted include is looked up beside the file that includes it, transitively";
}

TEST_F(CudaIncludes, FindsBracketedIncludesInTheIncludeFoldersOnly) {
  std::string file = write("src/kernels.cu", "#include <factor.cuh>\n#include <beside.cuh>\n");
  write("src/beside.cuh", "#define BESIDE 1\n");
  std::string factor = write("headers/factor.cuh", "#define FACTOR 2\n");
  EXPECT_EQ(includedFiles(file, {folder("missing"), folder("headers")}),
            std::vector<std::string>{factor})
      << "<...> searches the include folders, in order, and not the file's own folder";
}

TEST_F(CudaIncludes, LeavesOutHeadersFoundNowhereAndComputedIncludes) {
  std::string file = write("src/kernels.cu", "#include <cuda_fp16.h>\n#include HEADER\n"
                                             "#include \"unterminated\n// #include \"x.cuh\"\n");
  EXPECT_TRUE(includedFiles(file, {}).empty())
      << "toolkit headers, computed and malformed includes, and comments name no file here";
}

TEST_F(CudaIncludes, CountsIncludesThePreprocessorWouldSkipAndStopsAtCycles) {
  std::string file = write("src/kernels.cu", "#if 0\n#include \"skipped.cuh\"\n#endif\n"
                                             "#include \"a.cuh\"\n");
  std::string skipped = write("src/skipped.cuh", "");
  std::string a = write("src/a.cuh", "#include \"b.cuh\"\n#include \"kernels.cu\"\n");
  std::string b = write("src/b.cuh", "#include \"a.cuh\"\n");
  EXPECT_EQ(includedFiles(file, {}), (std::vector<std::string>{a, b, skipped}))
      << "every #include line counts, each file once, without the file itself";
}

} // namespace
