//===- frontend/typing/infer_calls.cpp - Typing calls ---------------------===//
//
// How FunctionTyper types a call, by what is called: a builtin (by the
// rules of calls.cpp and cuda.cpp), a kernel or device function (bound to
// its parameters and specialized for the arguments), a function
// numba.extending.overload implements, a number class or named tuple
// class, or a method.
//
//===----------------------------------------------------------------------===//

#include "frontend/typing/compile_time_shape.h"
#include "frontend/typing/function_typer.h"
#include "frontend/typing/overloads.h"
#include "frontend/typing/typing_rules.h"

#include <llvm/ADT/StringExtras.h>

namespace kiln {

using ssa::Op;

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

} // namespace

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

} // namespace kiln
