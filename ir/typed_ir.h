//===- ir/typed_ir.h - The typed IR: front end to back end -*- C++ -*-===//
//
// [Note: typed IR]
// The typed IR is the contract between the front end and the back end. A
// Module holds one Function per specialization (a kernel, ufunc core,
// reduction core or device function for one tuple of argument types). Each
// Function is SSA in basic blocks, like LLVM IR, but its operations are
// those of the kernel language with every Python rule already decided:
//
//   * every value has a kiln::Type, and operands of an operation already
//     have the types the operation needs (conversions are explicit Casts);
//   * operations mean exactly one thing: `FloorDiv` on int64 is Python's
//     floor division, `ArrayLoad` indexes with negative wraparound, a Cast
//     from float to int truncates toward zero and saturates;
//   * nothing refers back to Python: no names to resolve, no overloads, no
//     literal types (constants are plain typed values);
//   * target-specific work is named, not done: `Intrinsic` operations
//     (thread indices, barriers, atomics, warp collectives, math) are what
//     the back end's target hooks implement.
//
// The back end lowers each operation independently of the target, except
// for intrinsics; see docs/architecture.md.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/constant_value.h"
#include "ir/jit_options.h"
#include "ir/types.h"

#include <llvm/ADT/ArrayRef.h>
#include <llvm/ADT/SmallVector.h>
#include <llvm/Support/raw_ostream.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kiln::ir {

class Block;
class Function;

enum class Opcode : uint8_t {
#define IR_OPCODE(NAME, SPELLING) NAME,
#include "ir/opcodes.def"
};
llvm::StringRef spelling(Opcode opcode);

enum class Intrinsic : uint16_t {
#define IR_INTRINSIC(NAME, SPELLING) NAME,
#include "ir/intrinsics.def"
};
llvm::StringRef spelling(Intrinsic intrinsic);

/// A position in the function's source file (1-based); line 0 is unknown.
struct Location {
  uint32_t line = 0;
  uint32_t column = 0;
  bool isValid() const { return line != 0; }
};

class Value {
public:
  enum class Kind : uint8_t { Argument, Constant, Undefined, Instruction };

  Kind kind() const { return valueKind; }
  const Type *type() const { return valueType; }
  /// Position in the function, for printing ("%12").
  unsigned id() const { return number; }

  virtual ~Value() = default;

protected:
  Value(Kind kind, const Type *type, unsigned id) : valueKind(kind), valueType(type), number(id) {}

private:
  Kind valueKind;
  const Type *valueType;
  unsigned number;
};

class Argument : public Value {
public:
  Argument(const Type *type, unsigned id, unsigned index, std::string name)
      : Value(Kind::Argument, type, id), index(index), name(std::move(name)) {}
  unsigned index;
  std::string name;
  static bool classof(const Value *v) { return v->kind() == Kind::Argument; }
};

/// A constant of a scalar, complex or tuple type; its value's Python kind
/// (int, float, complex, bool) is converted to the type by the back end.
class Constant : public Value {
public:
  Constant(const Type *type, unsigned id, ConstantValue value)
      : Value(Kind::Constant, type, id), value(std::move(value)) {}
  ConstantValue value;
  static bool classof(const Value *v) { return v->kind() == Kind::Constant; }
};

/// A variable's value on paths where it has no value: it was never
/// assigned there, or `del` removed it. Reading it is Python's
/// UnboundLocalError; as in Numba, only a phi may take it as an operand,
/// and the verifier checks that the variable really is unbound on that path.
class Undefined : public Value {
public:
  enum class Cause : uint8_t { Unassigned, Deleted };

  Undefined(const Type *type, unsigned id, std::string variable, Cause cause)
      : Value(Kind::Undefined, type, id), variable(std::move(variable)), cause(cause) {}
  std::string variable;
  Cause cause;
  static bool classof(const Value *v) { return v->kind() == Kind::Undefined; }
};

/// One item of an ArrayView: either an index (dropping the dimension) or a
/// slice (keeping it). Slice bounds absent in the source are absent here.
struct ViewItem {
  bool isSlice;
  bool hasStart = false;
  bool hasStop = false;
  bool hasStep = false;
};

/// One argument of Print: how to show it.
struct PrintItem {
  enum class Kind : uint8_t { Value, Text };
  Kind kind;
  std::string text; // for Text
  /// Follows the item before it without the space print() puts between its
  /// arguments: the parts of a printed tuple, "(1, 2.5)".
  bool joined = false;
};

class Instruction : public Value {
public:
  Instruction(Opcode opcode, const Type *type, unsigned id, Location location)
      : Value(Kind::Instruction, type, id), opcode(opcode), location(location) {}

  Opcode opcode;
  llvm::SmallVector<Value *, 3> operands;
  Location location;
  Block *parent = nullptr;

  // Operation-specific data; see opcodes.def for which uses what.
  Intrinsic intrinsic = Intrinsic::ThreadIdx;
  unsigned index = 0;                      // TupleGet, ArrayShape/Stride, dimension of indices
  Function *callee = nullptr;              // Call
  std::vector<ViewItem> viewItems;         // ArrayView
  std::vector<Block *> incoming;           // Phi: incoming[i] sends operands[i]
  std::vector<PrintItem> printItems;       // Print
  std::vector<uint64_t> shape;             // SharedArray, LocalArray, ConstArray, ArrayAt
  std::shared_ptr<const std::string> data; // ConstArray: the elements' bytes
  std::vector<int64_t> strides;            // ArrayAt: in bytes
  uint64_t address = 0;                    // ArrayAt
  std::string text;                        // RecordGet/Set field, Assert message

  static bool classof(const Value *v) { return v->kind() == Kind::Instruction; }
};

struct Terminator {
  enum class Kind : uint8_t { Jump, Branch, Return, Raise };
  Kind kind = Kind::Return;
  Value *value = nullptr;  // Branch condition (bool), Return value (null for none)
  Block *target = nullptr; // Jump, or Branch when true
  Block *falseTarget = nullptr;
  std::string exceptionClass; // Raise
  std::string message;        // Raise
  Location location;
};

class Block {
public:
  explicit Block(unsigned id) : id(id) {}
  unsigned id;
  std::vector<Instruction *> instructions; // phis first
  Terminator terminator;
  std::vector<Block *> predecessors;
};

class Function {
public:
  /// External functions are declared with cuda.declare_device and defined
  /// in CUDA C/C++ or PTX (`link=`); they have no blocks, and `symbol` is
  /// their link name.
  enum class Kind : uint8_t { Kernel, Device, External };

  /// A symbol unique in the module and stable across builds, such as
  /// `kernels.add$1` for the second specialization of `add`.
  std::string symbol;
  std::string sourceName;
  Kind kind = Kind::Device;
  /// Where the code comes from: the source, or the loop Kiln writes around
  /// a ufunc's or a reduction's core (the runtime launches each kernel of
  /// these differently).
  enum class Origin : uint8_t { Source, UfuncLoop, ReductionLoop };
  Origin origin = Origin::Source;
  JitOptions options;
  /// The semantic hash (hex) of the source this specialization compiles:
  /// its part of the cache key. Empty where there is none (external
  /// functions, IR not made from source).
  std::string semanticHash;
  std::vector<Argument *> arguments;
  const Type *returnType = nullptr;
  std::vector<std::unique_ptr<Block>> blocks; // blocks[0] is the entry
  /// The source file, and where the function is in it, for debug
  /// information and messages; every instruction's location is in it too.
  std::string path;
  Location location;

  /// Whether the function, or one it calls, waits for other threads
  /// (barriers, warp collectives). The CPU engine runs other kernels'
  /// threads in a plain loop.
  bool synchronizes = false;
  /// Whether it can raise (raise, or assert with debug=True).
  bool raises = false;
  /// Whether the function, or one it calls, takes part in the grid group
  /// (cuda.cg.this_grid() and its sync(), a device function declared with
  /// use_cooperative=True): its kernels need a cooperative launch, in which
  /// every block of the grid is resident at once.
  bool cooperative = false;
  /// An external function only: whether it returns its value as C does
  /// (declare_device(..., abi="c")), not through a pointer with an int
  /// status (Numba's ABI).
  bool cAbi = false;

  Block *entry() const { return blocks.front().get(); }
  /// Arguments and instructions are numbered in the order they are added,
  /// unless `id` gives the number (as when reading printed IR back).
  Argument *addArgument(const Type *type, std::string name,
                        std::optional<unsigned> id = std::nullopt);
  Block *addBlock();
  /// A new block placed right after `after`. Blocks are numbered by their
  /// place, so the ones after it are renumbered.
  Block *insertBlockAfter(Block *after);
  Instruction *addInstruction(Block *block, Opcode opcode, const Type *type, Location where,
                              std::optional<unsigned> id = std::nullopt);
  Constant *constant(const Type *type, ConstantValue value);
  Undefined *undefined(const Type *type, llvm::StringRef variable, Undefined::Cause cause);

private:
  unsigned takeValueId(std::optional<unsigned> id);

  unsigned nextValueId = 0;
  std::vector<std::unique_ptr<Value>> ownedValues;
};

class Module {
public:
  /// The kernel module's dotted name (or the file's stem).
  std::string name;
  std::vector<std::unique_ptr<Function>> functions;

  Function *addFunction();
  /// Prints the module as text that ir::parseModule (ir/ir_parser.h) reads
  /// back into an identical module.
  void print(llvm::raw_ostream &os) const;
};

/// Ends `from` with a jump to `target`, recording the edge.
void jump(Block *from, Block *target);
/// Ends `from` with a branch on `condition`, recording both edges.
void branch(Block *from, Value *condition, Block *whenTrue, Block *whenFalse);

/// Checks the IR's invariants (operand types, terminators, phis). Returns a
/// description of the first violation, or nothing; a violation is a bug in
/// the front end.
std::optional<std::string> verify(const Module &module);

} // namespace kiln::ir
