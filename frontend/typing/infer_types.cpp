//===- frontend/typing/infer_types.cpp - Fixed-point type inference -------===//
//
// See [Note: type inference] in type_inference.h. This file holds the
// fixed point over one specialization's blocks, the checks of its returns
// and the reporting of its errors; TypeInference's specializations and the
// diagnostics of those reachable. FunctionTyper types each operation in
// infer_operations.cpp and each call in infer_calls.cpp.
//
//===----------------------------------------------------------------------===//

#include "frontend/typing/function_typer.h"
#include "frontend/typing/typing_rules.h"

#include <llvm/ADT/DenseSet.h>
#include <llvm/ADT/SmallPtrSet.h>

namespace kiln {

using ssa::Op;

std::string Specialization::argumentList() const {
  std::string text = "(";
  for (size_t i = 0; i < argTypes.size(); ++i)
    text += (i ? ", " : "") + argTypes[i]->str();
  return text + ")";
}

const Type *declaredReturnType(const Specialization &spec) {
  if (spec.decl.kind == FunctionDecl::Kind::Kernel)
    return nullptr;
  for (const Signature &signature : spec.decl.signatures)
    if (signature.args == spec.argTypes && signature.returnType)
      return signature.returnType;
  return nullptr;
}

void FunctionTyper::addDiagnostic(DiagID id, SourceRange range,
                                  const std::vector<std::string> &args) {
  spec.diagnostics.push_back(inference.diagnostics().makeDiagnostic(id, range, args));
}

bool FunctionTyper::edgeCanRun(const ssa::Block &from, const ssa::Block &to) const {
  if (!processed[from.id])
    return previouslyReachable[from.id]; // a back edge: last iteration's answer
  if (!spec.reachable[from.id])
    return false;
  const ssa::Block *decided = spec.decidedSuccessor(from);
  return !decided || decided == &to;
}

bool FunctionTyper::clear(const Instr *instr) {
  errors[instr->id].reset();
  bool changed = spec.valueTypes[instr->id] != nullptr;
  spec.valueTypes[instr->id] = nullptr;
  spec.resolutions[instr->id] = Resolution();
  return changed;
}

bool FunctionTyper::record(const Instr *instr, Typing typing) {
  if (!typing) {
    errors[instr->id] = typing.error();
    bool changed = spec.valueTypes[instr->id] != nullptr;
    spec.valueTypes[instr->id] = nullptr;
    spec.resolutions[instr->id] = Resolution();
    return changed;
  }
  errors[instr->id].reset();
  const Type *type = accumulated(instr, *typing);
  bool changed = spec.valueTypes[instr->id] != type;
  spec.valueTypes[instr->id] = type;
  spec.resolutions[instr->id] = std::move(*typing);
  return changed;
}

const Type *FunctionTyper::accumulated(const Instr *instr, const Resolution &resolution) {
  const Type *previous = typeOf(instr);
  const Type *now = resolution.result;
  if (!previous || !now || previous == now)
    return now;
  switch (resolution.kind) {
  case Resolution::Kind::Operator:
  case Resolution::Kind::Builtin:
  case Resolution::Kind::DeviceCall:
  case Resolution::Kind::UfuncCall:
    break;
  default:
    return now;
  }
  auto isPlainNumber = [](const Type *type) {
    return type->kind() == Type::Kind::Integer || type->kind() == Type::Kind::Float;
  };
  if (!isPlainNumber(previous) || !isPlainNumber(now))
    return now;
  const Type *unified = types.unify(previous, now);
  return unified ? unified : now;
}

void FunctionTyper::typeReturns() {
  returnError.reset();
  // A declared return type (a signature of a device function or ufunc):
  // every returned value converts to it, as Numba's locked return variable
  // requires ("No conversion from complex128 to float32").
  const Type *declared = declaredReturnType(spec);
  const Type *result = nullptr;
  for (const auto &block : fn.blocks) {
    if (!spec.reachable[block->id])
      continue;
    const ssa::Terminator &terminator = block->terminator;
    if (terminator.kind == ssa::Terminator::Kind::Raise) {
      const Type *exception = typeOf(terminator.value);
      const Symbol *symbol = exception ? typing::builtinOf(exception) : nullptr;
      if (exception && (!symbol || symbol->kind != Symbol::Kind::Exception)) {
        returnError =
            TypingError{DiagID::err_raise_non_exception, {exception->str()}, terminator.range};
      }
      continue;
    }
    if (terminator.kind != ssa::Terminator::Kind::Return)
      continue;
    if (terminator.value && terminator.value->op == Op::Undefined &&
        !typeUnassignedRead(terminator.value)) {
      if (!returnError)
        returnError = TypingError{
            DiagID::err_undefined_variable, {terminator.value->name}, terminator.value->range};
      continue;
    }
    const Type *type = typeOf(terminator.value);
    if (!type)
      continue;
    if (spec.decl.kind == FunctionDecl::Kind::Kernel && type != types.none()) {
      returnError = TypingError{DiagID::err_kernel_returns, {type->str()}, terminator.range};
      continue;
    }
    if (declared) {
      if (!types.canConvert(type, declared) && !returnError)
        returnError = TypingError{DiagID::err_return_type_mismatch,
                                  {spec.decl.kindName().str(), spec.decl.name,
                                   types.unliteral(type)->str(), declared->str()},
                                  terminator.range};
      continue;
    }
    if (type->isCompileTimeOnly() && type != types.none()) {
      returnError = TypingError{DiagID::err_compile_time_value, {type->str()}, terminator.range};
      continue;
    }
    if (!result) {
      result = type;
      continue;
    }
    const Type *unified = types.unify(result, type);
    if (!unified) {
      returnError = TypingError{
          DiagID::err_cannot_unify_return, {result->str(), type->str()}, terminator.range};
      continue;
    }
    result = unified;
  }
  if (spec.decl.kind == FunctionDecl::Kind::Kernel) {
    spec.returnType = types.none();
    return;
  }
  if (declared) {
    spec.returnType = declared;
    return;
  }
  // Literal return types are widened: callers see int64, not Literal[int](3).
  spec.returnType = result ? types.unliteral(result) : types.none();
}

void FunctionTyper::run() {
  size_t count = fn.instrs.size();
  spec.valueTypes.assign(count, nullptr);
  spec.resolutions.assign(count, Resolution());
  errors.assign(count, std::nullopt);
  std::vector<ssa::Block *> order = fn.reversePostOrder();

  constexpr unsigned maxIterations = 200;
  bool changed = true;
  // Block ids stay as the SSA builder gave them, with gaps where it dropped
  // empty blocks: vectors by id need the largest id + 1 slots.
  size_t blockSlots = 0;
  for (const auto &block : fn.blocks)
    blockSlots = std::max<size_t>(blockSlots, block->id + 1);
  previouslyReachable.assign(blockSlots, true);
  for (unsigned iteration = 0; changed && iteration < maxIterations; ++iteration) {
    changed = false;
    failedCallees.clear();
    // Reachability is found as blocks are typed, in reverse post-order: a
    // branch that typing decided reaches only the side it takes.
    std::vector<bool> &reachable = spec.reachable;
    reachable.assign(blockSlots, false);
    processed.assign(blockSlots, false);
    reachable[order.front()->id] = true;
    for (ssa::Block *block : order) {
      processed[block->id] = true;
      if (!reachable[block->id]) {
        for (const Instr *phi : block->phis)
          changed |= clear(phi);
        for (const Instr *instr : block->instrs)
          changed |= clear(instr);
        continue;
      }
      currentBlock = block;
      for (const Instr *phi : block->phis)
        changed |= record(phi, typeInstr(phi));
      for (const Instr *instr : block->instrs)
        changed |= record(instr, typeInstr(instr));
      if (const ssa::Block *decided = spec.decidedSuccessor(*block))
        reachable[decided->id] = true;
      else
        for (ssa::Block *successor : block->successors())
          reachable[successor->id] = true;
    }
    changed |= previouslyReachable != reachable;
    previouslyReachable = reachable;
    for (const Instr *undefined : fn.undefinedValues)
      errors[undefined->id].reset();
  }
  typeReturns();
  reportErrors(order);

  // Record the device functions the final typing calls, including those
  // whose failure made a call fail, so that their diagnostics are reported.
  for (auto &[callee, site] : failedCallees)
    if (llvm::none_of(spec.callees, [&](const auto &entry) { return entry.first == callee; }))
      spec.callees.push_back({callee, site});
  for (ssa::Block *block : order)
    for (const Instr *instr : block->instrs) {
      const Resolution &resolution = spec.resolutions[instr->id];
      if (resolution.kind == Resolution::Kind::DeviceCall && resolution.callee)
        spec.callees.push_back({resolution.callee, instr->range});
    }
}

void FunctionTyper::reportErrors(llvm::ArrayRef<ssa::Block *> order) {
  // Report each instruction's problem in program order, except problems that
  // only follow from an operand that failed first.
  bool reportsOthers = returnError.has_value();
  for (const auto &error : errors) {
    reportsOthers |= error && !error->silent && !error->unlessOtherErrors;
    // Even a silent failure means this specialization cannot be compiled.
    spec.failed |= error.has_value();
  }
  auto report = [&](const Instr *instr) {
    const std::optional<TypingError> &error = errors[instr->id];
    if (!error || error->silent || (error->unlessOtherErrors && reportsOthers))
      return;
    SourceRange range = error->range;
    if (!range.isValid() && error->operand >= 0) {
      // Rules count call arguments from 0 (a starred tuple's items each);
      // the callee is operand 0 of a call.
      size_t index = static_cast<size_t>(error->operand);
      if (instr->op == Op::Call) {
        std::vector<size_t> operandOf;
        argumentTypes(instr, &operandOf);
        index = index < operandOf.size() ? operandOf[index] : index + 1;
      }
      if (index < instr->operandRanges.size())
        range = instr->operandRanges[index];
    }
    addDiagnostic(error->id, range.isValid() ? range : instr->range, error->args);
    spec.failed = true;
  };
  for (ssa::Block *block : order) {
    for (const Instr *phi : block->phis)
      report(phi);
    for (const Instr *instr : block->instrs)
      report(instr);
  }
  if (returnError) {
    addDiagnostic(returnError->id, returnError->range, returnError->args);
    spec.failed = true;
  }
}

const ssa::Block *Specialization::decidedSuccessor(const ssa::Block &block) const {
  const ssa::Terminator &terminator = block.terminator;
  if (terminator.kind != ssa::Terminator::Kind::Branch)
    return nullptr;
  const ssa::Instr *condition = terminator.value;
  // bool(x) of a decided x is decided too.
  for (size_t steps = 0; condition && steps < ssa->instrs.size(); ++steps) {
    // Numba prunes after building SSA form once: a variable merged from
    // several assignments is a phi there, whatever the values it merges,
    // and a branch on it is kept even where that pruning leaves one
    // incoming (`while i < n:` entered for sure, `if flag_set_in_the_loop:`).
    if (condition->isPhi()) {
      condition = valueBeforeSSA(*condition);
      continue;
    }
    const Resolution &resolution = resolutions[condition->id];
    if (resolution.kind == Resolution::Kind::Constant && resolution.constant)
      return resolution.constant->truthy() ? terminator.target : terminator.falseTarget;
    // A value typed as a literal has that value wherever it is read (an
    // item of a literal tuple: `a, flag = (x, True)`), and Numba prunes by
    // it as by a constant.
    const Type *conditionType = typeOf(condition);
    if (const auto *literal = llvm::dyn_cast_or_null<BooleanLiteralType>(conditionType))
      return literal->boolValue() ? terminator.target : terminator.falseTarget;
    if (const auto *literal = llvm::dyn_cast_or_null<IntegerLiteralType>(conditionType))
      return literal->bits() != 0 ? terminator.target : terminator.falseTarget;
    if (condition->op != ssa::Op::Truth)
      return nullptr;
    // bool() of a constant (a module constant, a local whose reaching
    // assignment is one) decides the branch, as Numba's dead-branch pruning
    // does, so the other side's assignments never reach a merge's type.
    // (CPython itself drops the other side of a literal condition: SSA
    // construction never builds it.)
    const ssa::Instr *operand = condition->operands[0];
    if (operand->op == ssa::Op::Constant && operand->constant)
      return operand->constant->truthy() ? terminator.target : terminator.falseTarget;
    // So does an argument passed as a literal bool or int, or as None, as
    // Numba prunes branches on the literal arguments of a call.
    if (operand->op == ssa::Op::Argument && operand->index < argTypes.size()) {
      const Type *type = argTypes[operand->index];
      if (const auto *literal = llvm::dyn_cast<BooleanLiteralType>(type))
        return literal->boolValue() ? terminator.target : terminator.falseTarget;
      if (const auto *literal = llvm::dyn_cast<IntegerLiteralType>(type))
        return literal->bits() != 0 ? terminator.target : terminator.falseTarget;
      if (llvm::isa<NoneType>(type))
        return terminator.falseTarget;
    }
    condition = operand;
  }
  return nullptr;
}

namespace {

/// What the pruning before SSA form removes: an edge whose branch it
/// decides the other way.
bool edgePrunedBeforeSSA(const Specialization &spec, const ssa::Block &from, const ssa::Block &to) {
  if (from.terminator.kind != ssa::Terminator::Kind::Branch ||
      spec.ssa->unknownBeforeSSA.contains(from.terminator.value))
    return false;
  const ssa::Block *decided = spec.decidedSuccessor(from);
  return decided && decided != &to;
}

/// ... and a block reached only over such an edge.
bool blockPrunedBeforeSSA(const Specialization &spec, const ssa::Block *block) {
  for (size_t steps = 0; steps < spec.ssa->blocks.size() && block->predecessors.size() == 1;
       ++steps) {
    const ssa::Block *from = block->predecessors.front();
    if (edgePrunedBeforeSSA(spec, *from, *block))
      return true;
    block = from;
  }
  return false;
}

/// The one value `phi` merges once that pruning is done, looking through
/// the phis it merges (a loop's, the `if` in its body) but not back into
/// those being resolved, which a cycle returns to unchanged: null where it
/// merges no value of its own (only such cycles), none where several.
std::optional<const ssa::Instr *>
mergedBeforeSSA(const Specialization &spec, const ssa::Instr &phi,
                llvm::SmallPtrSetImpl<const ssa::Instr *> &resolving) {
  resolving.insert(&phi);
  const ssa::Instr *merged = nullptr;
  for (size_t i = 0; i < phi.operands.size(); ++i) {
    const ssa::Block *from = phi.incoming[i];
    const ssa::Instr *value = phi.operands[i];
    if (resolving.contains(value) || edgePrunedBeforeSSA(spec, *from, *phi.block) ||
        blockPrunedBeforeSSA(spec, from))
      continue;
    if (value->isPhi()) {
      std::optional<const ssa::Instr *> inner = mergedBeforeSSA(spec, *value, resolving);
      if (!inner)
        return std::nullopt;
      if (!*inner)
        continue;
      value = *inner;
    }
    if (merged && merged != value)
      return std::nullopt;
    merged = value;
  }
  return merged;
}

} // namespace

const ssa::Instr *Specialization::valueBeforeSSA(const ssa::Instr &phi) const {
  llvm::SmallPtrSet<const ssa::Instr *, 8> resolving;
  return mergedBeforeSSA(*this, phi, resolving).value_or(nullptr);
}

const FunctionDecl &TypeInference::deviceFunctionOf(const FunctionDecl &kernel) {
  std::unique_ptr<FunctionDecl> &device = kernelsAsDevice[&kernel];
  if (!device) {
    device = std::make_unique<FunctionDecl>(kernel);
    device->kind = FunctionDecl::Kind::Device;
    device->signatures.clear();
    device->kernelCalled = &kernel;
  }
  return *device;
}

Specialization *TypeInference::specialize(const FunctionDecl &decl,
                                          const std::vector<const Type *> &argTypes) {
  auto key = std::make_pair(&decl, argTypes);
  auto found = specializations.find(key);
  if (found != specializations.end())
    return found->second.get();
  auto owned = std::make_unique<Specialization>(decl, argTypes);
  Specialization *spec = owned.get();
  specializations.emplace(key, std::move(owned));

  if (decl.kind == FunctionDecl::Kind::External) {
    spec->returnType = decl.signatures.front().returnType;
    return spec;
  }
  auto ssa = ssaFunctions.find(&decl);
  if (ssa == ssaFunctions.end())
    ssa = ssaFunctions.emplace(&decl, ssa::buildSSA(decl, *decl.scope, typeContext, diags)).first;
  if (!ssa->second) {
    spec->failed = true; // its syntax errors are already reported
    return spec;
  }
  spec->ssa = ssa->second.get();
  spec->inProgress = true;
  ++activeSpecializations;
  FunctionTyper(*spec, *this).run();
  --activeSpecializations;
  spec->inProgress = false;
  return spec;
}

void TypeInference::reportDiagnostics(llvm::ArrayRef<Specialization *> roots) {
  // Each reachable specialization reports once, with the chain of calls that
  // reached it first as notes. A chain may be maxCallDepth long: its
  // outermost calls and the innermost one are shown, the rest counted, so
  // that neither the message nor the work grows with the square of it.
  constexpr size_t outermostNotes = 10;
  llvm::DenseSet<Specialization *> visited;
  struct Pending {
    Specialization *spec;
    std::vector<Diagnostic> context;
    std::optional<Diagnostic> innermost;
    unsigned omitted = 0;
  };
  std::vector<Pending> worklist;
  for (Specialization *root : llvm::reverse(roots)) {
    Diagnostic note =
        diags.makeNote(DiagID::note_in_specialization, root->decl.range,
                       {root->decl.kindName(), root->decl.name, root->argumentList()});
    worklist.push_back({root, {note}, std::nullopt, 0});
  }
  while (!worklist.empty()) {
    Pending pending = std::move(worklist.back());
    worklist.pop_back();
    if (!visited.insert(pending.spec).second)
      continue;
    for (Diagnostic diagnostic : pending.spec->diagnostics) {
      if (pending.innermost)
        diagnostic.notes.push_back(*pending.innermost);
      if (pending.omitted)
        diagnostic.notes.push_back(diags.makeNote(DiagID::note_calls_omitted, SourceRange(),
                                                  {std::to_string(pending.omitted)}));
      for (auto it = pending.context.rbegin(); it != pending.context.rend(); ++it)
        diagnostic.notes.push_back(*it);
      diags.emit(std::move(diagnostic));
    }
    for (auto it = pending.spec->callees.rbegin(); it != pending.spec->callees.rend(); ++it) {
      Pending next{it->first, pending.context, pending.innermost, pending.omitted};
      Diagnostic note = diags.makeNote(
          DiagID::note_in_call, it->second,
          {it->first->decl.kindName(), it->first->decl.name, it->first->argumentList()});
      if (next.context.size() < outermostNotes) {
        next.context.push_back(std::move(note));
      } else {
        next.omitted += next.innermost.has_value();
        next.innermost = std::move(note);
      }
      worklist.push_back(std::move(next));
    }
  }
}

} // namespace kiln
