//===- tests/frontend/type_inference_test.cpp - Numba's typing ------------===//
//
// Type inference on small functions, one behaviour of Numba's each. The
// examples' golden files and the typing tables cover the breadth; these
// pin down control flow, specialization and error reporting.
//
//===----------------------------------------------------------------------===//

#include "frontend/frontend.h"

#include <llvm/Support/raw_ostream.h>

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

namespace kiln {
namespace {

struct Checked {
  std::unique_ptr<CheckedModule> module;
  std::string diagnostics;

  /// The distinct types of variable `name` in the first specialization of
  /// `function`, as "int64" or "float64, int64".
  std::string typesOf(llvm::StringRef function, llvm::StringRef name) const {
    for (const CheckedModule::Function &f : module->functions) {
      if (f.decl->name != function || f.specializations.empty())
        continue;
      const Specialization &spec = *f.specializations.front();
      std::set<std::string> found;
      for (const ssa::VariableDef &variable : spec.ssa->variables)
        if (variable.name == name)
          if (const Type *type = spec.typeOf(variable.value))
            found.insert(module->types.unliteral(type)->str());
      std::string text;
      for (const std::string &type : found)
        text += (text.empty() ? "" : ", ") + type;
      return text;
    }
    return "<no such function>";
  }
  std::string returnOf(llvm::StringRef function, size_t specialization = 0) const {
    for (const CheckedModule::Function &f : module->functions)
      if (f.decl->name == function && specialization < f.specializations.size())
        return f.specializations[specialization]->returnType->str();
    return "<no such specialization>";
  }
  std::vector<std::string> specializationsOf(llvm::StringRef function) const {
    std::vector<std::string> result;
    for (const CheckedModule::Function &f : module->functions)
      if (f.decl->name == function)
        for (const Specialization *spec : f.specializations)
          result.push_back(spec->argumentList());
    return result;
  }
};

Checked check(const std::string &body) {
  FrontendOptions options;
  options.readPyproject = false;
  std::string source = "import math\nimport numpy as np\nfrom numba import cuda, float32, int32\n\n" + body;
  Checked result{checkSource("test.py", source, options), ""};
  llvm::raw_string_ostream os(result.diagnostics);
  result.module->diags.renderText(os, false);
  return result;
}

TEST(TypeInferenceTest, EachAssignmentHasItsOwnType) {
  Checked c = check(R"py(
@cuda.jit("void(float64[:])")
def k(out):
    x = 7
    y = x // 2
    x = 0.5
    out[0] = x + y
)py");
  ASSERT_FALSE(c.module->hasErrors()) << c.diagnostics;
  EXPECT_EQ(c.typesOf("k", "x"), "float64, int64");
  EXPECT_EQ(c.typesOf("k", "y"), "int64"); // computed from the int, not the float
}

TEST(TypeInferenceTest, LoopCarriedVariablesUnifyAtTheLoopHeader) {
  Checked c = check(R"py(
@cuda.jit("void(float32[:], float64[:])")
def k(a, out):
    s = 0
    for i in range(a.size):
        s += a[i]
    out[0] = s
)py");
  ASSERT_FALSE(c.module->hasErrors()) << c.diagnostics;
  // int64 joined with float64 (int64 + float32) is float64.
  EXPECT_EQ(c.typesOf("k", "s"), "float64, int64");
  EXPECT_EQ(c.typesOf("k", "i"), "int64");
}

TEST(TypeInferenceTest, RangeOfInt32IteratesInt32) {
  Checked c = check(R"py(
@cuda.jit("void(int32, int32[:])")
def k(n, out):
    for j in range(n):
        out[j] = j
    for m in range(3):
        out[m] = m
)py");
  ASSERT_FALSE(c.module->hasErrors()) << c.diagnostics;
  EXPECT_EQ(c.typesOf("k", "j"), "int32");
  EXPECT_EQ(c.typesOf("k", "m"), "int64");
}

TEST(TypeInferenceTest, ThreadIndicesAreInt32AndGridIsInt64) {
  Checked c = check(R"py(
@cuda.jit("void(float32[:, :])")
def k(a):
    t = cuda.threadIdx.x
    x, y = cuda.grid(2)
    n = cuda.gridsize(1)
    a[x, y] = t + n
)py");
  ASSERT_FALSE(c.module->hasErrors()) << c.diagnostics;
  EXPECT_EQ(c.typesOf("k", "t"), "int32");
  EXPECT_EQ(c.typesOf("k", "x"), "int64");
  EXPECT_EQ(c.typesOf("k", "n"), "int64");
}

TEST(TypeInferenceTest, DeviceFunctionsAreSpecializedPerCallSiteTypes) {
  Checked c = check(R"py(
@cuda.jit(device=True)
def scale(v, k):
    return v * k

@cuda.jit("void(float32[:], float64[:])")
def k(a, b):
    a[0] = scale(a[0], 3)
    b[0] = scale(b[0], 3)
    a[1] = scale(a[1], a[2])
)py");
  ASSERT_FALSE(c.module->hasErrors()) << c.diagnostics;
  // As Numba does, literal arguments specialize with their literal type.
  EXPECT_EQ(c.specializationsOf("scale"),
            (std::vector<std::string>{"(float32, Literal[int](3))", "(float64, Literal[int](3))",
                                      "(float32, float32)"}));
  EXPECT_EQ(c.returnOf("scale", 0), "float64"); // float32 * int literal
  EXPECT_EQ(c.returnOf("scale", 2), "float32");
}

TEST(TypeInferenceTest, ReturnTypesUnify) {
  Checked c = check(R"py(
@cuda.jit(device=True)
def clamp(v):
    if v < 0:
        return 0
    return v

@cuda.jit("void(float32[:])")
def k(a):
    a[0] = clamp(a[0])
)py");
  ASSERT_FALSE(c.module->hasErrors()) << c.diagnostics;
  EXPECT_EQ(c.returnOf("clamp"), "float64"); // unify(Literal[int](0), float32)
}

TEST(TypeInferenceTest, ConstantsAreFrozenAsLiterals) {
  Checked c = check(R"py(
TILE = 16
SCALE = np.float32(0.5)

@cuda.jit("void(float32[:])")
def k(a):
    tile = cuda.shared.array((TILE, TILE), float32)
    tile[0, 0] = a[0] * SCALE
    a[0] = tile[0, 0]
)py");
  ASSERT_FALSE(c.module->hasErrors()) << c.diagnostics;
  EXPECT_EQ(c.typesOf("k", "tile"), "array(float32, 2d, C)");
}

TEST(TypeInferenceTest, IncompatibleAssignmentsAcrossBranchesAreAnError) {
  Checked c = check(R"py(
@cuda.jit("void(int64[:], int64)")
def k(x, sel):
    for i in range(10):
        if i == 8:
            x = 10
        else:
            x[0] = 10
)py");
  EXPECT_TRUE(c.module->hasErrors());
  EXPECT_NE(c.diagnostics.find("cannot unify"), std::string::npos) << c.diagnostics;
}

TEST(TypeInferenceTest, RecursionIsDiagnosed) {
  Checked c = check(R"py(
@cuda.jit(device=True)
def fact(n):
    if n <= 1:
        return 1
    return n * fact(n - 1)

@cuda.jit("void(int64[:])")
def k(a):
    a[0] = fact(a[0])
)py");
  EXPECT_TRUE(c.module->hasErrors());
  EXPECT_NE(c.diagnostics.find("recursive call to 'fact' is not supported"), std::string::npos)
      << c.diagnostics;
}

TEST(TypeInferenceTest, ErrorsInDeviceFunctionsNameTheCallChain) {
  Checked c = check(R"py(
@cuda.jit(device=True)
def inner(v):
    return v.nonexistent

@cuda.jit(device=True)
def outer(v):
    return inner(v) + 1

@cuda.jit("void(float32[:])")
def k(a):
    a[0] = outer(a[0])
)py");
  EXPECT_TRUE(c.module->hasErrors());
  size_t error = c.diagnostics.find("error: float32 has no attribute 'nonexistent'");
  size_t innerNote = c.diagnostics.find("note: in call to device function 'inner' with (float32)");
  size_t outerNote = c.diagnostics.find("note: in call to device function 'outer' with (float32)");
  size_t kernelNote = c.diagnostics.find("note: in kernel 'k' compiled for");
  ASSERT_NE(error, std::string::npos) << c.diagnostics;
  EXPECT_LT(error, innerNote) << c.diagnostics;
  EXPECT_LT(innerNote, outerNote) << c.diagnostics;
  EXPECT_LT(outerNote, kernelNote) << c.diagnostics;
}

TEST(TypeInferenceTest, AllErrorsOfAModuleAreReportedInOneRun) {
  Checked c = check(R"py(
@cuda.jit("void(float32[:])")
def k1(a):
    a[0] = a[0] + None

@cuda.jit("void(float32[:])")
def k2(a):
    a[0.5] = 1
)py");
  EXPECT_EQ(c.module->diags.errorCount(), 2u) << c.diagnostics;
}

} // namespace
} // namespace kiln
