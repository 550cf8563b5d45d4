//===- ir/ir_printer.cpp - Typed IR as text -------------------------------===//
//
// [Note: typed IR text]
// The printed form holds everything a Module holds, so that ir_parser.cpp
// can read it back:
//
//   module 'kernels'
//
//   kernel @kernels.add$0(array(float32, 1d, C) %0 out, int64 %1 n) -> none
//       name('add') path('kernels.py') loc(3:1) hash('9f2c…') options(fastmath) {
//   bb0:
//     %2 = intrinsic threadIdx.x : int32 loc(4:9)
//     %3 = cast %2 : int64 loc(4:9)
//     array.store %0, %3, 1.0:float32 loc(5:5)
//     return loc(5:5)
//   }
//
// (the header is one line). A constant is its Python repr and its type
// (`1:int64`, `(1, 2.5):Tuple(int64, float64)`, `np.float32(0.5):float32`);
// a variable unbound on a path is `undef(x):T`, or `deleted(x):T` after
// `del`. Attributes equal to their defaults are left out.
//
//===----------------------------------------------------------------------===//

#include "ir/typed_ir.h"

#include <llvm/ADT/StringExtras.h>

namespace kiln::ir {

namespace {

bool isDimensionIntrinsic(Intrinsic intrinsic) {
  return intrinsic == Intrinsic::ThreadIdx || intrinsic == Intrinsic::BlockIdx ||
         intrinsic == Intrinsic::BlockDim || intrinsic == Intrinsic::GridDim;
}

void printValue(const Value *value, llvm::raw_ostream &os) {
  if (const auto *constant = llvm::dyn_cast<Constant>(value)) {
    // An enum member is its value, of the member's type: 1:Enum<int64>(Color).
    os << constant->value.memberValue().repr() << ':' << constant->type()->str();
    return;
  }
  if (const auto *undefined = llvm::dyn_cast<Undefined>(value)) {
    os << (undefined->cause == Undefined::Cause::Deleted ? "deleted(" : "undef(")
       << undefined->variable << "):" << value->type()->str();
    return;
  }
  os << '%' << value->id();
}

void printLocation(Location location, llvm::raw_ostream &os) {
  if (location.isValid())
    os << " loc(" << location.line << ':' << location.column << ')';
}

/// What an operation holds besides its operands, printed before them.
void printOperationData(const Instruction &instruction, llvm::raw_ostream &os) {
  switch (instruction.opcode) {
  case Opcode::Intrinsic:
    os << ' ' << spelling(instruction.intrinsic);
    if (isDimensionIntrinsic(instruction.intrinsic))
      os << '.' << "xyz"[instruction.index];
    else if (instruction.index != 0)
      os << '[' << instruction.index << ']';
    break;
  case Opcode::Call:
    os << " @" << instruction.callee->symbol;
    break;
  case Opcode::TupleGet:
  case Opcode::ArrayShape:
  case Opcode::ArrayStride:
  case Opcode::ArrayComplexPart:
    os << ' ' << instruction.index;
    break;
  case Opcode::RecordGet:
  case Opcode::RecordSet:
  case Opcode::LibdeviceCall:
    os << " ." << instruction.text;
    break;
  case Opcode::SharedArray:
  case Opcode::LocalArray:
    os << " (";
    for (size_t i = 0; i < instruction.shape.size(); ++i)
      os << (i ? ", " : "") << instruction.shape[i];
    os << ')';
    break;
  case Opcode::ConstArray:
    os << " (";
    for (size_t i = 0; i < instruction.shape.size(); ++i)
      os << (i ? ", " : "") << instruction.shape[i];
    os << ") x\"" << llvm::toHex(*instruction.data, /*LowerCase=*/true) << '"';
    break;
  case Opcode::ArrayAt:
    os << ' ' << instruction.address << " (";
    for (size_t i = 0; i < instruction.shape.size(); ++i)
      os << (i ? ", " : "") << instruction.shape[i];
    os << ") strides (";
    for (size_t i = 0; i < instruction.strides.size(); ++i)
      os << (i ? ", " : "") << instruction.strides[i];
    os << ')';
    break;
  default:
    break;
  }
}

void printOperands(const Instruction &instruction, llvm::raw_ostream &os) {
  if (instruction.opcode == Opcode::Print) {
    // Text and values in the order print() shows them.
    size_t next = 0;
    for (size_t i = 0; i < instruction.printItems.size(); ++i) {
      const PrintItem &item = instruction.printItems[i];
      os << (!i ? " " : item.joined ? " ++ " : ", ");
      if (item.kind == PrintItem::Kind::Text)
        os << quotedString(item.text);
      else
        printValue(instruction.operands[next++], os);
    }
    return;
  }
  for (size_t i = 0; i < instruction.operands.size(); ++i) {
    os << (i ? ", " : " ");
    printValue(instruction.operands[i], os);
    if (instruction.opcode == Opcode::Phi)
      os << " from bb" << instruction.incoming[i]->id;
  }
}

void printInstruction(const Instruction &instruction, llvm::raw_ostream &os) {
  os << "  ";
  if (instruction.type())
    os << '%' << instruction.id() << " = ";
  os << spelling(instruction.opcode);
  printOperationData(instruction, os);
  printOperands(instruction, os);
  if (instruction.opcode == Opcode::ArrayView) {
    os << " [";
    for (size_t i = 0; i < instruction.viewItems.size(); ++i) {
      const ViewItem &item = instruction.viewItems[i];
      os << (i ? ", " : "");
      if (!item.isSlice)
        os << 'i';
      else
        os << (item.hasStart ? "a" : "") << ':' << (item.hasStop ? "b" : "")
           << (item.hasStep ? ":c" : "");
    }
    os << ']';
  }
  if (instruction.opcode == Opcode::Assert && !instruction.text.empty())
    os << ", " << quotedString(instruction.text);
  if (instruction.type())
    os << " : " << instruction.type()->str();
  printLocation(instruction.location, os);
  os << '\n';
}

void printTerminator(const Terminator &t, llvm::raw_ostream &os) {
  switch (t.kind) {
  case Terminator::Kind::Jump:
    os << "  jump bb" << t.target->id;
    break;
  case Terminator::Kind::Branch:
    os << "  branch ";
    printValue(t.value, os);
    os << ", bb" << t.target->id << ", bb" << t.falseTarget->id;
    break;
  case Terminator::Kind::Return:
    os << "  return";
    if (t.value) {
      os << ' ';
      printValue(t.value, os);
    }
    break;
  case Terminator::Kind::Raise:
    os << "  raise " << t.exceptionClass << '(' << quotedString(t.message) << ')';
    break;
  }
  printLocation(t.location, os);
  os << '\n';
}

llvm::StringRef originName(Function::Origin origin) {
  switch (origin) {
  case Function::Origin::Source:
    return "source";
  case Function::Origin::UfuncLoop:
    return "ufunc_loop";
  case Function::Origin::ReductionLoop:
    return "reduction_loop";
  }
  return "?";
}

/// The options that differ from Numba's defaults, or nothing.
void printOptions(const JitOptions &options, llvm::raw_ostream &os) {
  std::vector<std::string> items;
  for (const JitFlag &flag : jitFlags)
    if (options.*flag.member == flag.whenWritten)
      items.push_back(flag.spelling);
  if (!options.fastmathFlags.empty()) {
    std::string flags = "fastmath_flags=(";
    for (size_t i = 0; i < options.fastmathFlags.size(); ++i)
      flags += (i ? ", " : "") + options.fastmathFlags[i];
    items.push_back(flags + ")");
  }
  if (options.maxRegisters)
    items.push_back("max_registers=" + std::to_string(*options.maxRegisters));
  if (options.lto)
    items.push_back(std::string("lto=") + (*options.lto ? "True" : "False"));
  if (!options.launchBounds.empty()) {
    std::string bounds = "launch_bounds=(";
    for (size_t i = 0; i < options.launchBounds.size(); ++i)
      bounds += (i ? ", " : "") + std::to_string(options.launchBounds[i]);
    items.push_back(bounds + ")");
  }
  if (!options.link.empty()) {
    std::string files = "link=(";
    for (size_t i = 0; i < options.link.size(); ++i)
      files += (i ? ", " : "") + quotedString(options.link[i]);
    items.push_back(files + ")");
  }
  if (options.sharedMemoryCarveout)
    items.push_back("carveout=" + std::to_string(*options.sharedMemoryCarveout));
  if (items.empty())
    return;
  os << " options(";
  for (size_t i = 0; i < items.size(); ++i)
    os << (i ? ", " : "") << items[i];
  os << ')';
}

void printHeader(const Function &function, llvm::raw_ostream &os) {
  os << (function.kind == Function::Kind::Kernel     ? "kernel @"
         : function.kind == Function::Kind::External ? "declare @"
                                                     : "function @")
     << function.symbol << '(';
  for (size_t i = 0; i < function.arguments.size(); ++i) {
    const Argument *argument = function.arguments[i];
    os << (i ? ", " : "") << argument->type()->str() << " %" << argument->id();
    if (!argument->name.empty())
      os << ' ' << argument->name;
  }
  os << ") -> " << function.returnType->str();
  if (function.synchronizes)
    os << " synchronizes";
  if (function.raises)
    os << " raises";
  if (function.cooperative)
    os << " cooperative";
  if (function.cAbi)
    os << " abi(c)";
  if (function.origin != Function::Origin::Source)
    os << " origin(" << originName(function.origin) << ')';
  if (!function.sourceName.empty())
    os << " name(" << quotedString(function.sourceName) << ')';
  if (!function.path.empty())
    os << " path(" << quotedString(function.path) << ')';
  printLocation(function.location, os);
  if (!function.semanticHash.empty())
    os << " hash(" << quotedString(function.semanticHash) << ')';
  printOptions(function.options, os);
}

} // namespace

void Module::print(llvm::raw_ostream &os) const {
  os << "module " << quotedString(name) << "\n\n";
  for (const auto &function : functions) {
    printHeader(*function, os);
    if (function->kind == Function::Kind::External) {
      os << "\n\n";
      continue;
    }
    os << " {\n";
    for (const auto &block : function->blocks) {
      os << "bb" << block->id << ":\n";
      for (const Instruction *instruction : block->instructions)
        printInstruction(*instruction, os);
      printTerminator(block->terminator, os);
    }
    os << "}\n\n";
  }
}

} // namespace kiln::ir
