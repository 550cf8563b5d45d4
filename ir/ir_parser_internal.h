//===- ir/ir_parser_internal.h - The parser of printed typed IR -*- C++ -*-===//
//
// The classes behind parseModule(), shared by the files that read each part
// of the text: a Cursor over one line, and the Parser, whose members are
// defined by subject: tokens (lines, errors, numbers, strings, locations;
// ir_parser_tokens.cpp), types and constants (ir_parser_types.cpp), values,
// blocks and instructions (ir_parser_instructions.cpp), and functions and
// the module (ir_parser.cpp).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/typed_ir.h"

#include <llvm/ADT/DenseMap.h>
#include <llvm/ADT/DenseSet.h>
#include <llvm/ADT/SmallVector.h>
#include <llvm/ADT/StringExtras.h>
#include <llvm/ADT/StringMap.h>
#include <llvm/ADT/StringRef.h>
#include <llvm/ADT/Twine.h>
#include <llvm/Support/Error.h>

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace kiln::ir::reader {

/// The unparsed rest of one line, and where it is.
struct Cursor {
  llvm::StringRef rest;
  unsigned line = 0;
  const char *lineStart = nullptr;

  unsigned column() const { return unsigned(rest.data() - lineStart) + 1; }
  void skipSpace() { rest = rest.ltrim(" \t"); }
  bool atEnd() {
    skipSpace();
    return rest.empty();
  }
  /// Consumes `token` after spaces, if it is next.
  bool take(llvm::StringRef token) {
    skipSpace();
    return rest.consume_front(token);
  }
  bool peek(llvm::StringRef token) {
    skipSpace();
    return rest.starts_with(token);
  }
  /// An identifier, allowing dots (opcode and intrinsic spellings have them).
  llvm::StringRef word() {
    skipSpace();
    size_t length = 0;
    while (length < rest.size() &&
           (llvm::isAlnum(rest[length]) || rest[length] == '_' || rest[length] == '.'))
      ++length;
    llvm::StringRef result = rest.take_front(length);
    rest = rest.drop_front(length);
    return result;
  }
  /// Characters up to a space, a comma, an opening parenthesis or the end.
  llvm::StringRef symbol() {
    skipSpace();
    size_t length = rest.find_first_of(" \t,(");
    llvm::StringRef result = rest.take_front(length);
    rest = rest.drop_front(result.size());
    return result;
  }
};

/// Strips a comment (a `#` outside quotes) and trailing spaces.
llvm::StringRef withoutComment(llvm::StringRef line);

class Parser {
public:
  Parser(llvm::StringRef text, llvm::StringRef bufferName, TypeContext &types);

  llvm::Expected<std::unique_ptr<Module>> run();

private:
  //===--- Errors (ir_parser_tokens.cpp) ----------------------------------===//

  /// Records the first error, at the first character of what `at` holds.
  bool fail(Cursor at, const llvm::Twine &message);
  bool expect(Cursor &at, llvm::StringRef token);

  //===--- Lines (ir_parser_tokens.cpp) -----------------------------------===//

  /// The next line with something on it, or false at the end of the text.
  bool nextLine(Cursor &cursor);
  bool endOfLine(Cursor &at);

  //===--- Literals (ir_parser_tokens.cpp) --------------------------------===//

  bool number(Cursor &at, uint64_t &result);
  bool unsignedValue(Cursor &at, unsigned &result);
  bool signedValue(Cursor &at, int &result);
  /// A string as quotedString() writes it, with either quote.
  bool quoted(Cursor &at, std::string &result);
  bool location(Cursor &at, Location &result);

  //===--- Types (ir_parser_types.cpp) ------------------------------------===//

  bool type(Cursor &at, const Type *&result);
  bool baseType(Cursor &at, const Type *&result);
  /// [char x 12] or [unichr x 12], after the "[".
  bool charSequenceType(Cursor &at, Cursor start, const Type *&result);
  bool arrayType(Cursor &at, bool readonly, const Type *&result);
  bool tupleType(Cursor &at, bool homogeneous, const Type *&result);
  /// Record(s0[type=uint64;offset=0],s1[type=uint64;offset=8];16;True)
  bool recordType(Cursor &at, const Type *&result);

  //===--- Constants (ir_parser_types.cpp) --------------------------------===//

  /// Consumes a float as Python's repr writes it ("1.5", "-2e-05", "nan",
  /// "-inf"), or an int's digits, which read as a float too.
  static std::optional<double> scanFloat(llvm::StringRef &text);
  /// A number as Python's repr writes it: an int, a float (with '.', 'e',
  /// 'nan' or 'inf') or, followed by 'j', an imaginary number.
  bool numberLiteral(Cursor &at, ConstantValue &result);
  bool constantValue(Cursor &at, ConstantValue &result);
  /// After '(': a tuple, or a complex number written (real+imagj).
  bool tupleOrComplex(Cursor &at, ConstantValue &result);

  //===--- Values (ir_parser_instructions.cpp) ----------------------------===//

  /// Where a use of a value not yet defined goes, once it is.
  struct PendingUse {
    unsigned id = 0;
    Cursor at;
    Instruction *instruction; // operands[operand] of it, or
    size_t operand;
    Terminator *terminator; // the terminator's value
  };

  /// A value. A use of %N before its definition gives null and sets
  /// `forwardId`, for the caller to record in `pending`.
  bool value(Cursor &at, Value *&result, unsigned &forwardId);
  bool operand(Cursor &at, Instruction &instruction);
  bool terminatorValue(Cursor &at, Terminator &terminator);
  bool define(const Cursor &at, unsigned id, Value *definition);
  bool resolvePendingUses();

  //===--- Blocks (ir_parser_instructions.cpp) ----------------------------===//

  Block *blockNumbered(unsigned id);
  bool blockReference(Cursor &at, Block *&result);

  //===--- Instructions (ir_parser_instructions.cpp) ----------------------===//

  bool operationData(Cursor &at, Instruction &instruction);
  bool intrinsicName(Cursor &at, Instruction &instruction);
  bool operands(Cursor &at, Instruction &instruction);
  bool viewItems(Cursor &at, Instruction &instruction);
  bool instructionLine(Cursor &at, Block &block);
  /// Reads a terminator if the line is one; `isTerminator` says whether.
  bool terminatorLine(Cursor &at, Block &block, bool &isTerminator);

  //===--- Functions (ir_parser.cpp) --------------------------------------===//

  bool options(Cursor &at, JitOptions &result);
  bool functionAttributes(Cursor &at);
  /// `kernel @symbol(T %0 name, ...) -> R attributes {`; returns whether
  /// the function has a body.
  bool functionHeader(Cursor &at, bool &hasBody);
  bool functionBody();
  bool finishFunction(Block *open, const Cursor &at);
  bool parseFunction(Cursor &at);
  bool parseModule();

  struct PendingCall {
    std::string symbol;
    Cursor at;
    Instruction *instruction;
  };

  llvm::StringRef bufferName;
  TypeContext &types;
  llvm::SmallVector<llvm::StringRef, 0> lines;
  size_t lineIndex = 0;
  llvm::StringMap<Opcode> opcodes;
  llvm::StringMap<Intrinsic> intrinsics;

  std::unique_ptr<Module> module;
  Function *function = nullptr;
  llvm::DenseMap<unsigned, Value *> values;
  llvm::DenseSet<unsigned> definedBlocks;
  std::vector<std::pair<unsigned, Cursor>> referencedBlocks;
  std::vector<PendingUse> pending;
  std::vector<PendingCall> pendingCalls;
  std::string failure;
};

} // namespace kiln::ir::reader
