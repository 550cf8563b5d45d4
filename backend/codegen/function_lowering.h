//===- backend/codegen/function_lowering.h - Lowering one function ------*- C++ -*-===//
//
// Internal to the lowering (lower_*.cpp). A ModuleLowering owns the LLVM
// module of one kernel specialization; a FunctionLowering turns one typed IR
// function into one LLVM function. The work is split by subject:
//
//   lower_module.cpp       functions, kernel parameters, shared memory, lines
//   lower_function.cpp     blocks, phis, constants, casts, calls, terminators
//   lower_arithmetic.cpp   operators with Python's rules, complex numbers
//   lower_arrays.cpp       arrays, views, tuples, records, ranges
//   lower_intrinsics.cpp   thread indices, barriers, atomics, warps, math, print
//
//===----------------------------------------------------------------------===//
#pragma once

#include "backend/codegen/llvm_types.h"
#include "backend/codegen/target_hooks.h"
#include "ir/typed_ir.h"

#include <llvm/ADT/DenseMap.h>
#include <llvm/IR/DIBuilder.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>

#include <map>
#include <memory>

namespace kiln::backend {

class ModuleLowering {
public:
  ModuleLowering(TargetHooks &hooks, llvm::LLVMContext &context, const ir::Function &kernel);

  /// The LLVM function of `function`, declared on first use; its body is
  /// lowered later by run().
  llvm::Function *declare(const ir::Function &function);
  /// Lowers every declared function's body, including those declared
  /// while lowering.
  void lowerPending();
  /// The shared array slot of a SharedArray instruction.
  const SharedSlot &sharedSlot(const ir::Instruction &instruction, llvm::StringRef owner,
                               uint64_t bytes, uint64_t alignment);
  uint64_t sharedBytes() const { return sharedEnd; }
  /// The module's read-only copy of a ConstArray instruction's elements,
  /// one per distinct data however many instructions read it.
  llvm::GlobalVariable *constantArray(const ir::Instruction &instruction, uint64_t alignment);

  /// Debug-information scope for `function`, when line tables are wanted.
  llvm::DISubprogram *subprogram(const ir::Function &function, llvm::Function &lowered);
  llvm::DebugLoc location(ir::Location at, llvm::DISubprogram *scope) const;
  void finishDebugInfo();

  TargetHooks &hooks;
  LLVMTypes types;
  std::unique_ptr<llvm::Module> module;
  /// The kernel's operations, numbered.
  ir::OperationSites operations;

private:
  std::map<const ir::Function *, llvm::Function *> functions;
  std::vector<const ir::Function *> pending;
  std::map<const ir::Instruction *, SharedSlot> sharedSlots;
  uint64_t sharedEnd = 0;
  std::map<const std::string *, llvm::GlobalVariable *> constantArrays;
  std::unique_ptr<llvm::DIBuilder> debugInfo;
  llvm::DICompileUnit *compileUnit = nullptr;
  /// Whether the kernel, whose options say how the module is compiled, has
  /// debug=True.
  bool kernelDebug;
  std::map<std::string, llvm::DIFile *> debugFiles;
};

/// The LLVM fast-math flags of the floating-point operations of a function
/// compiled with fastmath: the ones its decorator names, else all.
llvm::FastMathFlags fastMathFlagsOf(const JitOptions &options);

class FunctionLowering {
public:
  FunctionLowering(ModuleLowering &module, const ir::Function &source, llvm::Function &target);
  void run();

  /// For kernels: the values of the arguments rebuilt from flat parameters.
  void bindKernelArguments();

  //===--- Values (lower_function.cpp) ---===//
  llvm::Value *valueOf(const ir::Value *value);
  llvm::Value *lowerConstant(const Type *type, const ConstantValue &constant);
  llvm::Value *cast(llvm::Value *value, const Type *from, const Type *to);
  /// A str or bytes constant as a fixed-width string: cut or zero-padded.
  llvm::Constant *charSequenceConstant(const ConstantValue &text, const CharSequenceType *to);
  llvm::Value *truth(llvm::Value *value, const Type *type);
  /// An LLVM integer (i1 counts as unsigned) converted to `to`.
  llvm::Value *fromMachineInteger(llvm::Value *value, bool isSigned, const Type *to);
  /// An alloca in the entry block, so that LLVM promotes it.
  llvm::AllocaInst *entryAlloca(llvm::Type *type, uint64_t alignment, const llvm::Twine &name = "");
  /// Starts a new block and makes it current.
  llvm::BasicBlock *newBlock(const llvm::Twine &name);
  llvm::Constant *i64(int64_t value) { return builder.getInt64(static_cast<uint64_t>(value)); }
  llvm::Constant *i32(int32_t value) { return builder.getInt32(static_cast<uint32_t>(value)); }
  HookSite site(ir::Location location);

  //===--- Operators (lower_arithmetic.cpp) ---===//
  llvm::Value *lowerUnary(const ir::Instruction &instruction);
  llvm::Value *lowerBinary(const ir::Instruction &instruction);
  llvm::Value *lowerCompare(const ir::Instruction &instruction);

  //===--- datetime64 and timedelta64 (lower_datetime.cpp) ---===//
  /// An operator with a datetime64 or timedelta64 operand.
  llvm::Value *lowerDateTimeOperation(const ir::Instruction &instruction);
  /// Whether a datetime64 or timedelta64 value is not NaT.
  llvm::Value *isTime(llvm::Value *value);
  /// A timedelta (or a datetime of weeks or finer) in unit `to`.
  llvm::Value *scaleDateTime(llvm::Value *value, DateTimeUnit from, DateTimeUnit to);
  /// A datetime in unit `to`, years and months through the calendar.
  llvm::Value *convertDatetime(llvm::Value *value, DateTimeUnit from, DateTimeUnit to);
  /// Days from the epoch to the start of year 1970 + `year`, and of month
  /// `months` after January 1970.
  llvm::Value *daysBeforeYear(llvm::Value *year);
  llvm::Value *daysBeforeMonth(llvm::Value *months);
  /// Python's divmod of an int64 by a positive constant.
  std::pair<llvm::Value *, llvm::Value *> floorDivModConstant(llvm::Value *value, int64_t divisor);
  /// A float count of a unit as a timedelta: NaN is NaT.
  llvm::Value *timedeltaFromFloat(llvm::Value *value);
  llvm::Value *floorDivide(llvm::Value *a, llvm::Value *b, const Type *type, bool wantQuotient);
  /// Python's a % b of integers, 0 when b is 0 (Numba's NumPy error model).
  llvm::Value *flooredRemainder(llvm::Value *a, llvm::Value *b, bool isSigned);
  llvm::Value *power(llvm::Value *base, llvm::Value *exponent, const Type *baseType,
                     const Type *exponentType);
  /// base ** exponent for an integer exponent, as Numba's int_power; the
  /// base is an integer (of the result type) or a float.
  llvm::Value *integerPower(llvm::Value *base, llvm::Value *exponent, bool baseSigned,
                            bool exponentSigned);
  llvm::Value *complexMultiply(llvm::Value *a, llvm::Value *b);
  llvm::Value *complexDivide(llvm::Value *a, llvm::Value *b);
  llvm::Value *complexPower(llvm::Value *a, llvm::Value *b, const FloatType *part);
  llvm::Value *makeComplex(llvm::Value *real, llvm::Value *imag);

  //===--- Arrays and aggregates (lower_arrays.cpp) ---===//
  llvm::Value *lowerArrayOperation(const ir::Instruction &instruction);
  /// An element of an array read or written at its indices.
  llvm::Value *lowerArrayAccess(const ir::Instruction &instruction);
  /// An element read or written through a pointer at an offset.
  llvm::Value *lowerPointerAccess(const ir::Instruction &instruction);
  /// The view of an array that indices and slices select.
  llvm::Value *arrayView(const ir::Instruction &instruction);
  llvm::Value *transpose(const ir::Instruction &instruction);
  llvm::Value *reshape(const ir::Instruction &instruction);
  llvm::Value *viewAs(const ir::Instruction &instruction);
  /// The view of a complex array's real or imaginary parts.
  llvm::Value *complexPartView(const ir::Instruction &instruction);
  llvm::Value *lowerTupleOperation(const ir::Instruction &instruction);
  /// A tuple's item at an index known only at run time.
  llvm::Value *tupleItemAt(const ir::Instruction &instruction);
  /// A record's field read or written.
  llvm::Value *lowerRecordField(const ir::Instruction &instruction);
  llvm::Value *lowerRangeOperation(const ir::Instruction &instruction);
  /// How many items the range struct `range` yields, as len(range(...)).
  llvm::Value *rangeLength(llvm::Value *range, bool isSigned);
  /// Shared, local, constant and captured arrays, and the dynamic shared
  /// array.
  llvm::Value *lowerArrayCreation(const ir::Instruction &instruction);
  /// Address of the element of `array` at `indices` (int64, may be
  /// negative), for `access` (which reads operand 0), checked where the
  /// target checks indices.
  llvm::Value *elementAddress(llvm::Value *array, const ArrayType *type,
                              llvm::ArrayRef<llvm::Value *> indices, const ir::Instruction &access);
  /// An index as given, counted from the end when negative, and its axis.
  struct CheckedIndex {
    llvm::Value *index;
    llvm::Value *wrapped;
    unsigned axis;
  };
  /// Raises IndexError unless every index of `checked` lies inside its
  /// extent of `array` (of `type`), which `access` reads.
  void checkIndices(llvm::Value *array, const ArrayType *type, llvm::ArrayRef<CheckedIndex> checked,
                    const ir::Instruction &access);
  llvm::Value *loadElement(llvm::Value *address, const Type *elementType);
  void storeElement(llvm::Value *address, llvm::Value *value, const Type *elementType);
  /// The array struct of contiguous (C order) memory at `data`.
  llvm::Value *contiguousArray(llvm::Value *data, llvm::ArrayRef<llvm::Value *> shape,
                               const ArrayType *type);

  //===--- Intrinsics (lower_intrinsics.cpp) ---===//
  llvm::Value *lowerIntrinsic(const ir::Instruction &instruction);
  /// The address of the element of array operand 0 at the `index` indices
  /// after it (atomics, cache-hinted loads and stores).
  llvm::Value *indexedElementAddress(const ir::Instruction &instruction);
  llvm::Value *lowerAtomic(const ir::Instruction &instruction);
  llvm::Value *lowerCacheHinted(const ir::Instruction &instruction);
  llvm::Value *lowerWarpCollective(const ir::Instruction &instruction);
  llvm::Value *lowerMath(const ir::Instruction &instruction);
  /// A call of libdevice's function: outputs through stack slots, the
  /// returned values gathered as the instruction's result.
  llvm::Value *lowerLibdeviceCall(const ir::Instruction &instruction);
  /// Calls the target's function for `which` on `bits`-bit floats; float16
  /// is computed in float32.
  llvm::Value *callMath(ir::Intrinsic which, llvm::ArrayRef<llvm::Value *> arguments,
                        unsigned bits);
  llvm::Value *callMathFunction(ir::Intrinsic which, llvm::ArrayRef<llvm::Value *> arguments,
                                unsigned bits);
  /// min or max of two floats as IEEE 754-2019's minimumNumber and
  /// maximumNumber (numba-cuda's fmin and fmax).
  llvm::Value *minMaxNumber(bool isMax, llvm::Value *a, llvm::Value *b, unsigned bits);
  llvm::Value *roundDigits(llvm::Value *x, llvm::Value *digits);
  void lowerPrint(const ir::Instruction &instruction);
  void lowerAssert(const ir::Instruction &instruction);
  /// Raises and continues in a fresh block (for asserts); the raise ends
  /// the thread, so the fresh block is only reached when it does not.
  void raiseUnless(llvm::Value *condition, llvm::StringRef exceptionClass, llvm::StringRef message,
                   ir::Location location);

  ModuleLowering &module;
  LLVMTypes &types;
  TargetHooks &hooks;
  const ir::Function &source;
  llvm::Function &lowered;
  llvm::IRBuilder<> builder;
  llvm::Value *threadContext = nullptr;
  llvm::DISubprogram *debugScope = nullptr;
  ir::Location currentLocation;
  /// The number of the operation being lowered (ir/operation_sites.h).
  uint32_t currentOperation = ir::OperationSites::noSite;

private:
  void lowerBlock(const ir::Block &block);
  llvm::Value *lowerInstruction(const ir::Instruction &instruction);
  llvm::Value *lowerCall(const ir::Instruction &instruction);
  llvm::Value *lowerExternalCall(const ir::Instruction &instruction);
  void lowerTerminator(const ir::Block &block);
  void fillPhis();

  llvm::DenseMap<const ir::Value *, llvm::Value *> values;
  llvm::DenseMap<const ir::Block *, llvm::BasicBlock *> blocks;
  /// The LLVM block in which an IR block ends (operations such as `**`
  /// add blocks of their own); phis name these as predecessors.
  llvm::DenseMap<const ir::Block *, llvm::BasicBlock *> blockEnds;
  llvm::BasicBlock *allocaBlock = nullptr;
  /// The slots of tuples indexed at run time, filled once, where the tuple
  /// is made: a loop over a tuple reads them without storing the tuple on
  /// every iteration, which would keep LLVM from unrolling it.
  llvm::DenseMap<llvm::Value *, llvm::AllocaInst *> tupleSlots;
};

} // namespace kiln::backend
