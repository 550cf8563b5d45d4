//===- backend/codegen/lower_module.cpp - Functions, parameters, shared memory ----===//

#include "backend/codegen/lower_module.h"

#include "backend/codegen/function_lowering.h"
#include "ir/reachable_functions.h"

#include <llvm/ADT/StringExtras.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/MathExtras.h>
#include <llvm/Support/raw_ostream.h>

#include <set>

namespace kiln::backend {

TargetHooks::~TargetHooks() = default;

llvm::Value *TargetHooks::saturatingFloatToInteger(llvm::IRBuilder<> &builder, llvm::Value *value,
                                                   llvm::IntegerType *to, bool isSigned) {
  return builder.CreateIntrinsic(isSigned ? llvm::Intrinsic::fptosi_sat
                                          : llvm::Intrinsic::fptoui_sat,
                                 {to, value->getType()}, {value});
}

//===----------------------------------------------------------------------===//
// Names
//===----------------------------------------------------------------------===//

static void appendEscaped(std::string &out, llvm::StringRef part) {
  std::string escaped;
  for (unsigned char c : part) {
    if (llvm::isAlnum(c) || c == '_') {
      escaped += static_cast<char>(c);
    } else {
      escaped += '$';
      escaped += llvm::hexdigit(c >> 4, /*LowerCase=*/true);
      escaped += llvm::hexdigit(c & 15, /*LowerCase=*/true);
    }
  }
  out += std::to_string(escaped.size());
  out += escaped;
}

std::string mangledName(llvm::StringRef irSymbol) {
  // "pkg.kernels.add$1": dotted owner, function name, specialization number.
  auto [qualified, number] = irSymbol.rsplit('$');
  std::string out = "_kiln_";
  llvm::SmallVector<llvm::StringRef, 4> parts;
  qualified.split(parts, '.');
  for (llvm::StringRef part : parts)
    appendEscaped(out, part);
  if (!number.empty())
    out += "_" + number.str();
  return out;
}

//===----------------------------------------------------------------------===//
// ModuleLowering
//===----------------------------------------------------------------------===//

ModuleLowering::ModuleLowering(TargetHooks &hooks, llvm::LLVMContext &context,
                               const ir::Function &kernel)
    : hooks(hooks), types(context), module(std::make_unique<llvm::Module>(kernel.symbol, context)),
      operations(kernel), kernelDebug(kernel.options.debug) {
  hooks.configureModule(*module, kernel);
}

/// LLVM types of a kernel's flat parameters.
static llvm::Type *machineType(LLVMTypes &types, const KernelParameter &parameter) {
  llvm::StringRef name = parameter.machineType;
  if (name == "ptr")
    return types.pointer();
  if (name == "f16")
    return llvm::Type::getHalfTy(types.context);
  if (name == "f32")
    return llvm::Type::getFloatTy(types.context);
  if (name == "f64")
    return llvm::Type::getDoubleTy(types.context);
  unsigned bits = 0;
  name.drop_front().getAsInteger(10, bits);
  return llvm::IntegerType::get(types.context, bits);
}

llvm::Function *ModuleLowering::declare(const ir::Function &function) {
  auto found = functions.find(&function);
  if (found != functions.end())
    return found->second;

  std::vector<llvm::Type *> parameters;
  if (hooks.passesThreadContext())
    parameters.push_back(types.pointer());
  llvm::Type *result = llvm::Type::getVoidTy(types.context);
  if (function.kind == ir::Function::Kind::Kernel) {
    std::vector<const Type *> argumentTypes;
    for (const ir::Argument *argument : function.arguments)
      argumentTypes.push_back(argument->type());
    for (const KernelParameter &parameter : kernelParameters(argumentTypes))
      parameters.push_back(machineType(types, parameter));
  } else {
    for (const ir::Argument *argument : function.arguments)
      if (llvm::Type *type = types.value(argument->type()))
        parameters.push_back(type);
    if (llvm::Type *type = types.value(function.returnType))
      result = type;
  }
  auto *type = llvm::FunctionType::get(result, parameters, false);
  bool isKernel = function.kind == ir::Function::Kind::Kernel;
  llvm::Function *lowered = llvm::Function::Create(
      type, isKernel ? llvm::GlobalValue::ExternalLinkage : llvm::GlobalValue::InternalLinkage,
      mangledName(function.symbol), *module);
  lowered->addFnAttr(llvm::Attribute::NoUnwind);
  // As clang does for CUDA: a function may wait for other threads (a
  // barrier, a warp collective), so calls to it must not be moved across
  // control flow; LLVM drops the attribute where it finds no such wait.
  lowered->addFnAttr(llvm::Attribute::Convergent);
  if (hooks.passesThreadContext())
    lowered->addParamAttr(0, llvm::Attribute::NoAlias);
  if (function.options.fastmath)
    lowered->addFnAttr("unsafe-fp-math", "true");
  if (!function.options.optimize)
    lowered->addFnAttr(llvm::Attribute::NoInline);
  else if (function.options.forceInline || function.options.inlineAlways)
    lowered->addFnAttr(llvm::Attribute::AlwaysInline);
  functions[&function] = lowered;
  pending.push_back(&function);
  return lowered;
}

void ModuleLowering::lowerPending() {
  while (!pending.empty()) {
    const ir::Function *function = pending.back();
    pending.pop_back();
    FunctionLowering(*this, *function, *functions[function]).run();
  }
}

const SharedSlot &ModuleLowering::sharedSlot(const ir::Instruction &instruction,
                                             llvm::StringRef owner, uint64_t bytes,
                                             uint64_t alignment) {
  auto found = sharedSlots.find(&instruction);
  if (found != sharedSlots.end())
    return found->second;
  // One module-wide layout: a shared array in a device function is one
  // array per block however many times it is called, as on a GPU.
  uint64_t offset = llvm::alignTo(sharedEnd, alignment);
  sharedEnd = offset + bytes;
  SharedSlot slot{owner.str() + "_shared" + std::to_string(sharedSlots.size()), offset, bytes,
                  alignment};
  return sharedSlots.emplace(&instruction, std::move(slot)).first->second;
}

llvm::GlobalVariable *ModuleLowering::constantArray(const ir::Instruction &instruction,
                                                    uint64_t alignment) {
  llvm::GlobalVariable *&global = constantArrays[instruction.data.get()];
  if (!global) {
    llvm::Constant *elements = llvm::ConstantDataArray::getRaw(
        *instruction.data, instruction.data->size(), llvm::Type::getInt8Ty(module->getContext()));
    global = new llvm::GlobalVariable(
        *module, elements->getType(), /*isConstant=*/true, llvm::GlobalValue::PrivateLinkage,
        elements, "_kiln_const" + std::to_string(constantArrays.size()), nullptr,
        llvm::GlobalValue::NotThreadLocal, hooks.constantDataAddressSpace());
    global->setUnnamedAddr(llvm::GlobalValue::UnnamedAddr::Global);
    global->setAlignment(llvm::Align(alignment));
  }
  return global;
}

//===----------------------------------------------------------------------===//
// Line tables
//===----------------------------------------------------------------------===//

llvm::DISubprogram *ModuleLowering::subprogram(const ir::Function &function,
                                               llvm::Function &lowered) {
  if (!function.options.lineinfo && !function.options.debug)
    return nullptr;
  if (function.path.empty())
    return nullptr;
  if (!debugInfo) {
    debugInfo = std::make_unique<llvm::DIBuilder>(*module);
    llvm::DIFile *file = debugInfo->createFile(function.path, "");
    compileUnit = debugInfo->createCompileUnit(
        llvm::dwarf::DW_LANG_Python, file, "Kiln " KILN_VERSION, function.options.optimize, "", 0,
        "",
        // lineinfo wants only .loc directives (what profilers read), not
        // DWARF sections. The kernel decides, as its options say how the
        // module is compiled: ptxas rejects full debug information in
        // optimized code, which a debug=True device function would bring
        // into a kernel without it.
        kernelDebug ? llvm::DICompileUnit::FullDebug : llvm::DICompileUnit::DebugDirectivesOnly);
    module->addModuleFlag(llvm::Module::Warning, "Debug Info Version",
                          llvm::DEBUG_METADATA_VERSION);
    module->addModuleFlag(llvm::Module::Warning, "Dwarf Version", 4);
  }
  llvm::DIFile *&file = debugFiles[function.path];
  if (!file)
    file = debugInfo->createFile(function.path, "");
  unsigned line = function.location.line;
  auto *type = debugInfo->createSubroutineType(debugInfo->getOrCreateTypeArray({}));
  llvm::DISubprogram *program =
      debugInfo->createFunction(file, function.sourceName, lowered.getName(), file, line, type,
                                line, llvm::DINode::FlagZero, llvm::DISubprogram::SPFlagDefinition);
  lowered.setSubprogram(program);
  return program;
}

llvm::DebugLoc ModuleLowering::location(ir::Location at, llvm::DISubprogram *scope) const {
  if (!scope)
    return llvm::DebugLoc();
  // Code without a source position (the loops Kiln writes for ufuncs) gets
  // line 0, DWARF's "no source line": in a function with debug information
  // every call that may be inlined needs a location.
  if (!at.isValid())
    return llvm::DILocation::get(module->getContext(), 0, 0, scope);
  return llvm::DILocation::get(module->getContext(), at.line, at.column, scope);
}

std::string HookSite::describeLocation() const {
  if (!location.isValid() || function.path.empty())
    return "";
  return function.path + ":" + std::to_string(location.line);
}

void ModuleLowering::finishDebugInfo() {
  if (debugInfo)
    debugInfo->finalize();
}

//===----------------------------------------------------------------------===//
// Entry point
//===----------------------------------------------------------------------===//

/// Bytes of local arrays one thread of the kernel needs (for fiber stacks),
/// over the kernel and every function it reaches.
static uint64_t localArrayBytes(const ir::Function &kernel) {
  uint64_t bytes = 0;
  for (const ir::Instruction *instruction : ir::localArrays(kernel)) {
    const auto *array = llvm::cast<ArrayType>(instruction->type());
    uint64_t count = 1;
    for (uint64_t dim : instruction->shape)
      count *= dim;
    bytes += count * itemSize(array->elementType());
  }
  return bytes;
}

llvm::Expected<LoweredKernel> lowerKernel(const ir::Function &kernel, TargetHooks &hooks,
                                          llvm::LLVMContext &context) {
  ModuleLowering lowering(hooks, context, kernel);
  llvm::Function *entry = lowering.declare(kernel);
  lowering.lowerPending();
  lowering.finishDebugInfo();

  std::vector<const Type *> argumentTypes;
  for (const ir::Argument *argument : kernel.arguments)
    argumentTypes.push_back(argument->type());
  LoweredKernel lowered;
  lowered.entryName = entry->getName().str();
  lowered.parameters = kernelParameters(argumentTypes);
  lowered.staticSharedBytes = lowering.sharedBytes();
  lowered.localBytes = localArrayBytes(kernel);
  hooks.finishKernel(*entry, kernel, lowered.parameters);

  std::string problems;
  llvm::raw_string_ostream stream(problems);
  if (llvm::verifyModule(*lowering.module, &stream))
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "internal error: invalid LLVM IR for '" + kernel.symbol +
                                       "': " + problems);
  lowered.module = std::move(lowering.module);
  return lowered;
}

} // namespace kiln::backend
