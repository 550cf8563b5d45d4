//===- tests/frontend/type_inference_test.cpp - Numba's typing ------------===//
//
// Type inference on small functions, one behaviour of Numba's each. The
// examples' golden files and the typing tables cover the breadth; these
// pin down control flow, specialization and error reporting.
//
//===----------------------------------------------------------------------===//

#include "frontend/emit/emit_typed_ir.h"
#include "frontend/frontend.h"

#include <gtest/gtest.h>
#include <llvm/Support/raw_ostream.h>

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
  /// As typesOf, with literal types kept: "Tuple(Literal[int](1), float64)".
  std::string literalTypesOf(llvm::StringRef function, llvm::StringRef name) const {
    for (const CheckedModule::Function &f : module->functions) {
      if (f.decl->name != function || f.specializations.empty())
        continue;
      const Specialization &spec = *f.specializations.front();
      std::set<std::string> found;
      for (const ssa::VariableDef &variable : spec.ssa->variables)
        if (variable.name == name)
          if (const Type *type = spec.typeOf(variable.value))
            found.insert(type->str());
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
  std::string source =
      "import math\nimport numpy as np\nfrom numba import cuda, float32, int32\n\n" + body;
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

TEST(TypeInferenceTest, CodeAfterReturnDoesNotFlowIntoTheMerge) {
  // The dead assignment must vanish from the phi at the merge too (it used
  // to leave the phi pointing at a deleted block).
  Checked c = check(R"py(
@cuda.jit("void(float64[:])")
def k(out):
    y = 1
    if out[0] > 0:
        return
        y = 2.5
    out[0] = y
)py");
  ASSERT_FALSE(c.module->hasErrors()) << c.diagnostics;
  EXPECT_EQ(c.typesOf("k", "y"), "int64");
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

TEST(TypeInferenceTest, RecursionTakesTheTypeOfTheOtherReturns) {
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
  EXPECT_FALSE(c.module->hasErrors()) << c.diagnostics;
}

TEST(TypeInferenceTest, RunawayRecursionIsDiagnosed) {
  Checked c = check(R"py(
@cuda.jit(device=True)
def forever(n):
    return forever(n + 1)

@cuda.jit("void(int64[:])")
def k(a):
    a[0] = forever(a[0])
)py");
  EXPECT_TRUE(c.module->hasErrors());
  EXPECT_NE(c.diagnostics.find("cannot type the recursive call to 'forever'"), std::string::npos)
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

TEST(TypeInferenceTest, TuplesOfDifferentLiteralsIterateAndIndexAsOneType) {
  // Numba types builtins on literal-free arguments first, so (1, 2, 3) is a
  // UniTuple(int64 x 3) to `for` and to run-time indices.
  Checked c = check(R"py(
STEPS = (1, 2, 3)

@cuda.jit("void(int64[:], int64)")
def k(x, n):
    t = (1, 2, 3)
    s = 0
    for v in t:
        s += v
    for w in STEPS:
        s += w
    x[0] = s + t[n] + STEPS[n]
)py");
  ASSERT_FALSE(c.module->hasErrors()) << c.diagnostics;
  EXPECT_EQ(c.literalTypesOf("k", "t"), "Tuple(Literal[int](1), Literal[int](2), Literal[int](3))");
  EXPECT_EQ(c.typesOf("k", "v"), "int64");
  EXPECT_EQ(c.typesOf("k", "w"), "int64");
}

TEST(TypeInferenceTest, ConstantTuplesAreTypedAsNumbaTypesThem) {
  // A tuple written in a kernel is built from its elements, typed as values
  // (nested tuples lose their literals); a global tuple is a tuple of
  // literals only if all its elements can be literals.
  Checked c = check(R"py(
MIXED = (1, 2.5)
INTS = (1, 2)
NESTED = (1, (2, 3))

@cuda.jit("void(float64[:])")
def k(x):
    a = MIXED
    b = INTS
    c = NESTED
    d = (1, (2, 3))
    e = (1, 2.5)
    x[0] = a[0] + b[0] + c[0] + d[0] + e[0]
)py");
  ASSERT_FALSE(c.module->hasErrors()) << c.diagnostics;
  EXPECT_EQ(c.literalTypesOf("k", "a"), "Tuple(int64, float64)");
  EXPECT_EQ(c.literalTypesOf("k", "b"), "Tuple(Literal[int](1), Literal[int](2))");
  EXPECT_EQ(c.literalTypesOf("k", "c"), "Tuple(int64, UniTuple(int64 x 2))");
  EXPECT_EQ(c.literalTypesOf("k", "d"), "Tuple(Literal[int](1), UniTuple(int64 x 2))");
  EXPECT_EQ(c.literalTypesOf("k", "e"), "Tuple(Literal[int](1), float64)");
}

TEST(TypeInferenceTest, LeftOutArgumentsTakeTheirDefaults) {
  Checked c = check(R"py(
@cuda.jit(device=True)
def offset(a, b=2, scale=1.5):
    return a * scale + b

@cuda.jit("void(float32[:])")
def k(x):
    x[0] = offset(x[0])
    x[1] = offset(x[0], scale=2.5)
)py");
  ASSERT_FALSE(c.module->hasErrors()) << c.diagnostics;
  // As in Numba: an omitted argument specializes as omitted(default=...),
  // and the function sees the default's type.
  EXPECT_EQ(c.specializationsOf("offset"),
            (std::vector<std::string>{"(float32, omitted(default=2), omitted(default=1.5))",
                                      "(float32, omitted(default=2), float64)"}));
  EXPECT_EQ(c.typesOf("offset", "b"), "int64");
  EXPECT_EQ(c.typesOf("offset", "scale"), "float64");

  // The caller passes the default values.
  std::unique_ptr<ir::Module> ir = emitTypedIR(*c.module, "test");
  ASSERT_TRUE(ir) << c.diagnostics;
  std::vector<std::string> calls;
  for (const auto &function : ir->functions) {
    if (function->kind != ir::Function::Kind::Kernel)
      continue;
    for (const auto &block : function->blocks)
      for (const ir::Instruction *instruction : block->instructions) {
        if (instruction->opcode != ir::Opcode::Call)
          continue;
        std::string operands;
        for (const ir::Value *operand : llvm::ArrayRef(instruction->operands).drop_front())
          if (const auto *constant = llvm::dyn_cast<ir::Constant>(operand))
            operands += constant->value.repr() + ":" + constant->type()->str() + " ";
          else
            operands += "? ";
        calls.push_back(operands);
      }
  }
  EXPECT_EQ(calls, (std::vector<std::string>{"2:int64 1.5:float64 ", "2:int64 2.5:float64 "}));
}

TEST(TypeInferenceTest, IgnoredSubmoduleImportsKeepThePackage) {
  // `import numba.foo` is ignored with a warning, but `numba` stays numba.
  Checked c = check(R"py(
import numba
import numba.foo
import numpy.random

@numba.cuda.jit("void(float32[:])")
def k(x):
    x[0] = numpy.float32(1)
)py");
  EXPECT_FALSE(c.module->hasErrors()) << c.diagnostics;
  EXPECT_EQ(c.module->diags.warningCount(), 2u) << c.diagnostics;
}

TEST(TypeInferenceTest, NumbaCoreTypesHasTheMembersOfNumbaTypes) {
  Checked c = check(R"py(
from numba.core import types
from numba.core.types import int32 as i32

@cuda.jit((types.float32[::1], i32, types.UniTuple(types.int64, 2)))
def k(x, n, t):
    x[0] = n + t[0]
)py");
  ASSERT_FALSE(c.module->hasErrors()) << c.diagnostics;
  EXPECT_EQ(c.specializationsOf("k"),
            (std::vector<std::string>{"(array(float32, 1d, C), int32, UniTuple(int64 x 2))"}));
}

TEST(TypeInferenceTest, SharedMemoryCarveoutIsRecorded) {
  Checked c = check(R"py(
@cuda.jit("void(float32[:])", shared_memory_carveout="MaxL1")
def k1(x):
    pass

@cuda.jit("void(float32[:])", shared_memory_carveout="MaxShared")
def k2(x):
    pass

@cuda.jit("void(float32[:])", shared_memory_carveout=25)
def k3(x):
    pass

@cuda.jit("void(float32[:])")
def k4(x):
    pass
)py");
  ASSERT_FALSE(c.module->hasErrors()) << c.diagnostics;
  std::vector<std::optional<int>> carveouts;
  for (const auto &decl : c.module->scope->functions())
    carveouts.push_back(decl->options.sharedMemoryCarveout);
  EXPECT_EQ(carveouts, (std::vector<std::optional<int>>{0, 100, 25, std::nullopt}));
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
