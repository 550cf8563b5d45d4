//===- frontend/emit/emit_typed_ir.cpp - Typed IR of a module -------------===//
//
// The module: one IR function per specialization, emitted on first
// request, then the kernels that run ufuncs and reductions on the device.
//
//===----------------------------------------------------------------------===//

#include "frontend/emit/emit_typed_ir.h"

#include "frontend/emit/function_emitter.h"
#include "frontend/emit/synthesized_kernels.h"
#include "frontend/typing/semantic_hash.h"

namespace kiln {

namespace emit {

using ssa::Op;

//===----------------------------------------------------------------------===//
// ModuleEmitter
//===----------------------------------------------------------------------===//

std::string ModuleEmitter::symbolFor(const Specialization *spec) {
  unsigned number = specializationCounts[&spec->decl]++;
  std::string owner = spec->decl.scope == checked.scope.get()
                          ? moduleName
                          : checked.sources.recordedPath(spec->decl.scope->file());
  // Prelude paths look like "<kiln>/numba/cuda/random.py".
  if (llvm::StringRef(owner).starts_with("<kiln>/")) {
    owner = llvm::StringRef(owner).drop_front(7).drop_back(3).str();
    std::replace(owner.begin(), owner.end(), '/', '.');
  }
  // A kernel called from device code is a device function beside it.
  std::string suffix = spec->decl.kernelCalled ? "$device$" : "$";
  return owner + "." + spec->decl.name + suffix + std::to_string(number);
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
    function->options.link = spec->decl.options.link;
    function->cooperative = function->synchronizes = spec->decl.externalCooperative;
    function->cAbi = spec->decl.externalCAbi;
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
  function->options = spec->decl.options;
  function->returnType = checked.types.unliteral(spec->returnType);
  if (spec->decl.kind != FunctionDecl::Kind::Device)
    function->semanticHash = toHex(checked.hashOf(*spec));
  if (spec->decl.def) {
    function->path = checked.sources.recordedPath(spec->decl.def->nameRange.begin.file);
    function->location = locate(spec->decl.def->nameRange);
  }
  // Arguments exist before the body, so that callers emitted first (or
  // recursive calls) can convert their operands to the parameter types.
  for (const ssa::Instr *argument : spec->ssa->arguments)
    if (const Type *type = checked.types.unliteral(spec->argTypes[argument->index]);
        passesAtRunTime(type))
      function->addArgument(type, argument->name);
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
  // Whether each function synchronizes, raises or waits for the grid:
  // directly, or through a callee; and the files it links: its own, and
  // those of the declared device functions it calls, directly or not.
  bool changed = true;
  while (changed) {
    changed = false;
    for (const auto &function : module->functions)
      for (const auto &block : function->blocks)
        for (const ir::Instruction *instruction : block->instructions) {
          bool synchronizes = false;
          bool raises = false;
          bool cooperative = false;
          if (instruction->opcode == ir::Opcode::Call) {
            synchronizes = instruction->callee->synchronizes;
            raises = instruction->callee->raises;
            cooperative = instruction->callee->cooperative;
          }
          if ((synchronizes && !function->synchronizes) || (raises && !function->raises) ||
              (cooperative && !function->cooperative)) {
            function->synchronizes |= synchronizes;
            function->raises |= raises;
            function->cooperative |= cooperative;
            changed = true;
          }
          if (instruction->opcode == ir::Opcode::Call)
            for (const std::string &file : instruction->callee->options.link)
              if (!llvm::is_contained(function->options.link, file)) {
                function->options.link.push_back(file);
                changed = true;
              }
        }
  }
  return std::move(module);
}

FunctionEmitter::FunctionEmitter(ModuleEmitter &module, const Specialization &spec,
                                 ir::Function &function)
    : module(module), spec(spec), function(function), types(module.checked.types) {}

} // namespace emit

std::unique_ptr<ir::Module> emitTypedIR(CheckedModule &checked, llvm::StringRef moduleName) {
  std::unique_ptr<ir::Module> module = emit::ModuleEmitter(checked, moduleName).run();
  if (std::optional<std::string> problem = ir::verify(*module)) {
    checked.diags.report(DiagID::err_internal_invalid_ir, SourceRange(), {*problem});
    return nullptr;
  }
  return module;
}

} // namespace kiln
