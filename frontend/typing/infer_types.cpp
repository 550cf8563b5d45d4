//===- frontend/typing/infer_types.cpp - Fixed-point type inference -------===//
//
// See [Note: type inference] in type_inference.h.
//
//===----------------------------------------------------------------------===//

#include "frontend/resolve/constant_folding.h"
#include "frontend/typing/compile_time_shape.h"
#include "frontend/typing/overloads.h"
#include "frontend/typing/type_inference.h"
#include "frontend/typing/typing_rules.h"

#include <llvm/ADT/DenseSet.h>
#include <llvm/ADT/StringExtras.h>

namespace kiln {

using ssa::Instr;
using ssa::Op;

std::string Specialization::argumentList() const {
  std::string text = "(";
  for (size_t i = 0; i < argTypes.size(); ++i)
    text += (i ? ", " : "") + argTypes[i]->str();
  return text + ")";
}

namespace {

/// Whether a function passed on may have captured a value of type `type`:
/// a constant its type says (a literal, a function, None), as Numba
/// freezes what such a function captures.
bool isConstantCapture(const Type *type) {
  return type->isCompileTimeOnly() || llvm::isa<IntegerLiteralType>(type) ||
         llvm::isa<BooleanLiteralType>(type);
}

/// Whether a call of `callee` may unpack a tuple into its arguments: a
/// device function, a number type, or a builtin function of Python, math
/// or cmath (print aside, which prints its operands as written). Numba's
/// other calls read some arguments as written (shapes, atomic indices).
bool acceptsStarredArguments(const Type *callee) {
  if (typing::functionOf(callee) || llvm::isa<NumberClassType>(callee))
    return true;
  if (const auto *entity = llvm::dyn_cast<EntityType>(callee))
    if (entity->entityKindOf() == EntityType::EntityKind::Overload ||
        entity->entityKindOf() == EntityType::EntityKind::OverloadedMethod)
      return true;
  const Symbol *symbol = typing::builtinOf(callee);
  if (!symbol || symbol->is(BuiltinId::PyPrint))
    return false;
  llvm::StringRef name = symbol->qualifiedName;
  return name.starts_with("builtins.") || name.starts_with("math.") || name.starts_with("cmath.");
}

bool isOmitted(const Type *type) {
  const auto *entity = llvm::dyn_cast<EntityType>(type);
  return entity && entity->entityKindOf() == EntityType::EntityKind::Omitted;
}

/// The return type a specialization's signature declares, or null.
const Type *declaredReturnType(const Specialization &spec) {
  if (spec.decl.kind == FunctionDecl::Kind::Kernel)
    return nullptr;
  for (const Signature &signature : spec.decl.signatures)
    if (signature.args == spec.argTypes && signature.returnType)
      return signature.returnType;
  return nullptr;
}

/// The unified type of the values a specialization being typed returns,
/// among those typed so far; null if none is.
const Type *returnTypeSoFar(const Specialization &spec, TypeContext &types) {
  const Type *result = nullptr;
  for (const auto &block : spec.ssa->blocks) {
    // Blocks found unreachable have no types.
    if (block->terminator.kind != ssa::Terminator::Kind::Return)
      continue;
    const Type *type = spec.typeOf(block->terminator.value);
    if (!type || type->isCompileTimeOnly())
      continue;
    type = types.unliteral(type);
    result = result ? types.unify(result, type) : type;
    if (!result)
      return nullptr;
  }
  return result;
}

/// Types one specialization of a function.
class FunctionTyper {
public:
  FunctionTyper(Specialization &spec, TypeInference &inference)
      : spec(spec), fn(*spec.ssa), inference(inference), types(inference.types()) {}

  void run();

private:
  bool unwrappingOptionals = false;
  /// An instruction's type; while an operation is typed again with its
  /// optional operands unwrapped, their value types.
  const Type *typeOf(const Instr *instr) const {
    const Type *type = spec.valueTypes[instr->id];
    if (const auto *optional =
            unwrappingOptionals ? llvm::dyn_cast_or_null<OptionalType>(type) : nullptr)
      return optional->valueType();
    return type;
  }
  /// Updates an instruction's typing; returns whether its type changed.
  bool record(const Instr *instr, Typing typing);
  /// The type of an instruction's value, given its latest typing. Numba's
  /// type variables only widen: an operation typed again once a loop has
  /// widened its operands keeps the union of its types (`~x` of a uint8,
  /// then of an int64: uint64 and int64, so float64), and its value is
  /// computed in the operation's own type, then converted, as Numba's
  /// lowering casts a call's result to its variable's type. Numbers only:
  /// that is where the union changes a value.
  const Type *accumulated(const Instr *instr, const Resolution &resolution);
  /// Forgets an instruction of an unreachable block; returns whether it had
  /// a type.
  bool clear(const Instr *instr);
  /// Whether control can pass from `from` to `to`, as far as typing knows.
  bool edgeCanRun(const ssa::Block &from, const ssa::Block &to) const;
  Typing typeInstr(const Instr *instr);
  Typing typeOperation(const Instr *instr);
  /// Numba's templates: an operator or builtin that takes no optional
  /// operand is typed again with their values, which the operation then
  /// unwraps (raising TypeError on None).
  Typing typeWithOptionalsUnwrapped(const Instr *instr);
  Typing typePhi(const Instr *phi);
  Typing typeCall(const Instr *call);
  /// `Point(1, 2)`, `Point(x=1, y=2)`: a named tuple of the class `cls`
  /// (see TypeContext::namedTupleClass), its elements typed as values.
  Typing typeNamedTupleCall(const Instr *call, const NamedTupleType &cls,
                            llvm::ArrayRef<const Type *> args);
  /// A call of a function numba.extending.overload implements: the
  /// implementation resolved for the arguments' types, called as a device
  /// function; else a request to the host (see OverloadSet).
  Typing typeOverloadCall(const Instr *call, const OverloadSet &overloads,
                          llvm::ArrayRef<const Type *> args);
  /// The types of a call's arguments, a starred operand's tuple items in
  /// its place (`f(*t)`); `operandOf`, if given, gets each one's operand.
  std::vector<const Type *> argumentTypes(const Instr *call,
                                          std::vector<size_t> *operandOf = nullptr) const;
  Typing typeTupleSlice(const Instr *instr, const TupleType &tuple);
  /// Types `read`, an Undefined operand, where Numba compiles it: false for
  /// a read before any assignment of the variable in the source.
  bool typeUnassignedRead(const Instr *read);
  /// A call of a kernel or device function; of a function defined inside
  /// another, given the types of what it `captures`.
  Typing typeDeviceCall(const Instr *call, const FunctionDecl &callee,
                        llvm::ArrayRef<const Type *> args, const TupleType *captures = nullptr);
  void typeReturns();
  void reportErrors(llvm::ArrayRef<ssa::Block *> order);
  void addDiagnostic(DiagID id, SourceRange range, const std::vector<std::string> &args);

  Specialization &spec;
  const ssa::Function &fn;
  TypeInference &inference;
  TypeContext &types;
  /// The latest problem typing each instruction, if it has one.
  std::vector<std::optional<TypingError>> errors;
  std::optional<TypingError> returnError;
  /// Device functions called with arguments they failed to type for.
  std::vector<std::pair<Specialization *, SourceRange>> failedCallees;
  // Reachability while an iteration types the blocks (see run()).
  std::vector<bool> processed;
  std::vector<bool> previouslyReachable;
  const ssa::Block *currentBlock = nullptr;
};

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

Typing FunctionTyper::typePhi(const Instr *phi) {
  // Phis accumulate, as Numba's type variables do: the type only widens.
  const Type *unified = typeOf(phi);
  bool anyUndefined = false;
  for (size_t i = 0; i < phi->operands.size(); ++i) {
    const Instr *incoming = phi->operands[i];
    if (!edgeCanRun(*phi->incoming[i], *currentBlock))
      continue;
    const Type *type = typeOf(incoming);
    anyUndefined |= incoming->op == Op::Undefined;
    if (!type)
      continue; // undefined on that path, or not typed yet
    if (!unified) {
      unified = type;
      continue;
    }
    const Type *next = types.unify(unified, type);
    if (!next) {
      // The value of `a if c else b`, `a or b`, ... is a hidden variable:
      // name the expression instead.
      llvm::StringRef name = phi->name;
      if (name.starts_with("$"))
        return Typing::error(DiagID::err_cannot_unify_expression,
                             {unified->str(), type->str(),
                              name.starts_with("$ifexp") ? "conditional expression"
                              : name.starts_with("$and") ? "'and' expression"
                              : name.starts_with("$or")  ? "'or' expression"
                                                         : "expression"});
      return Typing::error(DiagID::err_cannot_unify, {unified->str(), type->str(), phi->name});
    }
    unified = next;
  }
  if (!unified) {
    // A variable unassigned on some path that gets no type from the others
    // (`total += x` before any `total = ...`) is read before assignment,
    // unless what failed was reported already.
    if (anyUndefined && !llvm::StringRef(phi->name).starts_with("$")) {
      Typing failure = Typing::error(DiagID::err_undefined_variable, {phi->name});
      TypingError error = failure.error();
      error.unlessOtherErrors = true;
      return error;
    }
    return Typing::cascade();
  }
  return Resolution::value(unified);
}

bool FunctionTyper::typeUnassignedRead(const Instr *read) {
  // Numba compiles a read that no assignment reaches where the variable is
  // assigned earlier in the source (in another branch): the read has that
  // assignment's type, and its value is undefined. Kiln's is zero, for
  // numbers and bools; reads of other values stay errors.
  if (read->deleted)
    return false;
  for (const ssa::VariableDef &variable : spec.ssa->variables) {
    if (variable.name != read->name || variable.value->isPhi() ||
        variable.value->op == Op::Undefined ||
        variable.range.begin.file != read->range.begin.file ||
        variable.range.begin.offset >= read->range.begin.offset)
      continue;
    const Type *type = typeOf(variable.value);
    if (!type)
      return true; // typed once the assignment is
    type = types.unliteral(type);
    if (!type->isScalar())
      return false;
    spec.valueTypes[read->id] = type;
    return true;
  }
  return false;
}

Typing FunctionTyper::typeDeviceCall(const Instr *call, const FunctionDecl &callee,
                                     llvm::ArrayRef<const Type *> args, const TupleType *captures) {
  switch (callee.kind) {
  case FunctionDecl::Kind::Kernel:
    return typeDeviceCall(call, inference.deviceFunctionOf(callee), args);
  case FunctionDecl::Kind::Ufunc:
  case FunctionDecl::Kind::Reduction:
    return Typing::error(DiagID::err_call_ufunc_in_device_code,
                         {callee.kindName().str(), callee.name});
  default:
    break;
  }
  // Keyword arguments go to the parameters of the same name.
  size_t keywordCount = call->keywordNames.size();
  size_t positional = args.size() - keywordCount;
  std::vector<const Type *> ordered;
  if (callee.def) {
    const auto &params = callee.def->params;
    // `*args` takes the positional arguments after the others, as a tuple.
    size_t fixed = callee.variadic ? params.size() - 1 : params.size();
    if (positional > fixed && !callee.variadic)
      return Typing::error(
          DiagID::err_wrong_argument_count,
          {callee.name, countOf(params.size(), "argument"), std::to_string(args.size())});
    ordered.assign(params.size(), nullptr);
    for (size_t i = 0; i < std::min(positional, fixed); ++i)
      ordered[i] = args[i];
    if (callee.variadic) {
      std::vector<const Type *> rest;
      for (size_t i = fixed; i < positional; ++i)
        rest.push_back(types.unliteral(args[i]));
      ordered[fixed] = types.tuple(rest);
    }
    for (size_t k = 0; k < keywordCount; ++k) {
      auto param = llvm::find_if(
          params, [&](const ast::Parameter &p) { return p.name == call->keywordNames[k]; });
      if (param == params.end())
        return Typing::error(DiagID::err_unexpected_keyword_argument,
                             {callee.name, call->keywordNames[k]});
      ordered[static_cast<size_t>(param - params.begin())] = args[positional + k];
    }
    for (size_t i = 0; i < params.size(); ++i) {
      if (ordered[i])
        continue;
      // A parameter left out takes its default, as Numba's
      // omitted(default=...) argument; not with declared signatures, which
      // Numba cannot match such a call to.
      const std::optional<ConstantValue> *fallback =
          i < callee.defaults.size() ? &callee.defaults[i] : nullptr;
      if (!fallback || !*fallback || !callee.signatures.empty())
        return Typing::error(DiagID::err_missing_argument, {callee.name, params[i].name.str()});
      const Type *valueType = (*fallback)->type(types, ConstantRole::Value);
      if (!valueType || (valueType->isCompileTimeOnly() && valueType != types.none()))
        return Typing::error(DiagID::err_compile_time_value,
                             {"the default value " + (*fallback)->repr() + " of parameter '" +
                              params[i].name.str() + "'"});
      ordered[i] = types.omitted(valueType, (*fallback)->repr());
    }
  } else {
    if (keywordCount)
      return Typing::error(DiagID::err_unexpected_keyword_argument,
                           {callee.name, call->keywordNames.front()});
    ordered.assign(args.begin(), args.end());
  }
  // A function defined inside another takes what it captured after the
  // arguments: the values where it is defined; passed on, the constants.
  if (captures) {
    bool whereDefined = call->operands[0]->op == Op::Closure;
    for (size_t k = 0; k < captures->size(); ++k) {
      const Type *captured = captures->elementTypes()[k];
      if (!whereDefined && !isConstantCapture(captured))
        return Typing::error(DiagID::err_closure_captures_run_time_value,
                             {callee.def->name.str(), callee.captures[k]},
                             call->operandRanges.front());
      ordered.push_back(captured);
    }
  }
  // Compile-time values (functions, dtypes, strings) specialize the callee
  // on them, as in Numba; a method or a slice has no meaning there.
  for (const Type *arg : ordered)
    if (const auto *entity = llvm::dyn_cast<EntityType>(arg);
        (entity && entity->entityKindOf() == EntityType::EntityKind::Method) ||
        llvm::isa<SliceType>(arg))
      return Typing::error(DiagID::err_compile_time_value, {arg->str()});

  // With declared signatures (device functions given a signature, external
  // declarations), the call converts to the best one, as Numba does when it
  // cannot compile new specializations.
  std::vector<const Type *> target = ordered;
  std::vector<const Type *> conversions(args.size() + 1, nullptr);
  if (!callee.signatures.empty()) {
    std::vector<OverloadCase> cases;
    for (const Signature &signature : callee.signatures)
      cases.push_back({signature.returnType, signature.args});
    const OverloadCase *chosen = resolveOverload(types, cases, ordered);
    if (!chosen) {
      std::string list;
      for (size_t i = 0; i < ordered.size(); ++i)
        list += (i ? ", " : "") + ordered[i]->str();
      return Typing::error(DiagID::err_no_call_overload, {callee.name, list});
    }
    target = chosen->args;
  }
  if (inference.callDepth() > TypeInference::maxCallDepth &&
      !inference.hasSpecialization(callee, target))
    return Typing::error(DiagID::err_call_chain_too_deep,
                         {callee.name, std::to_string(TypeInference::maxCallDepth)});
  Specialization *specialization = inference.specialize(callee, target);
  const Type *returnType = specialization->returnType;
  if (specialization->inProgress) {
    // Recursion, as Numba types it: the callee's declared return type, or,
    // for a function calling itself, the type its other returns give so far
    // (the fixed point widens it as they do). A call that can only return
    // by recursing has none: runaway recursion.
    // (A closure's copy of the function counts as the function itself.)
    returnType = declaredReturnType(*specialization);
    if (!returnType && specialization->decl.def == spec.decl.def)
      returnType = returnTypeSoFar(*specialization, types);
    if (!returnType)
      return Typing::error(DiagID::err_recursive_call, {callee.name});
  } else if (specialization->failed || !returnType) {
    // Its own diagnostics say why; record the call so that they are reported.
    failedCallees.push_back({specialization, call->range});
    return Typing::cascade();
  }
  Resolution resolution = Resolution::make(Resolution::Kind::DeviceCall, returnType);

  resolution.callee = specialization;
  // operandTypes follow the call's operands: the callee first, then the
  // arguments in source order (positional, then keywords).
  size_t fixedCount = callee.def && callee.variadic ? callee.def->params.size() - 1 : target.size();
  for (size_t i = 0; i < positional; ++i)
    conversions[1 + i] =
        i < fixedCount ? types.unliteral(target[i])
                       : llvm::cast<TupleType>(target[fixedCount])->elementTypes()[i - fixedCount];
  if (callee.def)
    for (size_t k = 0; k < keywordCount; ++k) {
      auto param = llvm::find_if(callee.def->params, [&](const ast::Parameter &p) {
        return p.name == call->keywordNames[k];
      });
      conversions[1 + positional + k] =
          types.unliteral(target[static_cast<size_t>(param - callee.def->params.begin())]);
    }
  resolution.operandTypes = std::move(conversions);
  return resolution;
}

Typing FunctionTyper::typeTupleSlice(const Instr *instr, const TupleType &tuple) {
  // t[a:b:c] with bounds known at compile time, as Numba's static_getitem:
  // a tuple of the elements Python's slice picks.
  const Instr *slice = instr->operands[1];
  std::optional<int64_t> bounds[3];
  for (size_t i = 0; i < 3; ++i) {
    const Type *part = typeOf(slice->operands[i]);
    if (const auto *literal = llvm::dyn_cast<IntegerLiteralType>(part);
        literal && !literal->isUnsigned())
      bounds[i] = literal->bits();
    else if (part != types.none())
      return Typing::error(DiagID::err_bad_array_index, {tuple.str(), "a slice of " + part->str()});
  }
  auto size = static_cast<int64_t>(tuple.size());
  int64_t step = bounds[2].value_or(1);
  if (step == 0)
    return Typing::error(DiagID::err_tuple_slice_step_zero);
  auto clamp = [&](std::optional<int64_t> bound, int64_t whenAbsent) {
    if (!bound)
      return whenAbsent;
    int64_t value = *bound < 0 ? *bound + size : *bound;
    return step > 0 ? std::clamp<int64_t>(value, 0, size)
                    : std::clamp<int64_t>(value, -1, size - 1);
  };
  int64_t start = clamp(bounds[0], step > 0 ? 0 : size - 1);
  int64_t stop = clamp(bounds[1], step > 0 ? size : -1);
  std::vector<const Type *> elements;
  std::vector<ConstantValue> picked;
  for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step) {
    elements.push_back(tuple.elementTypes()[static_cast<size_t>(i)]);
    picked.push_back(ConstantValue::integer(i));
  }
  const TupleType *result = types.tuple(elements);
  if (tuple.isCompileTimeOnly() && !result->isCompileTimeOnly())
    return Typing::error(DiagID::err_compile_time_value, {tuple.str()});
  Resolution resolution = Resolution::make(Resolution::Kind::TupleSlice, result);
  resolution.constant = ConstantValue::tuple(std::move(picked));
  return resolution;
}

std::vector<const Type *> FunctionTyper::argumentTypes(const Instr *call,
                                                       std::vector<size_t> *operandOf) const {
  std::vector<const Type *> args;
  for (size_t i = 1; i < call->operands.size(); ++i) {
    const Type *type = typeOf(call->operands[i]);
    const auto *tuple = llvm::dyn_cast_or_null<TupleType>(type);
    size_t count = 1;
    if (tuple && llvm::is_contained(call->starred, i)) {
      args.insert(args.end(), tuple->elementTypes().begin(), tuple->elementTypes().end());
      count = tuple->size();
    } else {
      args.push_back(type);
    }
    if (operandOf)
      operandOf->insert(operandOf->end(), count, i);
  }
  return args;
}

Typing FunctionTyper::typeNamedTupleCall(const Instr *call, const NamedTupleType &cls,
                                         llvm::ArrayRef<const Type *> args) {
  std::string spelling = cls.className().str();
  size_t positional = args.size() - call->keywordNames.size();
  if (!call->starred.empty() || positional > cls.size())
    return Typing::error(DiagID::err_wrong_argument_count,
                         {spelling, countOf(cls.size(), "argument"), std::to_string(args.size())});
  std::vector<const Type *> elements(cls.size(), nullptr);
  for (size_t i = 0; i < args.size(); ++i) {
    std::optional<size_t> field = i;
    if (i >= positional) {
      field = cls.fieldIndex(call->keywordNames[i - positional]);
      if (!field || elements[*field])
        return Typing::error(DiagID::err_unexpected_keyword_argument,
                             {spelling, call->keywordNames[i - positional]});
    }
    if (args[i]->isCompileTimeOnly())
      return Typing::error(DiagID::err_compile_time_value, {args[i]->str()},
                           call->operandRanges[i + 1]);
    elements[*field] = types.unliteral(args[i]);
  }
  for (size_t i = 0; i < elements.size(); ++i)
    if (!elements[i])
      return Typing::error(DiagID::err_missing_argument, {spelling, cls.fields()[i]});
  Resolution resolution = Resolution::make(
      Resolution::Kind::Cast, types.namedTuple(elements, cls.className(), cls.fields()));
  resolution.detail = "namedtuple";
  return resolution;
}

Typing FunctionTyper::typeOverloadCall(const Instr *call, const OverloadSet &overloads,
                                       llvm::ArrayRef<const Type *> args) {
  // Numba's typing functions see plain types first (prefer_literal=False);
  // keyword arguments as keywords ("z=int64").
  std::vector<std::string> arguments;
  size_t positional = args.size() - call->keywordNames.size();
  for (size_t i = 0; i < args.size(); ++i)
    arguments.push_back((i < positional ? "" : call->keywordNames[i - positional] + "=") +
                        types.unliteral(args[i])->str());
  std::string key = "(" + llvm::join(arguments, ", ") + ")";
  auto found = overloads.implementations.find(key);
  if (found != overloads.implementations.end())
    return typeDeviceCall(call, *found->second, args, nullptr);
  if (overloads.source)
    overloads.source->requestOverload({overloads.file, overloads.key, key, arguments});
  return Typing::error(DiagID::err_overload_unresolved, {overloads.name, key});
}

Typing FunctionTyper::typeCall(const Instr *call) {
  const Type *callee = typeOf(call->operands[0]);
  for (unsigned starred : call->starred)
    if (!llvm::isa<TupleType>(typeOf(call->operands[starred])))
      return Typing::error(DiagID::err_star_argument_not_tuple,
                           {typeOf(call->operands[starred])->str()}, call->operandRanges[starred]);
  std::vector<const Type *> args = argumentTypes(call);
  size_t positional = args.size() - call->keywordNames.size();
  if (!call->starred.empty() && !acceptsStarredArguments(callee))
    return Typing::error(DiagID::err_star_argument_callee, {callee->str()});

  // Builtins and dtypes take IntEnum members as the integers they are.
  std::vector<const Type *> integers = args;
  if (call->starred.empty())
    llvm::transform(args, integers.begin(), typing::integerOfIntEnum);
  if (const Symbol *symbol = typing::builtinOf(callee)) {
    Typing typed = typing::callBuiltin(types, *symbol, integers, call->keywordNames);
    if (typed && !typed->operandTypes.empty()) {
      // Rules list conversions for the arguments; the callee has none.
      typed->operandTypes.insert(typed->operandTypes.begin(), nullptr);
    }
    if (typed && integers != args) {
      typed->operandTypes.resize(call->operands.size(), nullptr);
      for (size_t i = 0; i < args.size(); ++i)
        if (integers[i] != args[i] && !typed->operandTypes[i + 1])
          typed->operandTypes[i + 1] = integers[i];
    }
    return typed;
  }
  if (const FunctionDecl *decl = typing::functionOf(callee))
    return typeDeviceCall(call, *decl, args, typing::capturesOf(callee));
  if (const auto *entity = llvm::dyn_cast<EntityType>(callee);
      entity && entity->entityKindOf() == EntityType::EntityKind::Overload)
    return typeOverloadCall(call, *static_cast<const OverloadSet *>(entity->entityPointer()), args);
  if (const auto *entity = llvm::dyn_cast<EntityType>(callee);
      entity && entity->entityKindOf() == EntityType::EntityKind::OverloadedMethod) {
    // The implementation takes the receiver first (see callArguments).
    std::vector<const Type *> withReceiver{entity->receiverType()};
    withReceiver.insert(withReceiver.end(), args.begin(), args.end());
    return typeOverloadCall(call, *static_cast<const OverloadSet *>(entity->entityPointer()),
                            withReceiver);
  }
  if (const auto *numberClass = llvm::dyn_cast<NumberClassType>(callee)) {
    if (const auto *cls = llvm::dyn_cast<NamedTupleType>(numberClass->instanceType()))
      return typeNamedTupleCall(call, *cls, args);
    if (positional != args.size())
      return Typing::error(DiagID::err_unexpected_keyword_argument,
                           {numberClass->str(), call->keywordNames.front()});
    return typing::callNumberClass(types, numberClass->instanceType(), integers);
  }
  if (const auto *entity = llvm::dyn_cast<EntityType>(callee);
      entity && entity->entityKindOf() == EntityType::EntityKind::Method) {
    Typing typed = typing::callMethod(types, *entity, args);
    if (typed && typed->kind == Resolution::Kind::ArrayMethod && typed->detail == "copy" &&
        !typing::compileTimeShape(call->operands[0]->operands[0],
                                  [&](const Instr *operand) { return typeOf(operand); }))
      return Typing::error(DiagID::err_array_copy_shape_unknown, {entity->receiverType()->str()});
    return typed;
  }
  return Typing::error(DiagID::err_not_callable, {callee->str()});
}

Typing FunctionTyper::typeInstr(const Instr *instr) {
  Typing typed = typeOperation(instr);
  if (typed)
    return typed;
  Typing unwrapped = typeWithOptionalsUnwrapped(instr);
  return unwrapped ? std::move(unwrapped) : std::move(typed);
}

Typing FunctionTyper::typeWithOptionalsUnwrapped(const Instr *instr) {
  auto isOptional = [&](const Instr *operand) {
    return llvm::isa_and_nonnull<OptionalType>(spec.valueTypes[operand->id]);
  };
  if (llvm::none_of(instr->operands, isOptional))
    return Typing::cascade();
  bool unwraps = false;
  switch (instr->op) {
  case Op::Binary:
  case Op::Unary:
  case Op::Truth:
  case Op::GetItem:
  case Op::SetItem:
    unwraps = true;
    break;
  case Op::Compare:
    unwraps = instr->compareOp != ast::CompareOp::Is && instr->compareOp != ast::CompareOp::IsNot;
    break;
  case Op::Call:
    // Builtins, not device functions: those are specialized for optional
    // arguments as for any other.
    if (const Type *callee = typeOf(instr->operands[0]))
      unwraps = typing::builtinOf(callee) != nullptr;
    break;
  default:
    break;
  }
  if (!unwraps)
    return Typing::cascade();
  unwrappingOptionals = true;
  Typing typed = typeOperation(instr);
  unwrappingOptionals = false;
  if (!typed)
    return typed;
  std::vector<const Type *> &operandTypes = typed->operandTypes;
  operandTypes.resize(std::max(operandTypes.size(), instr->operands.size()), nullptr);
  for (size_t i = 0; i < instr->operands.size(); ++i)
    if (isOptional(instr->operands[i]) && !operandTypes[i])
      operandTypes[i] =
          llvm::cast<OptionalType>(spec.valueTypes[instr->operands[i]->id])->valueType();
  return typed;
}

Typing FunctionTyper::typeOperation(const Instr *instr) {
  switch (instr->op) {
  case Op::Argument: {
    // An omitted argument has its default's type (Numba's ArgConstraint).
    const Type *type = spec.argTypes[instr->index];
    if (isOmitted(type))
      type = llvm::cast<EntityType>(type)->receiverType();
    return Resolution::value(type);
  }
  case Op::Constant: {
    // A constant written in the kernel, or a module global frozen in.
    const Type *type = instr->constant->type(types, instr->fromLiteral ? ConstantRole::Literal
                                                                       : ConstantRole::Global);
    if (!type)
      return Typing::error(DiagID::err_integer_too_large_for_type, {instr->constant->repr()});
    if (llvm::isa<StringLiteralType>(type))
      return Resolution::make(Resolution::Kind::CompileTime, type);
    return Resolution::value(type);
  }
  case Op::Global: {
    const ModuleValue &value = *instr->global;
    switch (value.kind()) {
    case ModuleValue::Kind::Symbol: {
      const Symbol *symbol = value.symbolValue();
      if (symbol->kind == Symbol::Kind::DType || symbol->kind == Symbol::Kind::Constant ||
          symbol->is(BuiltinId::CudaLaneid) || symbol->is(BuiltinId::CudaWarpsize))
        return typing::getAttribute(
            types,
            types.entity(EntityType::EntityKind::Builtin,
                         BuiltinSymbols::get().lookup(symbol->qualifiedName.rsplit('.').first), ""),
            symbol->name());
      return Resolution::make(
          Resolution::Kind::CompileTime,
          types.entity(EntityType::EntityKind::Builtin, symbol, symbol->displayName()));
    }
    case ModuleValue::Kind::Function: {
      const FunctionDecl *decl = value.functionValue();
      return Resolution::make(Resolution::Kind::CompileTime,
                              types.entity(EntityType::EntityKind::Function, decl,
                                           decl->kindName().str() + " '" + decl->name + "'"));
    }
    case ModuleValue::Kind::Overload: {
      const OverloadSet &overloads = value.overloadValue();
      return Resolution::make(Resolution::Kind::CompileTime,
                              types.entity(EntityType::EntityKind::Overload, &overloads,
                                           "overloaded function '" + overloads.name + "'"));
    }
    case ModuleValue::Kind::Type:
      // A type made at module level or captured (a record type for
      // cuda.shared.array(n, dtype=dt)), used as a dtype.
      return Resolution::make(Resolution::Kind::CompileTime, types.numberClass(value.typeValue()));
    case ModuleValue::Kind::Array: {
      const ConstantArray &array = value.arrayValue();
      return Resolution::value(types.array(array.elementType, unsigned(array.shape.size()),
                                           array.layout, /*readonly=*/!array.address));
    }
    default:
      return Typing::error(DiagID::err_compile_time_value, {value.describe()});
    }
  }
  case Op::Undefined:
    return Typing::error(DiagID::err_undefined_variable, {instr->name});
  case Op::Phi:
    return typePhi(instr);
  default:
    break;
  }

  // Everything else needs typed operands; an Undefined operand is a read of
  // a variable before its assignment.
  for (const Instr *operand : instr->operands) {
    if (operand->op == Op::Undefined && !typeUnassignedRead(operand))
      return Typing::error(DiagID::err_undefined_variable, {operand->name}, operand->range);
    if (!typeOf(operand))
      return Typing::cascade();
  }
  auto operandType = [&](size_t i) { return typeOf(instr->operands[i]); };

  switch (instr->op) {
  case Op::Closure: {
    std::vector<const Type *> captured;
    for (const Instr *operand : instr->operands)
      captured.push_back(typeOf(operand));
    return Resolution::make(Resolution::Kind::CompileTime,
                            types.closure(instr->function, types.tuple(captured), instr->name));
  }
  case Op::Binary:
    return typing::binaryOperator(types, instr->binaryOp, operandType(0), operandType(1));
  case Op::Unary:
    return typing::unaryOperator(types, instr->unaryOp, operandType(0));
  case Op::Compare: {
    Typing typed = typing::compareOperator(types, instr->compareOp, operandType(0), operandType(1));
    // Numba's dead-branch pruning evaluates a comparison of constants
    // (literals, module constants, locals whose reaching assignment is one)
    // before typing: a branch on one is decided (decidedSuccessor).
    // So is one of values typing decided (`len(args) == 2` in a function
    // of `*args`).
    auto known = [&](const Instr *operand) -> const ConstantValue * {
      if (operand->op == Op::Constant)
        return &*operand->constant;
      const Resolution &resolution = spec.resolutions[operand->id];
      bool decided = resolution.kind == Resolution::Kind::Constant && resolution.constant &&
                     resolution.constant->isNumber();
      return decided ? &*resolution.constant : nullptr;
    };
    const ConstantValue *lhs = known(instr->operands[0]);
    const ConstantValue *rhs = known(instr->operands[1]);
    if (typed && typed->kind == Resolution::Kind::Operator && lhs && rhs)
      if (FoldResult folded = foldCompare(instr->compareOp, *lhs, *rhs); folded.value) {
        Resolution decided = Resolution::make(Resolution::Kind::Constant, types.boolean());
        decided.constant = std::move(*folded.value);
        return decided;
      }
    return typed;
  }
  case Op::Truth:
    return typing::truth(types, operandType(0));
  case Op::GetAttr: {
    // Functions of Kiln's prelude modules, as in cuda.random.xoroshiro128p_next.
    if (const Symbol *module = typing::builtinOf(operandType(0));
        module && module->kind == Symbol::Kind::Module &&
        !BuiltinSymbols::get().member(*module, instr->name))
      if (const FunctionDecl *decl =
              spec.decl.scope->importedFunction(module->qualifiedName, instr->name))
        return Resolution::make(Resolution::Kind::CompileTime,
                                types.entity(EntityType::EntityKind::Function, decl,
                                             decl->kindName().str() + " '" + decl->name + "'"));
    Typing typed = typing::getAttribute(types, operandType(0), instr->name);
    if (typed && typed->operandTypes.empty())
      typed->operandTypes = {nullptr};
    // Methods numba.extending.overload_method gives the receiver's type,
    // where Numba's own attributes have none of that name.
    if (!typed && !typed.error().silent && spec.decl.scope) {
      const Type *receiver = types.unliteral(operandType(0));
      if (const OverloadSet *overloads =
              spec.decl.scope->overloadedMethod(typing::numbaTypeNames(receiver), instr->name))
        return Resolution::make(Resolution::Kind::CompileTime,
                                types.overloadedMethod(overloads, receiver, instr->name));
    }
    return typed;
  }
  case Op::SetAttr:
    return typing::setAttribute(types, operandType(0), instr->name, operandType(1));
  case Op::GetItem:
    if (const auto *tuple = llvm::dyn_cast<TupleType>(operandType(0));
        tuple && instr->operands[1]->op == Op::BuildSlice)
      return typeTupleSlice(instr, *tuple);
    return typing::getItem(types, operandType(0), typing::integerOfIntEnum(operandType(1)));
  case Op::SetItem:
    return typing::setItem(types, operandType(0), typing::integerOfIntEnum(operandType(1)),
                           operandType(2));
  case Op::Call:
    return typeCall(instr);
  case Op::BuildTuple: {
    // A tuple of classes (`isinstance(x, (int, float32))`) exists only
    // while typing.
    std::vector<const Type *> classes;
    for (size_t i = 0; i < instr->operands.size(); ++i)
      if (typing::isClass(types, operandType(i)))
        classes.push_back(operandType(i));
    if (!classes.empty() && classes.size() == instr->operands.size())
      return Resolution::make(Resolution::Kind::CompileTime, types.tuple(classes));
    std::vector<const Type *> elements;
    for (size_t i = 0; i < instr->operands.size(); ++i) {
      const Type *element = operandType(i);
      if (element->isCompileTimeOnly() && !llvm::isa<SliceType>(element))
        return Typing::error(DiagID::err_compile_time_value, {element->str()},
                             instr->operands[i]->range);
      elements.push_back(element);
    }
    return Resolution::value(types.tuple(elements));
  }
  case Op::BuildSlice: {
    for (size_t i = 0; i < 3; ++i) {
      const Type *part = operandType(i);
      if (part != types.none() && !llvm::isa<IntegerType>(part) &&
          !llvm::isa<IntegerLiteralType>(part))
        return Typing::error(DiagID::err_bad_array_index, {"a slice", part->str()},
                             instr->operands[i]->range);
    }
    bool hasStep = operandType(2) != types.none();
    Resolution resolution = Resolution::make(Resolution::Kind::Value, types.slice(hasStep));
    resolution.operandTypes = {types.int64(), types.int64(), types.int64()};
    return resolution;
  }
  case Op::TupleGet: {
    const auto *tuple = llvm::dyn_cast<TupleType>(operandType(0));
    if (!tuple)
      return Typing::error(DiagID::err_unpack_non_tuple, {operandType(0)->str()});
    if (std::to_string(tuple->size()) != instr->name)
      return Typing::error(DiagID::err_unpack_count,
                           {tuple->str(), countOf(std::stoul(instr->name), "value")});
    Resolution resolution =
        Resolution::make(Resolution::Kind::TupleItem, tuple->elementTypes()[instr->index]);
    resolution.index = instr->index;
    return resolution;
  }
  case Op::IterCount:
    return typing::iterCount(types, operandType(0));
  case Op::IterItem:
    return typing::iterItem(types, operandType(0), operandType(1));
  case Op::LoopStart:
  case Op::LoopNext: {
    Resolution resolution = Resolution::make(Resolution::Kind::LoopOperation, operandType(0));
    return resolution;
  }
  case Op::LoopTest:
    return Resolution::make(Resolution::Kind::LoopOperation, types.boolean());
  case Op::Assert: {
    Typing test = typing::truth(types, operandType(0));
    if (!test)
      return test;
    if (instr->operands.size() > 1 && !isStrLiteral(operandType(1)) &&
        operandType(1) != types.none())
      return Typing::error(DiagID::err_expected_string, {operandType(1)->str()},
                           instr->operands[1]->range);
    return Resolution::make(Resolution::Kind::Assertion, types.none());
  }
  default:
    return Typing::cascade();
  }
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

} // namespace

const ssa::Block *Specialization::decidedSuccessor(const ssa::Block &block) const {
  const ssa::Terminator &terminator = block.terminator;
  if (terminator.kind != ssa::Terminator::Kind::Branch)
    return nullptr;
  const ssa::Instr *condition = terminator.value;
  // bool(x) of a decided x is decided too.
  while (condition) {
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
