//===- tests/frontend/file_prefix_map_test.cpp - Recorded source paths ----===//
//
// FilePrefixMap is GCC's -ffile-prefix-map for the paths a build records:
// the project root first, then --file-prefix-map's entries, the last that
// matches winning, prefixes compared character by character (what gcc 12
// does with -ffile-prefix-map on __FILE__).
//
//===----------------------------------------------------------------------===//

#include "frontend/emit/emit_typed_ir.h"
#include "frontend/frontend.h"
#include "frontend/source/file_prefix_map.h"

#include <gtest/gtest.h>
#include <llvm/ADT/SmallString.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/raw_ostream.h>

#include <string>

namespace kiln {
namespace {

std::string currentFolder() {
  llvm::SmallString<256> folder;
  EXPECT_FALSE(llvm::sys::fs::current_path(folder));
  return folder.str().str();
}

TEST(FilePrefixMap, PathsInTheRootBecomeRelativeAndOthersStayAsGiven) {
  FilePrefixMap map;
  map.addRoot("/work/checkout");
  EXPECT_EQ(map.remap("/work/checkout/pkg/kernels.py"), "pkg/kernels.py");
  EXPECT_EQ(map.remap("/work/checkout/pkg/../pkg/./helpers.py"), "pkg/helpers.py");
  EXPECT_EQ(map.remap("/work/checkout-2/pkg/kernels.py"), "/work/checkout-2/pkg/kernels.py")
      << "the root is a folder: a sibling whose name starts with it is not in it";
  EXPECT_EQ(map.remap("/elsewhere/kernels.py"), "/elsewhere/kernels.py");
}

TEST(FilePrefixMap, RelativePathsAreComparedInTheirAbsoluteForm) {
  FilePrefixMap map;
  map.addRoot(currentFolder());
  EXPECT_EQ(map.remap("pkg/kernels.py"), "pkg/kernels.py");
  EXPECT_EQ(map.remap("./pkg/kernels.py"), "pkg/kernels.py");
}

TEST(FilePrefixMap, TheLastMatchingEntryWinsWhateverItsLength) {
  FilePrefixMap longerFirst;
  longerFirst.add("/src/pkg", "/long");
  longerFirst.add("/src", "/short");
  EXPECT_EQ(longerFirst.remap("/src/pkg/kernels.py"), "/short/pkg/kernels.py");

  FilePrefixMap shorterFirst;
  shorterFirst.add("/src", "/short");
  shorterFirst.add("/src/pkg", "/long");
  EXPECT_EQ(shorterFirst.remap("/src/pkg/kernels.py"), "/long/kernels.py");

  FilePrefixMap same;
  same.add("/src", "/a");
  same.add("/src", "/b");
  EXPECT_EQ(same.remap("/src/kernels.py"), "/b/kernels.py");
}

TEST(FilePrefixMap, EntriesGivenAfterTheRootWinOverIt) {
  FilePrefixMap map;
  map.addRoot("/work/checkout");
  map.add("/work/checkout", "/src");
  EXPECT_EQ(map.remap("/work/checkout/pkg/kernels.py"), "/src/pkg/kernels.py");
  map.add("/nowhere", "/x");
  EXPECT_EQ(map.remap("/work/checkout/pkg/kernels.py"), "/src/pkg/kernels.py")
      << "an entry that does not match takes nothing from one that does";
}

TEST(FilePrefixMap, PrefixesAreComparedCharacterByCharacter) {
  FilePrefixMap map;
  map.add("/src/pk", "/X");
  EXPECT_EQ(map.remap("/src/pkg/kernels.py"), "/Xg/kernels.py");
  FilePrefixMap everything;
  everything.add("", "/mapped");
  EXPECT_EQ(everything.remap("/src/kernels.py"), "/mapped/src/kernels.py");
}

TEST(FilePrefixMap, ARelativeOldPrefixIsTakenFromTheCurrentFolder) {
  FilePrefixMap map;
  map.add("pkg/", "lib/");
  EXPECT_EQ(map.remap(currentFolder() + "/pkg/kernels.py"), "lib/kernels.py");
  EXPECT_EQ(map.remap("pkg/kernels.py"), "lib/kernels.py");
  FilePrefixMap dot;
  dot.add(".", "/build");
  EXPECT_EQ(dot.remap("pkg/kernels.py"), "/build/pkg/kernels.py");
}

TEST(FilePrefixMap, NamesOfSourcesThatAreNoFilesStayAsTheyAre) {
  FilePrefixMap map;
  map.add("", "/mapped");
  EXPECT_EQ(map.remap("<kiln>/numba/cuda/random.py"), "<kiln>/numba/cuda/random.py");
  EXPECT_EQ(map.remap("<command line>"), "<command line>");
  EXPECT_EQ(FilePrefixMap().remap("pkg/kernels.py"), "pkg/kernels.py");
}

TEST(FilePrefixMap, EntriesSplitAtTheirFirstEqualsSign) {
  auto parsed = FilePrefixMap::parse("/a=b=/c");
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed->first, "/a");
  EXPECT_EQ(parsed->second, "b=/c");
  auto empty = FilePrefixMap::parse("/a=");
  ASSERT_TRUE(empty);
  EXPECT_EQ(empty->second, "");
  EXPECT_FALSE(FilePrefixMap::parse("/a"));
}

TEST(FilePrefixMap, TheTypedIRRecordsMappedPaths) {
  FrontendOptions options;
  options.recordedPaths.addRoot("/work/checkout");
  std::unique_ptr<CheckedModule> checked =
      checkSource("/work/checkout/pkg/kernels.py",
                  "from numba import cuda\n\n\n@cuda.jit('void(float32[::1])')\n"
                  "def scale(x):\n    x[0] = 2\n",
                  options);
  ASSERT_FALSE(checked->hasErrors());
  std::unique_ptr<ir::Module> typed = emitTypedIR(*checked, "pkg.kernels");
  ASSERT_TRUE(typed);
  ASSERT_FALSE(typed->functions.empty());
  for (const auto &function : typed->functions)
    EXPECT_EQ(function->path, "pkg/kernels.py") << function->symbol;
}

TEST(FilePrefixMap, DiagnosticsKeepThePathsGiven) {
  FrontendOptions options;
  options.recordedPaths.addRoot("/work/checkout");
  std::unique_ptr<CheckedModule> checked =
      checkSource("/work/checkout/pkg/kernels.py",
                  "from numba import cuda\n\n\n@cuda.jit('void(float32[::1])')\n"
                  "def scale(x):\n    x[0] = undefined_name\n",
                  options);
  ASSERT_TRUE(checked->hasErrors());
  std::string text;
  llvm::raw_string_ostream os(text);
  checked->diags.renderText(os, /*color=*/false);
  EXPECT_NE(text.find("/work/checkout/pkg/kernels.py:6:"), std::string::npos) << text;
}

} // namespace
} // namespace kiln
