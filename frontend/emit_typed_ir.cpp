//===- frontend/emit_typed_ir.cpp - Typed specializations to typed IR -----===//
//
// One FunctionEmitter per specialization walks the SSA form in reverse
// post-order and, for each instruction, follows the Resolution that type
// inference recorded. Phis are created first and completed last, since a
// loop's back edge brings values defined after the phi; conversions of a
// phi's incoming values go at the end of the predecessor block.
//
//===----------------------------------------------------------------------===//

#include "frontend/emit_typed_ir.h"

#include "frontend/synthesized_kernels.h"
#include "frontend/typing/typing_rules.h"

#include <llvm/ADT/DenseMap.h>

#include <cmath>
#include <map>

namespace kiln {

using ssa::Op;

namespace {

class ModuleEmitter;

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
        function.addInstruction(where ? where : current, opcode, type, location);
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
  /// The indices of a subscript, as int64 values.
  std::vector<ir::Value *> indexValues(const ssa::Instr *index);

  //===--- Instructions ---===//
  void emitInstr(const ssa::Instr *instr);
  ir::Value *emitOperator(const ssa::Instr *instr, const Resolution &resolution);
  ir::Value *emitTupleCompare(ast::CompareOp op, ir::Value *lhs, ir::Value *rhs);
  ir::Value *emitCall(const ssa::Instr *instr, const Resolution &resolution);
  ir::Value *emitBuiltin(const ssa::Instr *instr, const Resolution &resolution,
                         llvm::ArrayRef<ir::Value *> args);
  ir::Value *emitMath(BuiltinId id, const Type *result, llvm::ArrayRef<ir::Value *> args);
  /// The object of a method call such as `z.conjugate()`: the callee is
  /// the attribute, whose operand is the object.
  ir::Value *methodReceiver(const ssa::Instr *call) {
    return valueOf(call->operands[0]->operands[0]);
  }
  ir::Value *emitCuda(const ssa::Instr *instr, BuiltinId id, const Resolution &resolution,
                      llvm::ArrayRef<ir::Value *> args);
  ir::Value *emitMinMax(bool isMin, const Type *result, llvm::ArrayRef<ir::Value *> args);
  ir::Value *emitGetItem(const ssa::Instr *instr, const Resolution &resolution);
  /// The element an item of a tuple without a run-time value refers to.
  ir::Value *compileTimeItem(const ssa::Instr *item);
  ir::Value *emitLoopOperation(const ssa::Instr *instr, const Resolution &resolution);
  ir::Value *emitPrint(const ssa::Instr *instr);
  ir::Value *emitArrayAttribute(const ssa::Instr *instr, const Resolution &resolution);
  void emitTerminator(const ssa::Block *block);

  ModuleEmitter &module;
  const Specialization &spec;
  ir::Function &function;
  TypeContext &types;
  llvm::DenseMap<const ssa::Instr *, ir::Value *> values;
  llvm::DenseMap<const ssa::Block *, ir::Block *> blocks;
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
  CheckedModule &checked;

private:
  std::string symbolFor(const Specialization *spec);

  std::string moduleName;
  std::unique_ptr<ir::Module> module;
  std::map<const Specialization *, ir::Function *> emitted;
  std::map<const FunctionDecl *, unsigned> specializationCounts;
  std::vector<std::pair<const Specialization *, ir::Function *>> pending;
};

//===----------------------------------------------------------------------===//
// ModuleEmitter
//===----------------------------------------------------------------------===//

std::string ModuleEmitter::symbolFor(const Specialization *spec) {
  unsigned number = specializationCounts[&spec->decl]++;
  std::string owner = spec->decl.scope == checked.scope.get()
                          ? moduleName
                          : checked.sources.path(spec->decl.scope->file()).str();
  // Prelude paths look like "<kiln>/numba/cuda/random.py".
  if (llvm::StringRef(owner).starts_with("<kiln>/")) {
    owner = llvm::StringRef(owner).drop_front(7).drop_back(3).str();
    std::replace(owner.begin(), owner.end(), '/', '.');
  }
  return owner + "." + spec->decl.name + "$" + std::to_string(number);
}

ir::Function *ModuleEmitter::functionFor(const Specialization *spec) {
  auto found = emitted.find(spec);
  if (found != emitted.end())
    return found->second;
  ir::Function *function = module->addFunction();
  if (spec->decl.kind == FunctionDecl::Kind::External) {
    const Signature &signature = spec->decl.signatures.front();
    function->kind = ir::Function::Kind::External;
    function->symbol = spec->decl.externalSymbol;
    function->sourceName = spec->decl.name;
    function->decl = &spec->decl;
    function->returnType = signature.returnType;
    for (size_t i = 0; i < signature.args.size(); ++i)
      function->addArgument(signature.args[i], "arg" + std::to_string(i));
    emitted[spec] = function;
    return function;
  }
  function->symbol = symbolFor(spec);
  function->sourceName = spec->decl.name;
  function->kind = spec->decl.kind == FunctionDecl::Kind::Kernel ? ir::Function::Kind::Kernel
                                                                 : ir::Function::Kind::Device;
  function->decl = &spec->decl;
  function->options = spec->decl.options;
  function->returnType = checked.types.unliteral(spec->returnType);
  if (spec->decl.def) {
    function->location = spec->decl.def->nameRange;
    function->file = spec->decl.def->nameRange.begin.file;
  }
  // Arguments exist before the body, so that callers emitted first (or
  // recursive calls) can convert their operands to the parameter types.
  for (const ssa::Instr *argument : spec->ssa->arguments)
    function->addArgument(checked.types.unliteral(spec->argTypes[argument->index]), argument->name);
  emitted[spec] = function;
  pending.push_back({spec, function});
  return function;
}

ir::Function *ModuleEmitter::preludeFunction(llvm::StringRef preludeModule, llvm::StringRef name,
                                             const std::vector<const Type *> &args) {
  const ModuleScope *scope = checked.loader->load(preludeModule);
  const FunctionDecl *decl = scope ? scope->function(name) : nullptr;
  if (!decl)
    return nullptr;
  Specialization *spec = checked.inference->specialize(*decl, args);
  if (spec->failed)
    return nullptr;
  return functionFor(spec);
}

std::unique_ptr<ir::Module> ModuleEmitter::run() {
  for (const CheckedModule::Function &function : checked.functions)
    for (const Specialization *spec : function.specializations)
      functionFor(spec);
  while (!pending.empty()) {
    auto [spec, function] = pending.front();
    pending.erase(pending.begin());
    FunctionEmitter(*this, *spec, *function).run();
  }
  // The kernels that run ufuncs and reductions on the device.
  for (const CheckedModule::Function &function : checked.functions) {
    const FunctionDecl &decl = *function.decl;
    for (size_t i = 0; i < function.specializations.size(); ++i) {
      const Specialization *spec = function.specializations[i];
      ir::Function &core = *emitted[spec];
      std::string number = "$" + std::to_string(i);
      if (decl.kind == FunctionDecl::Kind::Ufunc)
        synthesizeUfuncKernel(*module, checked.types, core,
                              moduleName + "." + decl.name + ".__ufunc__" + number);
      else if (decl.kind == FunctionDecl::Kind::Reduction)
        synthesizeReductionKernel(*module, checked.types, core,
                                  checked.types.unliteral(spec->argTypes.front()),
                                  moduleName + "." + decl.name + ".__reduce__" + number);
    }
  }
  // Whether each function synchronizes: directly, or through a callee.
  bool changed = true;
  while (changed) {
    changed = false;
    for (const auto &function : module->functions)
      for (const auto &block : function->blocks)
        for (const ir::Instruction *instruction : block->instructions) {
          bool synchronizes = false;
          bool raises = false;
          if (instruction->opcode == ir::Opcode::Call) {
            synchronizes = instruction->callee->synchronizes;
            raises = instruction->callee->raises;
          }
          if ((synchronizes && !function->synchronizes) || (raises && !function->raises)) {
            function->synchronizes |= synchronizes;
            function->raises |= raises;
            changed = true;
          }
        }
  }
  return std::move(module);
}

//===----------------------------------------------------------------------===//
// FunctionEmitter
//===----------------------------------------------------------------------===//

FunctionEmitter::FunctionEmitter(ModuleEmitter &module, const Specialization &spec,
                                 ir::Function &function)
    : module(module), spec(spec), function(function), types(module.checked.types) {}

/// Whether `value` is the same number in `type`, so that a conversion to
/// it may retype the constant instead of casting it.
static bool representableExactly(const ConstantValue &value, const Type *type) {
  if (value.kind() == ConstantValue::Kind::Bool)
    return !llvm::isa<ComplexType>(type);
  if (value.kind() != ConstantValue::Kind::Int)
    return value.kind() == ConstantValue::Kind::Float && llvm::isa<FloatType>(type) &&
           llvm::cast<FloatType>(type)->bitwidth() == 64;
  Int128 v = value.intValue128();
  if (const auto *integer = llvm::dyn_cast<IntegerType>(type)) {
    unsigned bits = integer->bitwidth();
    Int128 low = integer->signedness() ? -(static_cast<Int128>(1) << (bits - 1)) : 0;
    Int128 high = integer->signedness() ? (static_cast<Int128>(1) << (bits - 1)) - 1
                                        : (static_cast<Int128>(1) << bits) - 1;
    return v >= low && v <= high;
  }
  if (const auto *floating = llvm::dyn_cast<FloatType>(type)) {
    Int128 limit = static_cast<Int128>(1) << (floating->bitwidth() == 64   ? 53
                                              : floating->bitwidth() == 32 ? 24
                                                                           : 11);
    return v >= -limit && v <= limit;
  }
  return false;
}

ir::Value *FunctionEmitter::convert(ir::Value *value, const Type *type, ir::Block *where) {
  if (!value || !type || value->type() == type)
    return value;
  // A constant the target type holds exactly is retyped; any other goes
  // through a Cast, whose wrapping, rounding and saturation are the
  // conversion's meaning (np.uint16(70000) is 4464, not 70000).
  if (const auto *known = llvm::dyn_cast<ir::Constant>(value))
    if (type->isScalar() && known->value.isNumber() && representableExactly(known->value, type))
      return constant(type, known->value);
  return emit(ir::Opcode::Cast, type, {value}, where);
}

ir::Value *FunctionEmitter::operand(const ssa::Instr *instr, size_t i,
                                    const Resolution &resolution) {
  ir::Value *value = valueOf(instr->operands[i]);
  const Type *target = i < resolution.operandTypes.size() ? resolution.operandTypes[i] : nullptr;
  return target ? convert(value, target) : value;
}

std::vector<ir::Value *> FunctionEmitter::indexValues(const ssa::Instr *index) {
  std::vector<ir::Value *> result;
  const Type *type = typeOf(index);
  if (const auto *tuple = llvm::dyn_cast<TupleType>(type)) {
    for (size_t i = 0; i < tuple->size(); ++i) {
      ir::Value *element;
      if (index->op == Op::BuildTuple) {
        element = valueOf(index->operands[i]);
      } else {
        ir::Instruction *get =
            emit(ir::Opcode::TupleGet, plain(tuple->elementTypes()[i]), {valueOf(index)});
        get->index = static_cast<unsigned>(i);
        element = get;
      }
      result.push_back(convert(element, types.int64()));
    }
    return result;
  }
  result.push_back(convert(valueOf(index), types.int64()));
  return result;
}

bool FunctionEmitter::edgeRuns(const ssa::Block *from, const ssa::Block *to) const {
  if (!blocks.count(from))
    return false;
  const ssa::Block *decided = spec.decidedSuccessor(*from);
  return !decided || decided == to;
}

void FunctionEmitter::run() {
  const ssa::Function &ssa = *spec.ssa;
  for (const ssa::Instr *argument : ssa.arguments)
    values[argument] = function.arguments[argument->index];

  // Blocks that a decided branch cuts off are neither typed nor compiled.
  std::vector<ssa::Block *> order;
  for (ssa::Block *block : ssa.reversePostOrder())
    if (spec.reachable[block->id])
      order.push_back(block);
  for (const ssa::Block *block : order)
    blocks[block] = function.addBlock();

  // Phis first: loop back edges bring values defined later.
  for (const ssa::Block *block : order)
    for (const ssa::Instr *phi : block->phis) {
      const Type *type = typeOf(phi);
      if (!type || type->isCompileTimeOnly())
        continue;
      ir::Instruction *instruction =
          function.addInstruction(blocks[block], ir::Opcode::Phi, plain(type), phi->range);
      values[phi] = instruction;
      phis.push_back({phi, block, instruction});
    }

  for (const ssa::Block *block : order) {
    current = blocks[block];
    for (const ssa::Instr *instr : block->instrs) {
      location = instr->range;
      emitInstr(instr);
    }
    location = block->terminator.range;
    emitTerminator(block);
  }

  for (const ssa::Block *block : order)
    for (const ssa::Block *predecessor : block->predecessors)
      if (edgeRuns(predecessor, block))
        blocks[block]->predecessors.push_back(blocks[predecessor]);

  for (auto &[phi, block, instruction] : phis) {
    for (size_t i = 0; i < phi->operands.size(); ++i) {
      const ssa::Block *from = phi->incoming[i];
      if (!edgeRuns(from, block))
        continue;
      ir::Block *predecessor = blocks[from];
      const ssa::Instr *incoming = phi->operands[i];
      ir::Value *value = nullptr;
      if (incoming->op == Op::Undefined)
        value = function.undefined(instruction->type(), incoming->name,
                                   incoming->deleted ? ir::Undefined::Cause::Deleted
                                                     : ir::Undefined::Cause::Unassigned);
      else if (ir::Value *defined = valueOf(incoming))
        value = convert(defined, instruction->type(), predecessor);
      // A value that was never emitted stays null, which the verifier
      // reports: silently reading it as undefined would miscompile.
      instruction->operands.push_back(value);
      instruction->incoming.push_back(predecessor);
    }
  }
}

void FunctionEmitter::emitTerminator(const ssa::Block *block) {
  const ssa::Terminator &t = block->terminator;
  ir::Terminator &out = current->terminator;
  out.location = t.range;
  switch (t.kind) {
  case ssa::Terminator::Kind::Jump:
    out.kind = ir::Terminator::Kind::Jump;
    out.target = blocks[t.target];
    return;
  case ssa::Terminator::Kind::Branch:
    if (const ssa::Block *decided = spec.decidedSuccessor(*block)) {
      out.kind = ir::Terminator::Kind::Jump;
      out.target = blocks[decided];
      return;
    }
    out.kind = ir::Terminator::Kind::Branch;
    out.value = convert(valueOf(t.value), types.boolean());
    out.target = blocks[t.target];
    out.falseTarget = blocks[t.falseTarget];
    return;
  case ssa::Terminator::Kind::Return:
    out.kind = ir::Terminator::Kind::Return;
    if (!llvm::isa<NoneType>(function.returnType))
      out.value = convert(valueOf(t.value), function.returnType);
    return;
  case ssa::Terminator::Kind::Raise: {
    out.kind = ir::Terminator::Kind::Raise;
    const Symbol *exception = typing::builtinOf(typeOf(t.value));
    out.exceptionClass = exception ? exception->name().str() : "Exception";
    out.message = spec.resolutions[t.value->id].detail;
    function.raises = true;
    return;
  }
  case ssa::Terminator::Kind::None:
    out.kind = ir::Terminator::Kind::Return;
    return;
  }
}

void FunctionEmitter::emitInstr(const ssa::Instr *instr) {
  const Resolution &resolution = spec.resolutions[instr->id];
  const Type *type = typeOf(instr);
  switch (resolution.kind) {
  case Resolution::Kind::Unresolved:
  case Resolution::Kind::CompileTime:
    return; // no run-time value
  case Resolution::Kind::Constant:
    values[instr] = constant(plain(resolution.result), *resolution.constant);
    return;
  case Resolution::Kind::Value:
    switch (instr->op) {
    case Op::Constant:
      if (type->isCompileTimeOnly())
        return;
      values[instr] = constant(plain(type), *instr->constant);
      return;
    case Op::BuildTuple: {
      // Index tuples with slices (`a[i, :]`) have no run-time value: the
      // view takes their parts.
      if (llvm::any_of(llvm::cast<TupleType>(type)->elementTypes(),
                       [](const Type *t) { return t->kind() == Type::Kind::Slice; }))
        return;
      // Tuples holding None have no run-time value either; indexing them
      // takes the element directly (emitGetItem).
      if (type->isCompileTimeOnly())
        return;
      std::vector<ir::Value *> elements;
      for (const ssa::Instr *element : instr->operands)
        elements.push_back(valueOf(element));
      values[instr] = emit(ir::Opcode::TupleMake, plain(type), elements);
      return;
    }
    default:
      return; // arguments, phis and slices are mapped elsewhere
    }
  case Resolution::Kind::Operator:
  case Resolution::Kind::Truth:
    values[instr] = emitOperator(instr, resolution);
    return;
  case Resolution::Kind::Builtin:
  case Resolution::Kind::Cast:
  case Resolution::Kind::DeviceCall:
  case Resolution::Kind::RangeValue:
    if (instr->op == Op::Call) {
      values[instr] = emitCall(instr, resolution);
      return;
    }
    // Attribute builtins: cuda.threadIdx.x, cuda.laneid, z.real, ...
    if (instr->operands.empty())
      values[instr] = emitBuiltin(instr, resolution, {});
    else
      values[instr] = emitBuiltin(instr, resolution, {valueOf(instr->operands[0])});
    return;
  case Resolution::Kind::ArrayAttribute:
    values[instr] = emitArrayAttribute(instr, resolution);
    return;
  case Resolution::Kind::ArrayItem:
  case Resolution::Kind::ArrayView:
  case Resolution::Kind::TupleItem:
  case Resolution::Kind::TupleDynamicItem:
  case Resolution::Kind::RecordField:
    values[instr] = emitGetItem(instr, resolution);
    return;
  case Resolution::Kind::ArrayStore: {
    ir::Value *array = valueOf(instr->operands[0]);
    std::vector<ir::Value *> operands{array};
    for (ir::Value *index : indexValues(instr->operands[1]))
      operands.push_back(index);
    const auto *arrayType = llvm::cast<ArrayType>(array->type());
    operands.push_back(convert(valueOf(instr->operands[2]), arrayType->elementType()));
    emit(ir::Opcode::ArrayStore, nullptr, operands);
    return;
  }
  case Resolution::Kind::RecordStore: {
    size_t valueIndex = instr->op == Op::SetItem ? 2 : 1;
    ir::Instruction *set =
        emit(ir::Opcode::RecordSet, nullptr,
             {valueOf(instr->operands[0]),
              convert(valueOf(instr->operands[valueIndex]), resolution.operandTypes[valueIndex])});
    set->text = resolution.detail;
    return;
  }
  case Resolution::Kind::LoopOperation:
    values[instr] = emitLoopOperation(instr, resolution);
    return;
  case Resolution::Kind::Assertion: {
    ir::Instruction *assertion =
        emit(ir::Opcode::Assert, nullptr, {convert(valueOf(instr->operands[0]), types.boolean())});
    if (instr->operands.size() > 1)
      if (const auto *message = llvm::dyn_cast<StringLiteralType>(typeOf(instr->operands[1])))
        assertion->text = message->stringValue();
    if (function.options.debug)
      function.raises = true;
    return;
  }
  }
}

ir::Value *FunctionEmitter::emitOperator(const ssa::Instr *instr, const Resolution &resolution) {
  const Type *result = plain(resolution.result);
  if (resolution.kind == Resolution::Kind::Truth) {
    // A condition tests its operand; the call bool(x) has the callee first.
    size_t tested = instr->op == Op::Call ? 1 : 0;
    return convert(valueOf(instr->operands[tested]), types.boolean());
  }
  if (instr->op == Op::Unary) {
    ir::Value *value = operand(instr, 0, resolution);
    switch (instr->unaryOp) {
    case ast::UnaryOp::Negate:
      return emit(ir::Opcode::Neg, result, {value});
    case ast::UnaryOp::Plus:
      return value;
    case ast::UnaryOp::Invert:
      return emit(ir::Opcode::Invert, result, {value});
    case ast::UnaryOp::Not:
      return emit(ir::Opcode::Not, result, {convert(value, types.boolean())});
    }
  }
  if (instr->op == Op::Compare) {
    if (resolution.detail == "tuple_compare")
      return emitTupleCompare(instr->compareOp, valueOf(instr->operands[0]),
                              valueOf(instr->operands[1]));
    ir::Value *lhs = operand(instr, 0, resolution);
    ir::Value *rhs = operand(instr, 1, resolution);
    static const std::map<ast::CompareOp, ir::Opcode> compares = {
        {ast::CompareOp::Eq, ir::Opcode::Eq}, {ast::CompareOp::NotEq, ir::Opcode::Ne},
        {ast::CompareOp::Lt, ir::Opcode::Lt}, {ast::CompareOp::LtE, ir::Opcode::Le},
        {ast::CompareOp::Gt, ir::Opcode::Gt}, {ast::CompareOp::GtE, ir::Opcode::Ge}};
    return emit(compares.at(instr->compareOp), types.boolean(), {lhs, rhs});
  }
  // Binary.
  if (resolution.detail == "tuple_concat") {
    std::vector<ir::Value *> elements;
    for (const ssa::Instr *side : instr->operands) {
      const auto *tuple = llvm::cast<TupleType>(plain(typeOf(side)));
      for (size_t i = 0; i < tuple->size(); ++i) {
        ir::Instruction *get =
            emit(ir::Opcode::TupleGet, tuple->elementTypes()[i], {valueOf(side)});
        get->index = static_cast<unsigned>(i);
        elements.push_back(get);
      }
    }
    return emit(ir::Opcode::TupleMake, result, elements);
  }
  // Numba's implementations cast both operands to the result type (an
  // int64 - uint64 case computes in int64, int / int in float64); only the
  // exponent of a power keeps its own type.
  ir::Value *lhs = convert(operand(instr, 0, resolution), result);
  ir::Value *rhs = operand(instr, 1, resolution);
  if (instr->binaryOp != ast::BinaryOp::Pow)
    rhs = convert(rhs, result);
  static const std::map<ast::BinaryOp, ir::Opcode> arithmetic = {
      {ast::BinaryOp::Add, ir::Opcode::Add},
      {ast::BinaryOp::Sub, ir::Opcode::Sub},
      {ast::BinaryOp::Mul, ir::Opcode::Mul},
      {ast::BinaryOp::TrueDiv, ir::Opcode::TrueDiv},
      {ast::BinaryOp::FloorDiv, ir::Opcode::FloorDiv},
      {ast::BinaryOp::Mod, ir::Opcode::Mod},
      {ast::BinaryOp::Pow, ir::Opcode::Pow},
      {ast::BinaryOp::LShift, ir::Opcode::Shl},
      {ast::BinaryOp::RShift, ir::Opcode::Shr},
      {ast::BinaryOp::BitAnd, ir::Opcode::And},
      {ast::BinaryOp::BitOr, ir::Opcode::Or},
      {ast::BinaryOp::BitXor, ir::Opcode::Xor}};
  return emit(arithmetic.at(instr->binaryOp), result, {lhs, rhs});
}

ir::Value *FunctionEmitter::emitTupleCompare(ast::CompareOp op, ir::Value *lhs, ir::Value *rhs) {
  // Lexicographic, as Python compares tuples: the first unequal pair of
  // elements decides; if one tuple is a prefix of the other, length does.
  const auto *left = llvm::cast<TupleType>(lhs->type());
  const auto *right = llvm::cast<TupleType>(rhs->type());
  size_t n = std::min(left->size(), right->size());
  auto element = [&](ir::Value *tuple, const TupleType *type, size_t i) {
    ir::Instruction *get = emit(ir::Opcode::TupleGet, type->elementTypes()[i], {tuple});
    get->index = static_cast<unsigned>(i);
    return get;
  };
  auto compare = [&](ir::Opcode opcode, ir::Value *a, ir::Value *b) -> ir::Value * {
    Typing typed = typing::compareOperator(types, ast::CompareOp::Eq, a->type(), b->type());
    const Type *common = typed && !typed->operandTypes.empty() ? typed->operandTypes[0] : a->type();
    return emit(opcode, types.boolean(), {convert(a, common), convert(b, common)});
  };
  ir::Value *boolTrue = constant(types.boolean(), ConstantValue::boolean(true));
  ir::Value *boolFalse = constant(types.boolean(), ConstantValue::boolean(false));
  // Result when all compared elements are equal.
  bool lengthResult;
  switch (op) {
  case ast::CompareOp::Eq:
    lengthResult = left->size() == right->size();
    break;
  case ast::CompareOp::NotEq:
    lengthResult = left->size() != right->size();
    break;
  case ast::CompareOp::Lt:
    lengthResult = left->size() < right->size();
    break;
  case ast::CompareOp::LtE:
    lengthResult = left->size() <= right->size();
    break;
  case ast::CompareOp::Gt:
    lengthResult = left->size() > right->size();
    break;
  default:
    lengthResult = left->size() >= right->size();
    break;
  }
  ir::Value *result = lengthResult ? boolTrue : boolFalse;
  for (size_t k = n; k-- > 0;) {
    ir::Value *a = element(lhs, left, k);
    ir::Value *b = element(rhs, right, k);
    ir::Value *equal = compare(ir::Opcode::Eq, a, b);
    ir::Value *decided;
    switch (op) {
    case ast::CompareOp::Eq:
      decided = boolFalse;
      break;
    case ast::CompareOp::NotEq:
      decided = boolTrue;
      break;
    case ast::CompareOp::Lt:
    case ast::CompareOp::LtE:
      decided = compare(ir::Opcode::Lt, a, b);
      break;
    default:
      decided = compare(ir::Opcode::Gt, a, b);
      break;
    }
    result = emit(ir::Opcode::Select, types.boolean(), {equal, result, decided});
  }
  return result;
}

ir::Value *FunctionEmitter::emitArrayAttribute(const ssa::Instr *instr,
                                               const Resolution &resolution) {
  ir::Value *array = valueOf(instr->operands[0]);
  const auto *arrayType = llvm::cast<ArrayType>(array->type());
  if (resolution.detail == "shape" || resolution.detail == "strides") {
    bool shape = resolution.detail == "shape";
    std::vector<ir::Value *> dims;
    for (unsigned d = 0; d < arrayType->rank(); ++d) {
      ir::Instruction *dim =
          emit(shape ? ir::Opcode::ArrayShape : ir::Opcode::ArrayStride, types.int64(), {array});
      dim->index = d;
      dims.push_back(dim);
    }
    return emit(ir::Opcode::TupleMake, plain(resolution.result), dims);
  }
  ir::Value *size = emit(ir::Opcode::ArraySize, types.int64(), {array});
  if (resolution.detail == "size")
    return size;
  // nbytes
  Typing itemsize = typing::getAttribute(types, arrayType, "itemsize");
  return emit(ir::Opcode::Mul, types.int64(), {size, constant(types.int64(), *itemsize->constant)});
}

ir::Value *FunctionEmitter::compileTimeItem(const ssa::Instr *item) {
  // A tuple with no run-time value (one holding None) is a BuildTuple or a
  // constant somewhere up a chain of items; follow the chain up, then take
  // the elements down again.
  std::vector<unsigned> path;
  const ssa::Instr *tuple = item;
  while (!valueOf(tuple) && spec.resolutions[tuple->id].kind == Resolution::Kind::TupleItem) {
    path.insert(path.begin(), spec.resolutions[tuple->id].index);
    tuple = tuple->operands[0];
  }
  for (size_t step = 0; step < path.size(); ++step) {
    if (tuple->op == Op::BuildTuple) {
      tuple = tuple->operands[path[step]];
      continue;
    }
    if (tuple->op != Op::Constant)
      return nullptr;
    ConstantValue element = *tuple->constant;
    for (; step < path.size(); ++step)
      element = ConstantValue(element.elements()[path[step]]);
    const Type *result = plain(typeOf(item));
    return result->isCompileTimeOnly() ? nullptr : constant(result, std::move(element));
  }
  return valueOf(tuple);
}

ir::Value *FunctionEmitter::emitGetItem(const ssa::Instr *instr, const Resolution &resolution) {
  const Type *result = plain(resolution.result);
  ir::Value *object = valueOf(instr->operands[0]);
  switch (resolution.kind) {
  case Resolution::Kind::ArrayItem: {
    std::vector<ir::Value *> operands{object};
    for (ir::Value *index : indexValues(instr->operands[1]))
      operands.push_back(index);
    return emit(ir::Opcode::ArrayLoad, result, operands);
  }
  case Resolution::Kind::ArrayView: {
    if (resolution.detail == "T")
      return emit(ir::Opcode::ArrayTranspose, result, {object});
    const ssa::Instr *index = instr->operands[1];
    std::vector<const ssa::Instr *> items;
    if (index->op == Op::BuildTuple)
      items.assign(index->operands.begin(), index->operands.end());
    else
      items.push_back(index);
    ir::Instruction *view = emit(ir::Opcode::ArrayView, result, {object});
    for (const ssa::Instr *item : items) {
      if (item->op != Op::BuildSlice) {
        // Tuple-valued index items other than built tuples: index values.
        for (ir::Value *value : indexValues(item)) {
          view->operands.push_back(value);
          view->viewItems.push_back({false});
        }
        continue;
      }
      ir::ViewItem viewItem{true};
      bool *present[3] = {&viewItem.hasStart, &viewItem.hasStop, &viewItem.hasStep};
      for (size_t part = 0; part < 3; ++part) {
        const ssa::Instr *bound = item->operands[part];
        if (typeOf(bound) == types.none())
          continue;
        *present[part] = true;
        view->operands.push_back(convert(valueOf(bound), types.int64()));
      }
      view->viewItems.push_back(viewItem);
    }
    return view;
  }
  case Resolution::Kind::TupleItem: {
    if (!object)
      return compileTimeItem(instr);
    ir::Instruction *get = emit(ir::Opcode::TupleGet, result, {object});
    get->index = resolution.index;
    return get;
  }
  case Resolution::Kind::TupleDynamicItem:
    return emit(ir::Opcode::TupleGetDynamic, result,
                {object, convert(valueOf(instr->operands[1]), types.int64())});
  case Resolution::Kind::RecordField: {
    ir::Instruction *get = emit(ir::Opcode::RecordGet, result, {object});
    get->text = resolution.detail;
    return get;
  }
  default:
    return nullptr;
  }
}

ir::Value *FunctionEmitter::emitLoopOperation(const ssa::Instr *instr,
                                              const Resolution &resolution) {
  const Type *result = plain(resolution.result);
  switch (instr->op) {
  case Op::LoopStart:
    return intConstant(result, 0);
  case Op::LoopNext:
    return emit(ir::Opcode::Add, result, {valueOf(instr->operands[0]), intConstant(result, 1)});
  case Op::LoopTest:
    return emit(ir::Opcode::Lt, types.boolean(),
                {valueOf(instr->operands[0]), valueOf(instr->operands[1])});
  case Op::IterCount: {
    ir::Value *iterable = valueOf(instr->operands[0]);
    if (resolution.detail == "range")
      return emit(ir::Opcode::RangeLength, result, {iterable});
    if (resolution.detail == "array") {
      ir::Instruction *length = emit(ir::Opcode::ArrayShape, types.int64(), {iterable});
      length->index = 0;
      return length;
    }
    const auto *tuple = llvm::cast<TupleType>(plain(typeOf(instr->operands[0])));
    return intConstant(types.int64(), static_cast<int64_t>(tuple->size()));
  }
  case Op::IterItem: {
    ir::Value *iterable = valueOf(instr->operands[0]);
    ir::Value *counter = valueOf(instr->operands[1]);
    if (resolution.detail == "range")
      return emit(ir::Opcode::RangeItem, result, {iterable, counter});
    if (resolution.detail == "array") {
      const auto *array = llvm::cast<ArrayType>(iterable->type());
      if (array->rank() == 1)
        return emit(ir::Opcode::ArrayLoad, result, {iterable, convert(counter, types.int64())});
      ir::Instruction *view =
          emit(ir::Opcode::ArrayView, result, {iterable, convert(counter, types.int64())});
      view->viewItems.push_back({false});
      return view;
    }
    if (llvm::cast<TupleType>(iterable->type())->size() == 0)
      return nullptr;
    return emit(ir::Opcode::TupleGetDynamic, result, {iterable, convert(counter, types.int64())});
  }
  default:
    return nullptr;
  }
}

ir::Value *FunctionEmitter::emitCall(const ssa::Instr *instr, const Resolution &resolution) {
  const Type *result = resolution.result ? plain(resolution.result) : nullptr;
  std::vector<ir::Value *> args;
  for (size_t i = 1; i < instr->operands.size(); ++i)
    args.push_back(operand(instr, i, resolution));
  switch (resolution.kind) {
  case Resolution::Kind::Cast:
    return convert(valueOf(instr->operands[1]), result);
  case Resolution::Kind::DeviceCall: {
    ir::Function *callee = module.functionFor(resolution.callee);
    // Keyword arguments were matched to parameters during typing.
    std::vector<ir::Value *> ordered(callee->arguments.size(), nullptr);
    size_t positional = args.size() - instr->keywordNames.size();
    for (size_t i = 0; i < positional; ++i)
      ordered[i] = args[i];
    if (const ast::FunctionDefStmt *def = resolution.callee->decl.def)
      for (size_t k = 0; k < instr->keywordNames.size(); ++k)
        for (size_t p = 0; p < def->params.size(); ++p)
          if (def->params[p].name == instr->keywordNames[k])
            ordered[p] = args[positional + k];
    // Arguments the call left out pass their parameter's default value;
    // None, which has no run-time value, passes as a constant none.
    const FunctionDecl &decl = resolution.callee->decl;
    for (size_t i = 0; i < ordered.size(); ++i) {
      const Type *parameterType = callee->arguments[i]->type();
      if (ordered[i])
        continue;
      if (llvm::isa<NoneType>(parameterType))
        ordered[i] = constant(parameterType, ConstantValue::none());
      else if (i < decl.defaults.size() && decl.defaults[i])
        ordered[i] = constant(parameterType, *decl.defaults[i]);
    }
    for (size_t i = 0; i < ordered.size(); ++i)
      ordered[i] = convert(ordered[i], callee->arguments[i]->type());
    ir::Instruction *call =
        emit(ir::Opcode::Call,
             llvm::isa<NoneType>(callee->returnType) ? nullptr : callee->returnType, ordered);
    call->callee = callee;
    return call;
  }
  case Resolution::Kind::RangeValue: {
    const auto *range = llvm::cast<RangeType>(result);
    const Type *element = range->elementType();
    ir::Value *start = args.size() >= 2 ? args[0] : intConstant(element, 0);
    ir::Value *stop = args.size() >= 2 ? args[1] : args[0];
    ir::Value *step = args.size() == 3 ? args[2] : intConstant(element, 1);
    return emit(ir::Opcode::RangeMake, result, {start, stop, step});
  }
  default:
    return emitBuiltin(instr, resolution, args);
  }
}

ir::Value *FunctionEmitter::emitMinMax(bool isMin, const Type *result,
                                       llvm::ArrayRef<ir::Value *> args) {
  std::vector<ir::Value *> items;
  if (args.size() == 1) {
    const auto *tuple = llvm::cast<TupleType>(args[0]->type());
    for (size_t i = 0; i < tuple->size(); ++i) {
      ir::Instruction *get = emit(ir::Opcode::TupleGet, tuple->elementTypes()[i], {args[0]});
      get->index = static_cast<unsigned>(i);
      items.push_back(convert(get, result));
    }
  } else {
    for (ir::Value *arg : args)
      items.push_back(convert(arg, result));
  }
  // Python keeps the first item unless a later one is strictly smaller
  // (larger): min(a, b) is `b if b < a else a`.
  ir::Value *best = items[0];
  for (size_t i = 1; i < items.size(); ++i) {
    ir::Value *better =
        emit(isMin ? ir::Opcode::Lt : ir::Opcode::Gt, types.boolean(), {items[i], best});
    best = emit(ir::Opcode::Select, result, {better, items[i], best});
  }
  return best;
}

ir::Value *FunctionEmitter::emitPrint(const ssa::Instr *instr) {
  ir::Instruction *print = emit(ir::Opcode::Print, nullptr, {});
  for (size_t i = 1; i < instr->operands.size(); ++i) {
    const ssa::Instr *argument = instr->operands[i];
    const Type *type = typeOf(argument);
    if (const auto *text = llvm::dyn_cast<StringLiteralType>(type)) {
      print->printItems.push_back({ir::PrintItem::Kind::Text, text->stringValue()});
    } else if (type == types.none()) {
      print->printItems.push_back({ir::PrintItem::Kind::Text, "None"});
    } else {
      print->printItems.push_back({ir::PrintItem::Kind::Value, ""});
      print->operands.push_back(convert(valueOf(argument), plain(type)));
    }
  }
  return nullptr;
}

ir::Value *FunctionEmitter::emitBuiltin(const ssa::Instr *instr, const Resolution &resolution,
                                        llvm::ArrayRef<ir::Value *> args) {
  const Type *result = resolution.result ? plain(resolution.result) : nullptr;
  BuiltinId id = resolution.builtin;
  const Symbol &symbol = BuiltinSymbols::get().symbol(id);
  if (symbol.qualifiedName.starts_with("math.") || symbol.qualifiedName.starts_with("cmath."))
    return emitMath(id, result, args);
  if (symbol.qualifiedName.starts_with("numba.cuda."))
    return emitCuda(instr, id, resolution, args);
  switch (id) {
  case BuiltinId::PyAbs: {
    ir::Value *x = args[0];
    if (const auto *complex = llvm::dyn_cast<ComplexType>(x->type())) {
      const Type *part = complex->elementType();
      return intrinsic(
          ir::Intrinsic::Hypot, part,
          {emit(ir::Opcode::ComplexReal, part, {x}), emit(ir::Opcode::ComplexImag, part, {x})});
    }
    if (llvm::isa<FloatType>(x->type()))
      return intrinsic(ir::Intrinsic::Fabs, result, {x});
    if (!llvm::cast<IntegerType>(x->type())->signedness())
      return x;
    ir::Value *negative = emit(ir::Opcode::Lt, types.boolean(), {x, intConstant(x->type(), 0)});
    return emit(ir::Opcode::Select, result, {negative, emit(ir::Opcode::Neg, result, {x}), x});
  }
  case BuiltinId::PyMin:
  case BuiltinId::PyMax:
    return emitMinMax(id == BuiltinId::PyMin, result, args);
  case BuiltinId::PyLen: {
    if (llvm::isa<RangeType>(args[0]->type()))
      return convert(emit(ir::Opcode::RangeLength,
                          llvm::cast<RangeType>(args[0]->type())->elementType(), {args[0]}),
                     types.int64());
    ir::Instruction *length = emit(ir::Opcode::ArrayShape, types.int64(), {args[0]});
    length->index = 0;
    return length;
  }
  case BuiltinId::PyRound:
    if (args.size() == 1)
      return convert(intrinsic(ir::Intrinsic::Rint, args[0]->type(), {args[0]}), result);
    return intrinsic(ir::Intrinsic::RoundDigits, result, {args[0], args[1]});
  case BuiltinId::PyPow:
    return emit(ir::Opcode::Pow, result, {args[0], args[1]});
  case BuiltinId::PyDivmod:
    return emit(ir::Opcode::TupleMake, result,
                {emit(ir::Opcode::FloorDiv, args[0]->type(), {args[0], args[1]}),
                 emit(ir::Opcode::Mod, args[0]->type(), {args[0], args[1]})});
  case BuiltinId::PyPrint:
    return emitPrint(instr);
  case BuiltinId::PyComplex: {
    if (instr->op == Op::Call && resolution.detail.empty()) {
      if (args.size() == 1 && llvm::isa<ComplexType>(args[0]->type()))
        return convert(args[0], result);
      const Type *part = llvm::cast<ComplexType>(result)->elementType();
      ir::Value *imaginary =
          args.size() == 2 ? args[1] : constant(part, ConstantValue::floating(0));
      return emit(ir::Opcode::ComplexMake, result,
                  {convert(args[0], part), convert(imaginary, part)});
    }
    // .real, .imag, .conjugate() of a number.
    ir::Value *x = instr->op == Op::Call ? methodReceiver(instr) : valueOf(instr->operands[0]);
    x = convert(x, resolution.operandTypes.empty() || !resolution.operandTypes[0]
                       ? x->type()
                       : resolution.operandTypes[0]);
    const auto *complex = llvm::dyn_cast<ComplexType>(x->type());
    if (resolution.detail == "real")
      return complex ? emit(ir::Opcode::ComplexReal, result, {x}) : x;
    if (resolution.detail == "imag")
      return complex ? emit(ir::Opcode::ComplexImag, result, {x})
                     : constant(result, ConstantValue::integer(0));
    if (!complex)
      return x;
    const Type *part = complex->elementType();
    return emit(ir::Opcode::ComplexMake, x->type(),
                {emit(ir::Opcode::ComplexReal, part, {x}),
                 emit(ir::Opcode::Neg, part, {emit(ir::Opcode::ComplexImag, part, {x})})});
  }
  default:
    return nullptr;
  }
}

ir::Value *FunctionEmitter::emitMath(BuiltinId id, const Type *result,
                                     llvm::ArrayRef<ir::Value *> arguments) {
  using I = ir::Intrinsic;
  // Numba's cases such as float64(int64) compute on the float: integer
  // arguments convert, except ldexp's exponent.
  std::vector<ir::Value *> args(arguments.begin(), arguments.end());
  if (llvm::isa_and_nonnull<FloatType>(result) && id != BuiltinId::Math_ldexp)
    for (ir::Value *&arg : args)
      if (llvm::isa<IntegerType>(arg->type()))
        arg = convert(arg, result);
  static const std::map<BuiltinId, I> direct = {
      {BuiltinId::Math_sin, I::Sin},
      {BuiltinId::Math_cos, I::Cos},
      {BuiltinId::Math_tan, I::Tan},
      {BuiltinId::Math_asin, I::Asin},
      {BuiltinId::Math_acos, I::Acos},
      {BuiltinId::Math_atan, I::Atan},
      {BuiltinId::Math_atan2, I::Atan2},
      {BuiltinId::Math_sinh, I::Sinh},
      {BuiltinId::Math_cosh, I::Cosh},
      {BuiltinId::Math_tanh, I::Tanh},
      {BuiltinId::Math_asinh, I::Asinh},
      {BuiltinId::Math_acosh, I::Acosh},
      {BuiltinId::Math_atanh, I::Atanh},
      {BuiltinId::Math_exp, I::Exp},
      {BuiltinId::Math_exp2, I::Exp2},
      {BuiltinId::Math_expm1, I::Expm1},
      {BuiltinId::Math_log, I::Log},
      {BuiltinId::Math_log2, I::Log2},
      {BuiltinId::Math_log10, I::Log10},
      {BuiltinId::Math_log1p, I::Log1p},
      {BuiltinId::Math_sqrt, I::Sqrt},
      {BuiltinId::Math_fabs, I::Fabs},
      {BuiltinId::Math_floor, I::Floor},
      {BuiltinId::Math_ceil, I::Ceil},
      {BuiltinId::Math_trunc, I::Trunc},
      {BuiltinId::Math_erf, I::Erf},
      {BuiltinId::Math_erfc, I::Erfc},
      {BuiltinId::Math_gamma, I::Tgamma},
      {BuiltinId::Math_lgamma, I::Lgamma},
      {BuiltinId::Math_hypot, I::Hypot},
      {BuiltinId::Math_copysign, I::Copysign},
      {BuiltinId::Math_fmod, I::Fmod},
      {BuiltinId::Math_remainder, I::Remainder},
      {BuiltinId::Math_nextafter, I::Nextafter},
      {BuiltinId::Math_pow, I::PowF},
      {BuiltinId::Math_ldexp, I::Ldexp},
      {BuiltinId::Math_frexp, I::Frexp},
      {BuiltinId::Math_modf, I::Modf},
  };
  auto found = direct.find(id);
  if (found != direct.end()) {
    // pow(float32, int32) and ldexp take an int32 second operand; pow's is
    // converted to the base's type (C's pow has no integer exponent).
    if (id == BuiltinId::Math_pow)
      return intrinsic(I::PowF, result, {args[0], convert(args[1], args[0]->type())});
    return intrinsic(found->second, result, args);
  }
  switch (id) {
  case BuiltinId::Math_degrees:
  case BuiltinId::Math_radians: {
    double factor = id == BuiltinId::Math_degrees ? 180.0 / M_PI : M_PI / 180.0;
    return emit(ir::Opcode::Mul, result,
                {args[0], constant(result, ConstantValue::floating(factor))});
  }
  case BuiltinId::Math_isnan:
  case BuiltinId::Math_isinf:
  case BuiltinId::Math_isfinite:
    if (llvm::isa<IntegerType>(args[0]->type()))
      return constant(types.boolean(), ConstantValue::boolean(id == BuiltinId::Math_isfinite));
    return intrinsic(id == BuiltinId::Math_isnan   ? I::IsNan
                     : id == BuiltinId::Math_isinf ? I::IsInf
                                                   : I::IsFinite,
                     types.boolean(), args);
  default:
    break;
  }
  // cmath: Kiln's prelude implements each function in Python.
  const Symbol &symbol = BuiltinSymbols::get().symbol(id);
  std::vector<const Type *> argTypes;
  for (ir::Value *arg : args)
    argTypes.push_back(arg->type());
  // cmath.log(z, base) is log_base: a default base would need the call to
  // be typed with an omitted argument.
  llvm::StringRef name =
      id == BuiltinId::Cmath_log && args.size() == 2 ? llvm::StringRef("log_base") : symbol.name();
  ir::Function *implementation = module.preludeFunction("kiln.cmath", name, argTypes);
  if (!implementation)
    return nullptr;
  ir::Instruction *call = emit(ir::Opcode::Call, implementation->returnType, args);
  call->callee = implementation;
  return convert(call, result);
}

ir::Value *FunctionEmitter::emitCuda(const ssa::Instr *instr, BuiltinId id,
                                     const Resolution &resolution,
                                     llvm::ArrayRef<ir::Value *> args) {
  using I = ir::Intrinsic;
  const Type *result = resolution.result ? plain(resolution.result) : nullptr;
  const Type *int32 = types.int32();
  const Type *uint32 = types.integer(32, false);
  const Type *int64 = types.int64();
  auto markSynchronizes = [&] { function.synchronizes = true; };
  switch (id) {
  case BuiltinId::CudaThreadIdx:
  case BuiltinId::CudaBlockIdx:
  case BuiltinId::CudaBlockDim:
  case BuiltinId::CudaGridDim: {
    unsigned dimension = static_cast<unsigned>(resolution.detail[0] - 'x');
    I which = id == BuiltinId::CudaThreadIdx  ? I::ThreadIdx
              : id == BuiltinId::CudaBlockIdx ? I::BlockIdx
              : id == BuiltinId::CudaBlockDim ? I::BlockDim
                                              : I::GridDim;
    return intrinsic(which, int32, {}, dimension);
  }
  case BuiltinId::CudaLaneid:
    return intrinsic(I::LaneId, int32, {});
  case BuiltinId::CudaWarpsize:
    return intrinsic(I::WarpSize, int32, {});
  case BuiltinId::CudaGrid:
  case BuiltinId::CudaGridsize: {
    // As Numba: 64-bit arithmetic on the sign-extended 32-bit registers.
    std::vector<ir::Value *> dims;
    for (unsigned d = 0; d < resolution.index; ++d) {
      ir::Value *blockDim = convert(intrinsic(I::BlockDim, int32, {}, d), int64);
      if (id == BuiltinId::CudaGrid) {
        ir::Value *thread = convert(intrinsic(I::ThreadIdx, int32, {}, d), int64);
        ir::Value *block = convert(intrinsic(I::BlockIdx, int32, {}, d), int64);
        dims.push_back(emit(ir::Opcode::Add, int64,
                            {emit(ir::Opcode::Mul, int64, {blockDim, block}), thread}));
      } else {
        ir::Value *gridDim = convert(intrinsic(I::GridDim, int32, {}, d), int64);
        dims.push_back(emit(ir::Opcode::Mul, int64, {blockDim, gridDim}));
      }
    }
    return dims.size() == 1 ? dims[0] : emit(ir::Opcode::TupleMake, result, dims);
  }
  case BuiltinId::CudaSharedArray:
  case BuiltinId::CudaLocalArray: {
    // The shape is a constant: an integer literal or a tuple of them.
    const ssa::Instr *shapeArgument = instr->operands[1];
    for (size_t i = 0; i < instr->keywordNames.size(); ++i)
      if (instr->keywordNames[i] == "shape")
        shapeArgument = instr->operands[instr->operands.size() - instr->keywordNames.size() + i];
    std::vector<uint64_t> shape;
    const Type *shapeType = typeOf(shapeArgument);
    if (const auto *literal = llvm::dyn_cast<IntegerLiteralType>(shapeType))
      shape.push_back(static_cast<uint64_t>(literal->bits()));
    else
      for (const Type *dim : llvm::cast<TupleType>(shapeType)->elementTypes())
        shape.push_back(static_cast<uint64_t>(llvm::cast<IntegerLiteralType>(dim)->bits()));
    bool dynamic = id == BuiltinId::CudaSharedArray && shape.size() == 1 && shape[0] == 0;
    ir::Instruction *array = emit(dynamic ? ir::Opcode::DynamicSharedArray
                                  : id == BuiltinId::CudaSharedArray ? ir::Opcode::SharedArray
                                                                     : ir::Opcode::LocalArray,
                                  result, {});
    array->shape = std::move(shape);
    return array;
  }
  case BuiltinId::CudaConstArrayLike:
    return args[0];
  case BuiltinId::CudaSyncthreads:
    markSynchronizes();
    return intrinsic(I::SyncThreads, nullptr, {});
  case BuiltinId::CudaSyncthreadsCount:
  case BuiltinId::CudaSyncthreadsAnd:
  case BuiltinId::CudaSyncthreadsOr:
    markSynchronizes();
    return intrinsic(id == BuiltinId::CudaSyncthreadsCount ? I::SyncThreadsCount
                     : id == BuiltinId::CudaSyncthreadsAnd ? I::SyncThreadsAnd
                                                           : I::SyncThreadsOr,
                     int32, {convert(args[0], int32)});
  case BuiltinId::CudaSyncwarp:
    markSynchronizes();
    return intrinsic(I::SyncWarp, nullptr,
                     {args.empty() ? constant(uint32, ConstantValue::integer(0xFFFFFFFF))
                                   : convert(args[0], uint32)});
  case BuiltinId::CudaThreadfence:
    return intrinsic(I::ThreadFence, nullptr, {});
  case BuiltinId::CudaThreadfenceBlock:
    return intrinsic(I::ThreadFenceBlock, nullptr, {});
  case BuiltinId::CudaThreadfenceSystem:
    return intrinsic(I::ThreadFenceSystem, nullptr, {});
  case BuiltinId::CudaNanosleep:
    return intrinsic(I::Nanosleep, nullptr, {convert(args[0], uint32)});
  case BuiltinId::CudaShflSync:
  case BuiltinId::CudaShflUpSync:
  case BuiltinId::CudaShflDownSync:
  case BuiltinId::CudaShflXorSync:
    markSynchronizes();
    return intrinsic(id == BuiltinId::CudaShflSync       ? I::ShflIdx
                     : id == BuiltinId::CudaShflUpSync   ? I::ShflUp
                     : id == BuiltinId::CudaShflDownSync ? I::ShflDown
                                                         : I::ShflXor,
                     result, {convert(args[0], uint32), args[1], convert(args[2], uint32)});
  case BuiltinId::CudaAllSync:
  case BuiltinId::CudaAnySync:
  case BuiltinId::CudaEqSync:
  case BuiltinId::CudaBallotSync:
    markSynchronizes();
    return intrinsic(id == BuiltinId::CudaAllSync   ? I::VoteAll
                     : id == BuiltinId::CudaAnySync ? I::VoteAny
                     : id == BuiltinId::CudaEqSync  ? I::VoteUni
                                                    : I::VoteBallot,
                     result, {convert(args[0], uint32), convert(args[1], types.boolean())});
  case BuiltinId::CudaMatchAnySync:
  case BuiltinId::CudaMatchAllSync:
    markSynchronizes();
    return intrinsic(id == BuiltinId::CudaMatchAnySync ? I::MatchAny : I::MatchAll, result,
                     {convert(args[0], uint32), args[1]});
  case BuiltinId::CudaActivemask:
    return intrinsic(I::ActiveMask, result, {});
  case BuiltinId::CudaLanemaskLt:
    return intrinsic(I::LanemaskLt, result, {});
  case BuiltinId::CudaPopc:
    // Also int.bit_count(), an attribute call on the value itself.
    return intrinsic(I::Popc, result,
                     {instr->op != Op::Call ? valueOf(instr->operands[0])
                      : args.empty()        ? methodReceiver(instr)
                                            : args[0]});
  case BuiltinId::CudaBrev:
    return intrinsic(I::Brev, result, args);
  case BuiltinId::CudaClz:
    return intrinsic(I::Clz, result, args);
  case BuiltinId::CudaFfs:
    return intrinsic(I::Ffs, result, args);
  case BuiltinId::CudaFma:
    return intrinsic(I::Fma, result, args);
  case BuiltinId::CudaCbrt:
    return intrinsic(I::Cbrt, result, args);
  case BuiltinId::CudaSelp:
    return emit(ir::Opcode::Select, result, {convert(args[0], types.boolean()), args[1], args[2]});
  default:
    break;
  }
  if (BuiltinSymbols::get().symbol(id).qualifiedName.starts_with("numba.cuda.atomic.")) {
    static const std::map<BuiltinId, I> atomics = {
        {BuiltinId::CudaAtomicAdd, I::AtomicAdd},
        {BuiltinId::CudaAtomicSub, I::AtomicSub},
        {BuiltinId::CudaAtomicAnd, I::AtomicAnd},
        {BuiltinId::CudaAtomicOr, I::AtomicOr},
        {BuiltinId::CudaAtomicXor, I::AtomicXor},
        {BuiltinId::CudaAtomicInc, I::AtomicInc},
        {BuiltinId::CudaAtomicDec, I::AtomicDec},
        {BuiltinId::CudaAtomicExch, I::AtomicExch},
        {BuiltinId::CudaAtomicMax, I::AtomicMax},
        {BuiltinId::CudaAtomicMin, I::AtomicMin},
        {BuiltinId::CudaAtomicNanmax, I::AtomicNanMax},
        {BuiltinId::CudaAtomicNanmin, I::AtomicNanMin},
        {BuiltinId::CudaAtomicCas, I::AtomicCas},
        {BuiltinId::CudaAtomicCompareAndSwap, I::AtomicCas}};
    ir::Value *array = args[0];
    const auto *arrayType = llvm::cast<ArrayType>(array->type());
    std::vector<ir::Value *> operands{array};
    if (id == BuiltinId::CudaAtomicCompareAndSwap) {
      operands.push_back(intConstant(int64, 0)); // compare_and_swap works on element 0
    } else {
      for (ir::Value *index : indexValues(instr->operands[2]))
        operands.push_back(index);
    }
    size_t firstValue = id == BuiltinId::CudaAtomicCompareAndSwap ? 1 : 2;
    for (size_t i = firstValue; i < args.size(); ++i)
      operands.push_back(convert(args[i], arrayType->elementType()));
    return intrinsic(atomics.at(id), result, operands, arrayType->rank());
  }
  // cuda.fp16
  llvm::StringRef name = BuiltinSymbols::get().symbol(id).name();
  static const std::map<llvm::StringRef, ir::Opcode> fp16Operators = {
      {"hadd", ir::Opcode::Add},     {"hsub", ir::Opcode::Sub}, {"hmul", ir::Opcode::Mul},
      {"hdiv", ir::Opcode::TrueDiv}, {"heq", ir::Opcode::Eq},   {"hne", ir::Opcode::Ne},
      {"hgt", ir::Opcode::Gt},       {"hge", ir::Opcode::Ge},   {"hlt", ir::Opcode::Lt},
      {"hle", ir::Opcode::Le}};
  static const std::map<llvm::StringRef, I> fp16Intrinsics = {
      {"habs", I::Fabs},    {"hfma", I::Fma},     {"hmax", I::Fmax},    {"hmin", I::Fmin},
      {"hsin", I::Sin},     {"hcos", I::Cos},     {"hlog", I::Log},     {"hlog10", I::Log10},
      {"hlog2", I::Log2},   {"hexp", I::Exp},     {"hexp10", I::Exp10}, {"hexp2", I::Exp2},
      {"hsqrt", I::Sqrt},   {"hrsqrt", I::Rsqrt}, {"hceil", I::Ceil},   {"hfloor", I::Floor},
      {"htrunc", I::Trunc}, {"hrint", I::Rint}};
  if (auto op = fp16Operators.find(name); op != fp16Operators.end())
    return emit(op->second, result, args);
  if (auto op = fp16Intrinsics.find(name); op != fp16Intrinsics.end())
    return intrinsic(op->second, result, args);
  if (name == "hneg")
    return emit(ir::Opcode::Neg, result, args);
  if (name == "hrcp")
    return emit(ir::Opcode::TrueDiv, result,
                {constant(result, ConstantValue::floating(1.0)), args[0]});
  return nullptr;
}

} // namespace

std::unique_ptr<ir::Module> emitTypedIR(CheckedModule &checked, llvm::StringRef moduleName) {
  std::unique_ptr<ir::Module> module = ModuleEmitter(checked, moduleName).run();
  if (std::optional<std::string> problem = ir::verify(*module)) {
    checked.diags.report(DiagID::err_internal_invalid_ir, SourceRange(), {*problem});
    return nullptr;
  }
  return module;
}

} // namespace kiln
