//===- frontend/emit/function_emitter.h - Emitting one function -*- C++ -*-===//
//
// The classes behind emitTypedIR(), shared by the files that emit typed IR
// for each subject (control flow, operators, arrays, calls, intrinsics).
// One FunctionEmitter per specialization walks the SSA form in reverse
// post-order and, for each instruction, follows the Resolution that type
// inference recorded. Phis are created first and completed last, since a
// loop's back edge brings values defined after the phi; conversions of a
// phi's incoming values go at the end of the predecessor block.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/emit/emit_typed_ir.h"
#include "frontend/typing/typing_rules.h"

#include <llvm/ADT/DenseMap.h>
#include <llvm/ADT/STLFunctionalExtras.h>

#include <map>

namespace kiln::emit {

class ModuleEmitter;

/// Whether a parameter of type `type` (unliteral) is passed at run time. A
/// device function called with a compile-time value (a function, a dtype,
/// a string) is specialized on it and has no parameter for it, as Numba's
/// are; None passes as a constant.
inline bool passesAtRunTime(const Type *type) {
  return !type->isCompileTimeOnly() || llvm::isa<NoneType>(type);
}

/// The register cuda.threadIdx, blockIdx, blockDim or gridDim reads.
inline ir::Intrinsic dim3Intrinsic(BuiltinId id) {
  return id == BuiltinId::CudaThreadIdx  ? ir::Intrinsic::ThreadIdx
         : id == BuiltinId::CudaBlockIdx ? ir::Intrinsic::BlockIdx
         : id == BuiltinId::CudaBlockDim ? ir::Intrinsic::BlockDim
                                         : ir::Intrinsic::GridDim;
}

class FunctionEmitter {
public:
  FunctionEmitter(ModuleEmitter &module, const Specialization &spec, ir::Function &function);
  void run();

private:
  //===--- Values ---===//
  ir::Value *valueOf(const ssa::Instr *instr) const {
    auto found = values.find(instr);
    return found == values.end() ? nullptr : found->second;
  }
  const Type *typeOf(const ssa::Instr *instr) const { return spec.typeOf(instr); }
  /// The instruction's value; None where it is None, which becomes a
  /// value when it converts to an optional one.
  ir::Value *valueOrNone(const ssa::Instr *instr) {
    ir::Value *value = valueOf(instr);
    if (!value && llvm::isa_and_nonnull<NoneType>(typeOf(instr)))
      return noneConstant();
    return value;
  }
  ir::Value *noneConstant() { return constant(types.none(), ConstantValue::none()); }
  const Type *plain(const Type *type) const { return types.unliteral(type); }
  ir::Value *constant(const Type *type, ConstantValue value) {
    return function.constant(type, std::move(value));
  }
  ir::Value *intConstant(const Type *type, int64_t value) {
    return constant(type, ConstantValue::integer(value));
  }
  ir::Instruction *emit(ir::Opcode opcode, const Type *type, llvm::ArrayRef<ir::Value *> operands,
                        ir::Block *where = nullptr) {
    ir::Instruction *instruction =
        function.addInstruction(where ? where : current, opcode, type, irLocation(location));
    instruction->operands.assign(operands.begin(), operands.end());
    if (raisesZeroDivision(opcode, type))
      function.raises = true;
    return instruction;
  }
  /// Whether Numba raises ZeroDivisionError from the operation (the back
  /// end checks the operands): with debug=True its Python error model does
  /// from divisions and integer powers; complex division always raises.
  bool raisesZeroDivision(ir::Opcode opcode, const Type *type) const {
    using Op = ir::Opcode;
    if (opcode == Op::TrueDiv && llvm::isa<ComplexType>(type))
      return true;
    return function.options.debug &&
           (opcode == Op::TrueDiv || opcode == Op::FloorDiv || opcode == Op::Mod ||
            (opcode == Op::Pow && llvm::isa<IntegerType>(type)));
  }
  ir::Instruction *intrinsic(ir::Intrinsic id, const Type *type,
                             llvm::ArrayRef<ir::Value *> operands, unsigned index = 0) {
    ir::Instruction *instruction = emit(ir::Opcode::Intrinsic, type, operands);
    instruction->intrinsic = id;
    instruction->index = index;
    return instruction;
  }
  /// `value` converted to `type`, emitting a Cast where needed.
  ir::Value *convert(ir::Value *value, const Type *type, ir::Block *where = nullptr);
  /// The SSA operand `i` of `instr`, converted as the resolution says.
  ir::Value *operand(const ssa::Instr *instr, size_t i, const Resolution &resolution);
  /// The value of `source` converted to `type`; a string constant becomes
  /// a fixed-width string constant.
  ir::Value *valueAs(const ssa::Instr *source, const Type *type);
  /// A call's arguments, converted as the resolution says: a starred
  /// operand's tuple items in its place (`f(*t)`); null for an argument
  /// with no run-time value.
  std::vector<ir::Value *> callArguments(const ssa::Instr *call, const Resolution &resolution);
  /// The indices of a subscript, as int64 values.
  std::vector<ir::Value *> indexValues(const ssa::Instr *index);

  //===--- Instructions ---===//
  /// The instruction's value, in the type typing gave it.
  void emitInstr(const ssa::Instr *instr);
  /// The instruction's value, in its operation's own type.
  void emitOperation(const ssa::Instr *instr);
  ir::Value *emitOperator(const ssa::Instr *instr, const Resolution &resolution);
  ir::Value *emitTupleCompare(ast::CompareOp op, ir::Value *lhs, ir::Value *rhs);
  ir::Value *emitCall(const ssa::Instr *instr, const Resolution &resolution);
  ir::Value *emitNamedTuple(const ssa::Instr *call, const NamedTupleType *tuple,
                            llvm::ArrayRef<ir::Value *> args);
  ir::Value *emitBuiltin(const ssa::Instr *instr, const Resolution &resolution,
                         llvm::ArrayRef<ir::Value *> args);
  ir::Value *emitMath(BuiltinId id, const Type *result, llvm::ArrayRef<ir::Value *> args);
  /// The object of a method call such as `z.conjugate()`: the callee is
  /// the attribute, whose operand is the object.
  ir::Value *methodReceiver(const ssa::Instr *call) {
    return valueOf(call->operands[0]->operands[0]);
  }
  /// A call of one of numba-cuda's float16 or bfloat16 bindings, by its
  /// name in cuda_fp16.h or cuda_bf16.h without leading underscores.
  ir::Value *emitHalfBinding(llvm::StringRef name, const Type *result,
                             llvm::ArrayRef<ir::Value *> args);
  /// A number converted to one of numba-cuda's FP8 types, and back.
  ir::Value *convertToFp8(ir::Value *value, const Fp8Type *type);
  ir::Value *convertFromFp8(ir::Value *value, const Type *type);
  /// A call of a function of Kiln's numba.cuda._internal.cuda_fp8.
  ir::Value *callFp8Prelude(llvm::StringRef name, llvm::ArrayRef<ir::Value *> args);
  /// A call of the function `name` of Kiln's prelude module `preludeModule`
  /// (kiln.cmath, ...), specialized for the arguments; null if it has none.
  ir::Value *callPrelude(llvm::StringRef preludeModule, llvm::StringRef name,
                         llvm::ArrayRef<ir::Value *> args);
  /// `value` (a real number) rounded to a bfloat16 toward zero ("rz"),
  /// down ("rd") or up ("ru").
  ir::Value *roundToBFloat16(ir::Value *value, llvm::StringRef rounding);
  ir::Value *emitCuda(const ssa::Instr *instr, BuiltinId id, const Resolution &resolution,
                      llvm::ArrayRef<ir::Value *> args);
  /// A vector type's constructor (float32x4(...)): its arguments'
  /// elements, in order.
  ir::Value *emitVectorConstructor(const VectorType *vector, llvm::ArrayRef<ir::Value *> args);
  /// cuda.grid(n) or cuda.gridsize(n), for `dimensions` dimensions.
  ir::Value *emitGridPosition(BuiltinId id, unsigned dimensions, const Type *result);
  /// A load or store of an array element with the cache hint `hint`.
  ir::Value *emitCacheHintedAccess(const ssa::Instr *instr, ir::Intrinsic hint, const Type *result,
                                   llvm::ArrayRef<ir::Value *> args);
  /// An operation of numba.cuda.atomic on an array element.
  ir::Value *emitAtomic(const ssa::Instr *instr, BuiltinId id, const Type *result,
                        llvm::ArrayRef<ir::Value *> args);
  ir::Value *emitMinMax(bool isMin, const Type *result, llvm::ArrayRef<ir::Value *> args);
  ir::Value *emitGetItem(const ssa::Instr *instr, const Resolution &resolution);
  /// The element an item of a tuple without a run-time value refers to.
  ir::Value *compileTimeItem(const ssa::Instr *item);
  ir::Value *emitLoopOperation(const ssa::Instr *instr, const Resolution &resolution);
  ir::Value *emitPrint(const ssa::Instr *instr);
  /// The value a call of `closure` (a function defined inside another)
  /// passes for its capture `k`, whose parameter has type `type`; null for
  /// a compile-time value.
  ir::Value *capturedValue(const ssa::Instr *closure, size_t k, const Type *type);
  /// The constant a literal int or bool type stands for; null for others.
  ir::Value *literalValue(const Type *type);
  /// What one print() shows: its items, and the values they print.
  struct PrintLine {
    std::vector<ir::PrintItem> items;
    std::vector<ir::Value *> values;
  };
  /// The items that show a value of `type` (a tuple's parts joined).
  void addPrintItems(PrintLine &line, const Type *type, ir::Value *value, bool joined);
  ir::Value *emitArrayAttribute(const ssa::Instr *instr, const Resolution &resolution);
  ir::Value *emitReshape(const ssa::Instr *instr, const Resolution &resolution);
  ir::Value *emitViewAs(const ssa::Instr *instr, const Resolution &resolution);
  /// arr.copy(): a local array of the receiver's compile-time shape.
  ir::Value *emitArrayCopy(const ssa::Instr *instr, const Resolution &resolution);
  /// record.field = array, for a nested array field: copies the elements.
  void emitNestedArrayStore(ir::Value *record, llvm::StringRef field, ir::Value *source);

  //===--- NumPy ufuncs (emit_ufuncs.cpp) ---===//
  ir::Value *emitUfunc(const ssa::Instr *instr, const Resolution &resolution);
  /// The ufunc's operation on one element of each input, already of the
  /// loop's input types; the result has the loop's output type.
  ir::Value *emitUfuncElement(BuiltinId ufunc, llvm::ArrayRef<ir::Value *> x, const Type *result);
  ir::Value *emitUfuncCompare(ir::Opcode op, ir::Value *a, ir::Value *b);
  ir::Value *emitUfuncExtremum(bool isMax, bool preferNumbers, ir::Value *a, ir::Value *b);
  /// NumPy's division, which never raises ZeroDivisionError.
  ir::Value *emitFloatDivide(ir::Value *a, ir::Value *b);
  ir::Value *emitComplexDivide(ir::Value *a, ir::Value *b);
  /// np.isnan: either part of a complex number; never for integers.
  ir::Value *isNanOf(ir::Value *x);
  /// Runs `body` for every index of `array` (C order), in loops of its
  /// own: code after it continues in a new block.
  void emitLoopNest(ir::Value *array, llvm::function_ref<void(llvm::ArrayRef<ir::Value *>)> body);
  /// The element of `array` at `index` of a larger array it is broadcast
  /// onto: dimensions aligned on the last, an extent of 1 repeating.
  ir::Value *broadcastElement(ir::Value *array, llvm::ArrayRef<ir::Value *> index);
  /// a[i, :] = v: `v` (a scalar, or an array broadcast onto the view).
  void emitSliceStore(const ssa::Instr *instr, const Resolution &resolution);
  void emitTerminator(const ssa::Block *block);

  ModuleEmitter &module;
  const Specialization &spec;
  ir::Function &function;
  TypeContext &types;
  llvm::DenseMap<const ssa::Instr *, ir::Value *> values;
  llvm::DenseMap<const ssa::Block *, ir::Block *> blocks;
  /// Where each SSA block's code ends: its own block, unless an operation
  /// with loops of its own (a ufunc on arrays) continued it in another.
  llvm::DenseMap<const ssa::Block *, ir::Block *> tails;
  struct PendingPhi {
    const ssa::Instr *phi;
    const ssa::Block *block;
    ir::Instruction *instruction;
  };
  std::vector<PendingPhi> phis;
  /// Whether control can pass from `from` to `to`: both are reachable, and
  /// a branch that typing decided does not go elsewhere.
  bool edgeRuns(const ssa::Block *from, const ssa::Block *to) const;
  ir::Block *current = nullptr;
  SourceRange location;
  ir::Location irLocation(SourceRange range) const;
};

class ModuleEmitter {
public:
  ModuleEmitter(CheckedModule &checked, llvm::StringRef moduleName)
      : checked(checked), moduleName(moduleName.str()) {
    module = std::make_unique<ir::Module>();
    module->name = moduleName.str();
  }

  std::unique_ptr<ir::Module> run();

  /// The IR function of a specialization, emitted on first request.
  ir::Function *functionFor(const Specialization *spec);
  /// A prelude device function (complex math), specialized for `args`.
  ir::Function *preludeFunction(llvm::StringRef preludeModule, llvm::StringRef name,
                                const std::vector<const Type *> &args);
  /// The line and column the IR records for a source position.
  ir::Location locate(SourceRange range) const {
    if (!range.isValid())
      return {};
    LineColumn position = checked.sources.lineColumn(range.begin);
    return {position.line, position.column};
  }
  CheckedModule &checked;
  /// The kernel module's dotted name.
  const std::string &name() const { return moduleName; }

private:
  std::string symbolFor(const Specialization *spec);

  std::string moduleName;
  std::unique_ptr<ir::Module> module;
  std::map<const Specialization *, ir::Function *> emitted;
  std::map<const FunctionDecl *, unsigned> specializationCounts;
  std::vector<std::pair<const Specialization *, ir::Function *>> pending;
};

} // namespace kiln::emit
