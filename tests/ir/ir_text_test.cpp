//===- tests/ir/ir_text_test.cpp - Printing and reading typed IR ----------===//
//
// The typed IR's text form: what the printer writes, the parser reads back
// into the same module (printing it again gives the same text); what the
// parser cannot read is an error at a line and column; and no text, however
// damaged, crashes the parser or the verifier.
//
//===----------------------------------------------------------------------===//

#include "ir/ir_parser.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>

namespace kiln::ir {
namespace {

/// Every kind of value, type, operation and attribute the text has.
const char *const everyConstruct = R"(module 'every.construct'

kernel @every.construct.k$0(array(float32, 2d, C) %0 a, int64 %1 n, Record(s0[type=uint64;offset=0],s1[type=uint64;offset=8];16;True) %2 state) -> none synchronizes raises name('k') path('dir/every construct.py') loc(12:5) hash('00ff') options(fastmath, debug, noopt, lineinfo, forceinline, inline_always, cache, max_registers=32, lto=False, launch_bounds=(128, 2), link=('helpers.cu', 'it\'s.ptx'), carveout=-1) {
bb0:
  %3 = intrinsic threadIdx.y : int32 loc(13:9)
  %4 = intrinsic atomic.add[2] %0, 0:int64, 1:int64, 1.5:float32 : float32
  intrinsic syncthreads
  %5 = shared.array (4, 8) : array(float32, 2d, C)
  %6 = local.array (3) : array(int64, 1d, C)
  %7 = shared.dynamic : array(float32, 1d, C)
  %8 = array.view %0, 1:int64, %1, 2:int64 [i, a::c] : array(float32, 1d, A)
  %9 = array.view %0 [:, :b] : array(float32, 2d, A)
  %10 = tuple 1:int64, -2.5:float64, (3, (4.0, True), ()):Tuple(int64, Tuple(float64, bool), Tuple()) : Tuple(int64, float64, Tuple(int64, Tuple(float64, bool), Tuple()))
  %11 = tuple.get 1 %10 : float64
  %12 = complex (1+2j):complex128, 3j:complex128, (-0-1j):complex128, (nan+infj):complex128 : complex128
  %13 = add -9223372036854775808:int64, 18446744073709551615:uint64 : int64
  %14 = add nan:float64, -inf:float64 : float64
  %15 = add -0.0:float64, 1e-05:float64 : float64
  %16 = add np.float32(0.5):float32, np.int8(-3):float32 : float32
  %17 = record.get .s1 %2 : uint64
  record.set .s0 %2, %17
  print 'a \'quoted\'\n', %1, 'and', '(' ++ %11 ++ ',)'
  assert %18, 'it isn\'t : true'
  %19 = call @every.construct.helper$0 %1 : int64 loc(20:14)
  %20 = array.shape 1 %0 : int64
  %23 = array.reshape %0, 4:int64, -1:int64 : array(float32, 2d, C)
  %24 = tuple 1.0:float32, 2.0:float32 : float32x2
  %25 = libdevice .sincos 0.5:float64 : UniTuple(float64 x 2)
  %26 = intrinsic ldcg[2] %0, 0:int64, 1:int64 : float32
  intrinsic stwt[2] %0, 0:int64, 1:int64, %26
  branch %18, bb1, bb2 loc(21:8)
bb1:
  %21 = phi %1 from bb0, %22 from bb1 : int64
  %22 = add %21, undef(x):int64 : int64
  %18 = eq %22, deleted(y):int64 : bool
  jump bb1
bb2:
  raise ValueError('bad \\ value') loc(22:9)
}

function @every.construct.helper$0(int64 %0) -> int64 origin(reduction_loop) name('helper') {
bb0:
  return %0 loc(30:5)
}

function @every.construct.strings$0(array([unichr x 4], 1d, C) %0 s, array([char x 2], 1d, A) %1 b) -> none name('strings') {
bb0:
  %2 = array.load %0, 1:int64 : [unichr x 4]
  array.store %0, 0:int64, %2
  array.store %0, 0:int64, 'hé!':[unichr x 4]
  array.store %1, 0:int64, b'\xff\x00z':[char x 2]
  return
}

function @every.construct.members$0(Enum<UniTuple(float64 x 2)>(Planet) %0 p, IntEnum<int64>(Shape) %1 s) -> bool name('members') {
bb0:
  %2 = cast %0 : UniTuple(float64 x 2)
  %3 = eq %1, 2:IntEnum<int64>(Shape) : bool
  return %3
}

declare @external_symbol(float32 %0 x) -> float32 name('external') options(link=('ext.cu'))

declare @c_symbol(int32 %0 x) -> int32 abi(c) name('c_function') options(link=('c.cu'))

)";

std::unique_ptr<Module> parse(llvm::StringRef text, TypeContext &types) {
  llvm::Expected<std::unique_ptr<Module>> module = parseModule(text, "test.typed", types);
  if (!module) {
    ADD_FAILURE() << llvm::toString(module.takeError());
    return nullptr;
  }
  return std::move(*module);
}

std::string print(const Module &module) {
  std::string text;
  llvm::raw_string_ostream stream(text);
  module.print(stream);
  return text;
}

std::string parseError(llvm::StringRef text) {
  TypeContext types;
  llvm::Expected<std::unique_ptr<Module>> module = parseModule(text, "test.typed", types);
  if (module)
    return "(no error)";
  return llvm::toString(module.takeError());
}

TEST(IRTextTest, PrintingWhatWasReadGivesTheSameText) {
  TypeContext types;
  std::unique_ptr<Module> module = parse(everyConstruct, types);
  ASSERT_TRUE(module);
  EXPECT_EQ(print(*module), everyConstruct);
}

TEST(IRTextTest, ReadsValuesAttributesAndReferences) {
  TypeContext types;
  std::unique_ptr<Module> module = parse(everyConstruct, types);
  ASSERT_TRUE(module);
  ASSERT_EQ(module->functions.size(), 6u);
  const Function &kernel = *module->functions[0];
  EXPECT_EQ(kernel.kind, Function::Kind::Kernel);
  EXPECT_EQ(kernel.path, "dir/every construct.py");
  EXPECT_EQ(kernel.location.line, 12u);
  EXPECT_EQ(kernel.options.maxRegisters, 32u);
  EXPECT_FALSE(kernel.options.optimize);
  EXPECT_EQ(kernel.options.link[1], "it's.ptx");
  EXPECT_EQ(kernel.options.sharedMemoryCarveout, -1);
  EXPECT_EQ(module->functions[1]->origin, Function::Origin::ReductionLoop);
  EXPECT_EQ(module->functions[4]->kind, Function::Kind::External);
  EXPECT_FALSE(module->functions[4]->cAbi);
  EXPECT_TRUE(module->functions[5]->cAbi) << "abi(c): the function returns its value as C does";

  // An enum member's constant is its value, of the member's type.
  const Function &members = *module->functions[3];
  const auto *shape = llvm::cast<EnumMemberType>(members.arguments[1]->type());
  EXPECT_EQ(shape->className(), "Shape");
  EXPECT_TRUE(shape->isIntEnum());
  const auto *two = llvm::cast<Constant>(members.blocks[0]->instructions[1]->operands[1]);
  EXPECT_EQ(two->value.intValue128(), 2);
  EXPECT_EQ(two->value.enumClass(), "Shape");

  // The call refers to the function defined after it.
  const Block &entry = *kernel.blocks[0];
  const Instruction *call = nullptr;
  for (const Instruction *instruction : entry.instructions)
    if (instruction->opcode == Opcode::Call)
      call = instruction;
  ASSERT_TRUE(call);
  EXPECT_EQ(call->callee, module->functions[1].get());

  // The phi's operand from bb1 is defined after it; the branch condition
  // in bb0 is defined in bb1.
  const Instruction *phi = kernel.blocks[1]->instructions[0];
  EXPECT_EQ(phi->operands[1], kernel.blocks[1]->instructions[1]);
  EXPECT_EQ(entry.terminator.value, kernel.blocks[1]->instructions[2]);
  EXPECT_EQ(kernel.blocks[1]->predecessors.size(), 2u);

  // Constants keep their Python kind, and floats their exact value.
  const auto *minimum = llvm::cast<Constant>(entry.instructions[11]->operands[0]);
  EXPECT_EQ(minimum->value.intValue128(), -Int128(9223372036854775807) - 1);
  const auto *negativeZero = llvm::cast<Constant>(entry.instructions[13]->operands[0]);
  EXPECT_TRUE(std::signbit(negativeZero->value.floatValue()));
  const auto *half = llvm::cast<Constant>(entry.instructions[14]->operands[0]);
  EXPECT_EQ(half->value.numpyType(), types.float32());

  const Instruction *print = entry.instructions[17];
  ASSERT_EQ(print->printItems.size(), 6u);
  EXPECT_EQ(print->printItems[0].text, "a 'quoted'\n");
  EXPECT_FALSE(print->printItems[3].joined);
  EXPECT_TRUE(print->printItems[4].joined);
  EXPECT_TRUE(print->printItems[5].joined);
  EXPECT_EQ(print->operands.size(), 2u);
  EXPECT_TRUE(llvm::isa<VectorType>(entry.instructions[22]->type()));
  EXPECT_EQ(entry.instructions[18]->text, "it isn't : true");
  EXPECT_EQ(kernel.blocks[2]->terminator.message, "bad \\ value");
}

TEST(IRTextTest, ErrorsNameTheLineAndColumn) {
  const std::string header = "module 'm'\n\nkernel @m.k$0(int64 %0 n) -> none {\nbb0:\n";
  struct Case {
    std::string body;
    std::string message;
  };
  const Case cases[] = {
      {"  %1 = frobnicate %0 : int64\n  return\n}\n",
       "test.typed:5:8: unknown operation 'frobnicate'"},
      {"  %1 = add %0, %0 : int65\n  return\n}\n", "test.typed:5:21: unknown type 'int65'"},
      {"  %1 = add %0, %9 : int64\n  return\n}\n", "test.typed:5:16: %9 is used but never defined"},
      {"  %1 = add %0, %0\n  return\n}\n", "test.typed:5:12: expected ' : ' and the result type"},
      {"  %0 = add %0, %0 : int64\n  return\n}\n", "test.typed:5:3: %0 is defined twice"},
      {"  jump bb7\n}\n", "test.typed:5:8: bb7 is never defined"},
      {"  %1 = add %0, %0 : int64\n}\n", "test.typed:6:1: bb0 has no terminator"},
      {"  return\n", "the function has no closing '}'"},
      {"  %1 = add %0, 1:int6 : int64\n  return\n}\n", "test.typed:5:18: unknown type 'int6'"},
      {"  %1 = call @m.nowhere$0 %0 : int64\n  return\n}\n",
       "call of @m.nowhere$0, which is not in the module"},
      {"  %1 = add %0, 'text':int64 : int64\n  return\n}\n",
       "test.typed:5:16: a string is a run-time value only as a fixed-width string of its kind"},
      {"  %1 = add %0, b'text':[unichr x 4] : int64\n  return\n}\n",
       "a string is a run-time value only as a fixed-width string of its kind"},
      {"  %1 = add %0, 1:[char x] : int64\n  return\n}\n", "test.typed:5:25: expected a number"},
      {"  %1 = add %0, 1:[bytes x 2] : int64\n  return\n}\n",
       "test.typed:5:18: expected '[char x N]' or '[unichr x N]'"},
      {"  %1 = intrinsic threadIdx.w : int32\n  return\n}\n",
       "test.typed:5:18: unknown intrinsic 'threadIdx.w'"},
      {"  raise ValueError('unterminated)\n}\n", "unterminated string"},
  };
  for (const Case &c : cases)
    EXPECT_NE(parseError(header + c.body).find(c.message), std::string::npos)
        << "for:\n"
        << c.body << "got: " << parseError(header + c.body);
  EXPECT_NE(parseError("kernel @m.k$0() -> none {\n").find("test.typed:1:1: expected 'module'"),
            std::string::npos);
}

TEST(IRTextTest, CommentsAndBlankLinesAreIgnored) {
  TypeContext types;
  std::unique_ptr<Module> module = parse("# a hand-written test\nmodule 'm'  # its name\n\n"
                                         "function @m.f$0(int64 %0 n) -> int64 {  # a function\n"
                                         "bb0:\n\n  return %0  # 'quotes' don't matter here\n}\n",
                                         types);
  ASSERT_TRUE(module);
  EXPECT_EQ(print(*module), "module 'm'\n\nfunction @m.f$0(int64 %0 n) -> int64 {\nbb0:\n"
                            "  return %0\n}\n\n");
}

TEST(IRTextTest, TheVerifierRejectsUsesNotDominatedByTheirDefinition) {
  TypeContext types;
  std::unique_ptr<Module> module = parse(R"(module 'm'

function @m.f$0(bool %0 c) -> int64 {
bb0:
  branch %0, bb1, bb2
bb1:
  %1 = add 1:int64, 2:int64 : int64
  jump bb2
bb2:
  return %1
}
)",
                                         types);
  ASSERT_TRUE(module);
  std::optional<std::string> problem = verify(*module);
  ASSERT_TRUE(problem);
  EXPECT_NE(problem->find("uses %1 where it is not defined on every path"), std::string::npos)
      << *problem;
}

TEST(IRTextTest, TheVerifierChecksLibdeviceCallsAgainstLibdevicesTable) {
  const char *const calls = R"(module 'm'

function @m.f$0(float32 %0 x) -> none {
bb0:
  %1 = libdevice .%2 %0 : %3
  return
}
)";
  struct Case {
    const char *function, *type, *problem;
  };
  for (const Case &c :
       {Case{"sinf", "float32", nullptr}, Case{"frexpf", "Tuple(float32, int32)", nullptr},
        Case{"sin", "float64", "input 0 of __nv_sin has the wrong type float32"},
        Case{"sinf", "float64", "__nv_sinf cannot give float64"},
        Case{"atan2f", "float32", "__nv_atan2f takes 2 inputs, not 1"},
        Case{"sine", "float32", "libdevice has no function 'sine'"}}) {
    std::string text = calls;
    text.replace(text.find("%2"), 2, c.function);
    text.replace(text.find("%3"), 2, c.type);
    TypeContext types;
    std::unique_ptr<Module> module = parse(text, types);
    ASSERT_TRUE(module) << text;
    std::optional<std::string> problem = verify(*module);
    if (!c.problem) {
      EXPECT_FALSE(problem) << c.function << ": " << *problem;
      continue;
    }
    ASSERT_TRUE(problem) << c.function << " returning " << c.type << " was accepted";
    EXPECT_NE(problem->find(c.problem), std::string::npos) << *problem;
  }
}

TEST(IRTextTest, TheVerifierChecksDateTimeOperationsAgainstNumbasRules) {
  const char *const operation = R"(module 'm'

function @m.f$0(%1 %0 a, %2 %1 b) -> none {
bb0:
  %2 = %3 %0, %1 : %4
  return
}
)";
  struct Case {
    const char *lhs, *rhs, *opcode, *result, *problem;
  };
  const char *const noOperation = "no datetime64 operation takes";
  for (const Case &c : {
           Case{"datetime64[M]", "datetime64[D]", "sub", "timedelta64[D]", nullptr},
           Case{"datetime64[Y]", "timedelta64[M]", "add", "datetime64[M]", nullptr},
           Case{"timedelta64[D]", "datetime64[W]", "add", "datetime64[D]", nullptr},
           Case{"timedelta64[M]", "datetime64[W]", "add", "datetime64[W]", noOperation},
           Case{"timedelta64[s]", "timedelta64[ms]", "add", "timedelta64[ms]", nullptr},
           Case{"timedelta64[s]", "int64", "mul", "timedelta64[s]", nullptr},
           Case{"float32", "timedelta64[s]", "mul", "timedelta64[s]", nullptr},
           Case{"timedelta64[h]", "timedelta64[D]", "truediv", "float64", nullptr},
           Case{"timedelta64[h]", "float64", "floordiv", "timedelta64[h]", nullptr},
           Case{"datetime64[Y]", "datetime64[ns]", "lt", "bool", nullptr},
           Case{"datetime64[D]", "datetime64[D]", "add", "datetime64[D]", noOperation},
           Case{"datetime64[D]", "timedelta64[M]", "add", "datetime64[D]", noOperation},
           Case{"timedelta64[D]", "timedelta64[M]", "lt", "bool", noOperation},
           Case{"timedelta64[D]", "timedelta64[D]", "floordiv", "float64", noOperation},
           Case{"timedelta64[D]", "timedelta64[D]", "mod", "timedelta64[D]", noOperation},
           Case{"timedelta64[D]", "int32", "mul", "timedelta64[D]", noOperation},
           Case{"timedelta64[D]", "datetime64[D]", "eq", "bool", noOperation},
           Case{"datetime64[M]", "datetime64[D]", "sub", "timedelta64[M]",
                "this datetime64 operation gives another type than timedelta64[M]"},
       }) {
    std::string text = operation;
    auto fill = [&](const char *hole, const char *value) {
      text.replace(text.find(hole), std::strlen(hole), value);
    };
    fill("%1 %0 a", (std::string(c.lhs) + " %0 a").c_str());
    fill("%2 %1 b", (std::string(c.rhs) + " %1 b").c_str());
    fill("%3 %0", (std::string(c.opcode) + " %0").c_str());
    fill(": %4", (std::string(": ") + c.result).c_str());
    TypeContext types;
    std::unique_ptr<Module> module = parse(text, types);
    ASSERT_TRUE(module) << text;
    std::optional<std::string> problem = verify(*module);
    if (!c.problem) {
      EXPECT_FALSE(problem) << text << *problem;
      continue;
    }
    ASSERT_TRUE(problem) << text << "was accepted";
    EXPECT_NE(problem->find(c.problem), std::string::npos) << *problem;
  }
}

TEST(IRTextTest, DamagedTextNeverCrashesTheParserOrTheVerifier) {
  // Single-character edits, deleted and duplicated lines of valid text:
  // each gives an error or a module, which the verifier then judges.
  std::mt19937 random(20261125);
  const std::string original = everyConstruct;
  const char alphabet[] = "%@:,()[]{}'\\-0123456789.abjx# \nbb";
  unsigned parsed = 0;
  for (int round = 0; round < 4000; ++round) {
    std::string text = original;
    for (int edit = 0; edit < 1 + int(random() % 3); ++edit) {
      size_t at = random() % text.size();
      switch (random() % 4) {
      case 0:
        text[at] = alphabet[random() % (sizeof(alphabet) - 1)];
        break;
      case 1:
        text.erase(at, 1 + random() % 8);
        break;
      case 2:
        text.insert(at, 1, alphabet[random() % (sizeof(alphabet) - 1)]);
        break;
      default: {
        size_t start = text.rfind('\n', at);
        size_t end = text.find('\n', at);
        if (start != std::string::npos && end != std::string::npos)
          text.insert(end, text.substr(start, end - start));
      }
      }
    }
    TypeContext types;
    llvm::Expected<std::unique_ptr<Module>> module = parseModule(text, "damaged.typed", types);
    if (!module) {
      EXPECT_NE(llvm::toString(module.takeError()).find("damaged.typed:"), std::string::npos);
      continue;
    }
    ++parsed;
    (void)verify(**module);
  }
  // Some edits leave valid text (inside strings, say), so both paths run.
  EXPECT_GT(parsed, 0u);
}

} // namespace
} // namespace kiln::ir
