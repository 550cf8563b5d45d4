//===- backend/extension_module.cpp - The object that makes a module ------===//
//
// Before (the inputs): module "pkg.kernels", the bundle bytes, and entries
// [{_kiln_3pkg7kernels3add_0, block}, {_kiln_3pkg7kernels5scan_0, no block}].
// After (the object, as LLVM IR):
//
//   @bundle = internal constant [N x i8] c"KILNBNDL...", align 16
//   declare hidden void @_kiln_3pkg7kernels3add_0_thread(ptr, ptr)
//   @hostEntries = internal constant [2 x {ptr, ptr}]
//       [{@..add_0_thread, @..add_0_block}, {@..scan_0_thread, null}]
//   @image = internal constant {i32, i32, i32, i32, ptr, ptr, i64, ptr}
//       {KILN, 1, cpu ABI, 2, @name, @bundle, N, @hostEntries}
//   define ptr @PyInit_kernels() { ... return loader(@image) }
//
//===----------------------------------------------------------------------===//

#include "backend/extension_module.h"

#include "backend/target_machines.h"
#include "runtime/module_format.h"

#include <llvm/ADT/SmallString.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>

namespace kiln::backend {

llvm::StringRef extensionBaseName(llvm::StringRef moduleName) {
  return moduleName.rsplit('.').second.empty() ? moduleName : moduleName.rsplit('.').second;
}

namespace {

/// An external function that the linked module must not export: a
/// reference with hidden visibility makes the linker hide the definition.
llvm::Constant *hiddenEntry(llvm::Module &module, llvm::FunctionType *type, llvm::StringRef name) {
  llvm::Function *function =
      llvm::Function::Create(type, llvm::GlobalValue::ExternalLinkage, name, module);
  function->setVisibility(llvm::GlobalValue::HiddenVisibility);
  function->setDSOLocal(true);
  return function;
}

llvm::GlobalVariable *internalConstant(llvm::Module &module, llvm::Constant *value,
                                       llvm::StringRef name, unsigned alignment) {
  auto *global = new llvm::GlobalVariable(module, value->getType(), /*isConstant=*/true,
                                          llvm::GlobalValue::InternalLinkage, value, name);
  global->setAlignment(llvm::Align(alignment));
  return global;
}

/// PyInit_<name>: imports kiln._runtime and hands the image to its loader.
void definePyInit(llvm::Module &module, llvm::StringRef baseName, llvm::GlobalVariable *image) {
  llvm::LLVMContext &context = module.getContext();
  llvm::Type *ptr = llvm::PointerType::getUnqual(context);
  auto declare = [&](llvm::StringRef name, llvm::Type *result, llvm::ArrayRef<llvm::Type *> args) {
    return module.getOrInsertFunction(name, llvm::FunctionType::get(result, args, false));
  };
  llvm::FunctionCallee importModule = declare("PyImport_ImportModule", ptr, {ptr});
  llvm::FunctionCallee getAttr = declare("PyObject_GetAttrString", ptr, {ptr, ptr});
  llvm::FunctionCallee capsulePointer = declare("PyCapsule_GetPointer", ptr, {ptr, ptr});
  llvm::FunctionCallee decRef = declare("Py_DecRef", llvm::Type::getVoidTy(context), {ptr});

  llvm::Function *init =
      llvm::Function::Create(llvm::FunctionType::get(ptr, false),
                             llvm::GlobalValue::ExternalLinkage, "PyInit_" + baseName, module);
  init->addFnAttr(llvm::Attribute::NoUnwind);
  auto *entry = llvm::BasicBlock::Create(context, "entry", init);
  auto *haveModule = llvm::BasicBlock::Create(context, "have_module", init);
  auto *haveCapsule = llvm::BasicBlock::Create(context, "have_capsule", init);
  auto *haveLoader = llvm::BasicBlock::Create(context, "have_loader", init);
  auto *noLoader = llvm::BasicBlock::Create(context, "no_loader", init);
  auto *fail = llvm::BasicBlock::Create(context, "fail", init);
  llvm::Constant *null = llvm::ConstantPointerNull::get(llvm::PointerType::getUnqual(context));

  llvm::IRBuilder<> builder(entry);
  llvm::Value *runtime =
      builder.CreateCall(importModule, {builder.CreateGlobalStringPtr("kiln._runtime")});
  builder.CreateCondBr(builder.CreateICmpEQ(runtime, null), fail, haveModule);

  builder.SetInsertPoint(haveModule);
  llvm::Value *capsule = builder.CreateCall(
      getAttr, {runtime, builder.CreateGlobalStringPtr(KILN_MODULE_LOADER_ATTRIBUTE)});
  builder.CreateCall(decRef, {runtime});
  builder.CreateCondBr(builder.CreateICmpEQ(capsule, null), fail, haveCapsule);

  builder.SetInsertPoint(haveCapsule);
  llvm::Value *loader = builder.CreateCall(
      capsulePointer, {capsule, builder.CreateGlobalStringPtr(KILN_MODULE_LOADER_CAPSULE)});
  builder.CreateCondBr(builder.CreateICmpEQ(loader, null), noLoader, haveLoader);

  builder.SetInsertPoint(haveLoader);
  llvm::Value *result =
      builder.CreateCall(llvm::FunctionType::get(ptr, {ptr}, false), loader, {image});
  builder.CreateCall(decRef, {capsule});
  builder.CreateRet(result);

  builder.SetInsertPoint(noLoader);
  builder.CreateCall(decRef, {capsule});
  builder.CreateBr(fail);

  builder.SetInsertPoint(fail);
  builder.CreateRet(null);
}

} // namespace

llvm::Expected<std::string> createExtensionObject(llvm::StringRef moduleName,
                                                  llvm::StringRef bundle,
                                                  llvm::ArrayRef<ExtensionEntry> entries) {
  llvm::Expected<std::unique_ptr<llvm::TargetMachine>> machine = createHostMachine(JitOptions{});
  if (!machine)
    return machine.takeError();
  llvm::LLVMContext context;
  llvm::Module module("kiln-module:" + moduleName.str(), context);
  module.setSourceFileName(moduleName.str() + ".kiln");
  module.setTargetTriple(hostTriple());
  module.setDataLayout((*machine)->createDataLayout());
  module.setPICLevel(llvm::PICLevel::BigPIC);

  llvm::Type *ptr = llvm::PointerType::getUnqual(context);
  llvm::Type *i32 = llvm::Type::getInt32Ty(context);
  llvm::Type *i64 = llvm::Type::getInt64Ty(context);

  llvm::GlobalVariable *bundleGlobal = internalConstant(
      module,
      llvm::ConstantDataArray::getRaw(bundle, bundle.size(), llvm::Type::getInt8Ty(context)),
      "bundle", 16);

  auto *entryType = llvm::FunctionType::get(llvm::Type::getVoidTy(context), {ptr, ptr}, false);
  auto *rowType = llvm::StructType::get(context, {ptr, ptr});
  std::vector<llvm::Constant *> rows;
  for (const ExtensionEntry &entry : entries) {
    llvm::Constant *thread = hiddenEntry(module, entryType, entry.entryName + "_thread");
    llvm::Constant *block =
        entry.hasBlockEntry ? hiddenEntry(module, entryType, entry.entryName + "_block")
                            : llvm::ConstantPointerNull::get(llvm::PointerType::getUnqual(context));
    rows.push_back(llvm::ConstantStruct::get(rowType, {thread, block}));
  }
  llvm::GlobalVariable *table = internalConstant(
      module, llvm::ConstantArray::get(llvm::ArrayType::get(rowType, rows.size()), rows),
      "hostEntries", 8);

  llvm::GlobalVariable *name = internalConstant(
      module, llvm::ConstantDataArray::getString(context, moduleName), "moduleName", 1);
  auto *imageType = llvm::StructType::get(context, {i32, i32, i32, i32, ptr, ptr, i64, ptr});
  llvm::Constant *imageValue = llvm::ConstantStruct::get(
      imageType, {llvm::ConstantInt::get(i32, KILN_MODULE_IMAGE_MAGIC),
                  llvm::ConstantInt::get(i32, KILN_MODULE_FORMAT_VERSION),
                  llvm::ConstantInt::get(i32, KILN_CPU_ABI_VERSION),
                  llvm::ConstantInt::get(i32, entries.size()), name, bundleGlobal,
                  llvm::ConstantInt::get(i64, bundle.size()), table});
  llvm::GlobalVariable *image = internalConstant(module, imageValue, "image", 8);

  definePyInit(module, extensionBaseName(moduleName), image);

  std::string problems;
  llvm::raw_string_ostream problemStream(problems);
  if (llvm::verifyModule(module, &problemStream))
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "the module object is malformed: " + problems);

  llvm::SmallString<0> bytes;
  llvm::raw_svector_ostream output(bytes);
  llvm::legacy::PassManager passes;
  if ((*machine)->addPassesToEmitFile(passes, output, nullptr, llvm::CodeGenFileType::ObjectFile))
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "LLVM cannot emit an object for " + hostTriple());
  passes.run(module);
  return std::string(bytes.str());
}

} // namespace kiln::backend
