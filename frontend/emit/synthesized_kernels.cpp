//===- frontend/emit/synthesized_kernels.cpp ------------------------------===//

#include "frontend/emit/synthesized_kernels.h"

namespace kiln {

namespace {

/// Appends typed IR to one function, keeping predecessor lists up to date.
class Builder {
public:
  Builder(ir::Function &function, TypeContext &types) : function(function), types(types) {}

  ir::Block *block() { return function.addBlock(); }
  void at(ir::Block *block) { current = block; }

  ir::Instruction *emit(ir::Opcode opcode, const Type *type, llvm::ArrayRef<ir::Value *> operands) {
    ir::Instruction *instruction = function.addInstruction(current, opcode, type, ir::Location());
    instruction->operands.assign(operands.begin(), operands.end());
    return instruction;
  }
  ir::Value *int64(int64_t value) {
    return function.constant(types.int64(), ConstantValue::integer(value));
  }
  /// An index register (threadIdx.x, ...) as int64.
  ir::Value *index(ir::Intrinsic which) {
    ir::Instruction *read = emit(ir::Opcode::Intrinsic, types.int32(), {});
    read->intrinsic = which;
    return emit(ir::Opcode::Cast, types.int64(), {read});
  }
  void syncThreads() {
    ir::Instruction *barrier = emit(ir::Opcode::Intrinsic, nullptr, {});
    barrier->intrinsic = ir::Intrinsic::SyncThreads;
  }
  ir::Value *shape(ir::Value *array) {
    return emit(ir::Opcode::ArrayShape, types.int64(), {array});
  }
  ir::Value *load(ir::Value *array, ir::Value *index) {
    return emit(ir::Opcode::ArrayLoad, llvm::cast<ArrayType>(array->type())->elementType(),
                {array, index});
  }
  void store(ir::Value *array, ir::Value *index, ir::Value *value) {
    emit(ir::Opcode::ArrayStore, nullptr, {array, index, convert(value, elementOf(array))});
  }
  ir::Value *convert(ir::Value *value, const Type *type) {
    return value->type() == type ? value : emit(ir::Opcode::Cast, type, {value});
  }
  ir::Value *call(ir::Function &callee, std::vector<ir::Value *> arguments) {
    for (size_t i = 0; i < arguments.size(); ++i)
      arguments[i] = convert(arguments[i], callee.arguments[i]->type());
    ir::Instruction *call = emit(ir::Opcode::Call, callee.returnType, arguments);
    call->callee = &callee;
    return call;
  }
  ir::Instruction *phi(const Type *type) {
    // Phis come first in their block, before anything else is emitted.
    return emit(ir::Opcode::Phi, type, {});
  }
  static void incoming(ir::Instruction *phi, ir::Value *value, ir::Block *from) {
    phi->operands.push_back(value);
    phi->incoming.push_back(from);
  }

  void jump(ir::Block *target) { ir::jump(current, target); }
  void branch(ir::Value *condition, ir::Block *whenTrue, ir::Block *whenFalse) {
    ir::branch(current, condition, whenTrue, whenFalse);
  }
  void ret() { current->terminator.kind = ir::Terminator::Kind::Return; }

  static const Type *elementOf(ir::Value *array) {
    return llvm::cast<ArrayType>(array->type())->elementType();
  }

  ir::Function &function;
  TypeContext &types;
  ir::Block *current = nullptr;
};

ir::Function *newKernel(ir::Module &module, TypeContext &types, ir::Function &core,
                        std::string symbol, ir::Function::Origin origin) {
  ir::Function *kernel = module.addFunction();
  kernel->symbol = std::move(symbol);
  kernel->sourceName = core.sourceName;
  kernel->kind = ir::Function::Kind::Kernel;
  kernel->origin = origin;
  kernel->options = core.options;
  kernel->semanticHash = core.semanticHash;
  kernel->returnType = types.none();
  kernel->path = core.path;
  kernel->location = core.location;
  kernel->raises = core.raises;
  return kernel;
}

} // namespace

ir::Function *synthesizeUfuncKernel(ir::Module &module, TypeContext &types, ir::Function &core,
                                    std::string symbol) {
  ir::Function *kernel =
      newKernel(module, types, core, std::move(symbol), ir::Function::Origin::UfuncLoop);
  std::vector<ir::Argument *> inputs;
  for (const ir::Argument *argument : core.arguments)
    inputs.push_back(
        kernel->addArgument(types.array(argument->type(), 1, ArrayLayout::A), argument->name));
  ir::Argument *out = kernel->addArgument(types.array(core.returnType, 1, ArrayLayout::A), "out");

  Builder b(*kernel, types);
  ir::Block *entry = b.block(), *body = b.block(), *exit = b.block();
  b.at(entry);
  ir::Value *i =
      b.emit(ir::Opcode::Add, types.int64(),
             {b.emit(ir::Opcode::Mul, types.int64(),
                     {b.index(ir::Intrinsic::BlockDim), b.index(ir::Intrinsic::BlockIdx)}),
              b.index(ir::Intrinsic::ThreadIdx)});
  b.branch(b.emit(ir::Opcode::Lt, types.boolean(), {i, b.shape(out)}), body, exit);

  b.at(body);
  std::vector<ir::Value *> elements;
  for (ir::Argument *input : inputs)
    elements.push_back(b.load(input, i));
  b.store(out, i, b.call(core, elements));
  b.jump(exit);

  b.at(exit);
  b.ret();
  return kernel;
}

ir::Function *synthesizeReductionKernel(ir::Module &module, TypeContext &types, ir::Function &core,
                                        const Type *element, std::string symbol) {
  ir::Function *kernel =
      newKernel(module, types, core, std::move(symbol), ir::Function::Origin::ReductionLoop);
  kernel->synchronizes = true;
  ir::Argument *values = kernel->addArgument(types.array(element, 1, ArrayLayout::A), "values");
  ir::Argument *partials = kernel->addArgument(types.array(element, 1, ArrayLayout::C), "partials");
  ir::Argument *init = kernel->addArgument(element, "init");
  ir::Argument *useInit = kernel->addArgument(types.boolean(), "use_init");
  const Type *int64 = types.int64();
  const Type *boolean = types.boolean();
  auto fold = [&](Builder &b, ir::Value *x, ir::Value *y) {
    return b.convert(b.call(core, {x, y}), element);
  };

  Builder b(*kernel, types);
  ir::Block *entry = b.block(), *first = b.block(), *loopHead = b.block(), *loopBody = b.block(),
            *publish = b.block(), *barrier = b.block(), *treeHead = b.block(),
            *treeCheck = b.block(), *treeFold = b.block(), *treeLatch = b.block(),
            *finish = b.block(), *writeOut = b.block(), *addInit = b.block(), *store = b.block(),
            *done = b.block();

  // Each thread folds its grid-stride share of `values`.
  b.at(entry);
  ir::Value *thread = b.index(ir::Intrinsic::ThreadIdx);
  ir::Value *block = b.index(ir::Intrinsic::BlockIdx);
  ir::Value *blockDim = b.index(ir::Intrinsic::BlockDim);
  ir::Value *stride = b.emit(ir::Opcode::Mul, int64, {blockDim, b.index(ir::Intrinsic::GridDim)});
  ir::Value *base = b.emit(ir::Opcode::Mul, int64, {block, blockDim});
  ir::Value *start = b.emit(ir::Opcode::Add, int64, {base, thread});
  ir::Value *length = b.shape(values);
  // Threads with values form a prefix of the block: those below `active`.
  ir::Value *remaining = b.emit(ir::Opcode::Sub, int64, {length, base});
  ir::Value *active =
      b.emit(ir::Opcode::Select, int64,
             {b.emit(ir::Opcode::Lt, boolean, {remaining, blockDim}), remaining, blockDim});
  ir::Instruction *shared =
      b.emit(ir::Opcode::SharedArray, types.array(element, 1, ArrayLayout::C), {});
  shared->shape = {kReductionBlockSize};
  b.branch(b.emit(ir::Opcode::Lt, boolean, {start, length}), first, barrier);

  b.at(first);
  ir::Value *firstValue = b.load(values, start);
  ir::Value *second = b.emit(ir::Opcode::Add, int64, {start, stride});
  b.jump(loopHead);

  b.at(loopHead);
  ir::Instruction *accumulated = b.phi(element);
  ir::Instruction *index = b.phi(int64);
  b.branch(b.emit(ir::Opcode::Lt, boolean, {index, length}), loopBody, publish);

  b.at(loopBody);
  ir::Value *folded = fold(b, accumulated, b.load(values, index));
  ir::Value *nextIndex = b.emit(ir::Opcode::Add, int64, {index, stride});
  b.jump(loopHead);
  Builder::incoming(accumulated, firstValue, first);
  Builder::incoming(accumulated, folded, loopBody);
  Builder::incoming(index, second, first);
  Builder::incoming(index, nextIndex, loopBody);

  b.at(publish);
  b.store(shared, thread, accumulated);
  b.jump(barrier);

  // A tree over shared memory: at each level, thread t (a multiple of
  // 2 * width) folds in t + width if that thread had values.
  b.at(barrier);
  b.syncThreads();
  b.jump(treeHead);

  b.at(treeHead);
  ir::Instruction *width = b.phi(int64);
  b.branch(b.emit(ir::Opcode::Lt, boolean, {width, blockDim}), treeCheck, finish);

  b.at(treeCheck);
  ir::Value *doubled = b.emit(ir::Opcode::Mul, int64, {width, b.int64(2)});
  ir::Value *partner = b.emit(ir::Opcode::Add, int64, {thread, width});
  ir::Value *leads = b.emit(ir::Opcode::Eq, boolean,
                            {b.emit(ir::Opcode::Mod, int64, {thread, doubled}), b.int64(0)});
  ir::Value *partnerActive = b.emit(ir::Opcode::Lt, boolean, {partner, active});
  b.branch(b.emit(ir::Opcode::And, boolean, {leads, partnerActive}), treeFold, treeLatch);

  b.at(treeFold);
  b.store(shared, thread, fold(b, b.load(shared, thread), b.load(shared, partner)));
  b.jump(treeLatch);

  b.at(treeLatch);
  b.syncThreads();
  b.jump(treeHead);
  Builder::incoming(width, b.int64(1), barrier);
  Builder::incoming(width, doubled, treeLatch);

  // Thread 0 of a block with values writes its partial.
  b.at(finish);
  ir::Value *leader = b.emit(ir::Opcode::Eq, boolean, {thread, b.int64(0)});
  ir::Value *hasValues = b.emit(ir::Opcode::Gt, boolean, {active, b.int64(0)});
  b.branch(b.emit(ir::Opcode::And, boolean, {leader, hasValues}), writeOut, done);

  b.at(writeOut);
  ir::Value *partial = b.load(shared, b.int64(0));
  ir::Value *firstBlock = b.emit(ir::Opcode::Eq, boolean, {block, b.int64(0)});
  b.branch(b.emit(ir::Opcode::And, boolean, {useInit, firstBlock}), addInit, store);

  b.at(addInit);
  ir::Value *withInit = fold(b, partial, init);
  b.jump(store);

  b.at(store);
  ir::Instruction *result = b.phi(element);
  Builder::incoming(result, partial, writeOut);
  Builder::incoming(result, withInit, addInit);
  b.store(partials, block, result);
  b.jump(done);

  b.at(done);
  b.ret();
  return kernel;
}

} // namespace kiln
