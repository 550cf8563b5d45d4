//===- backend/host/extension_module.cpp - The objects that make a module ------===//
//
// Before (the inputs): module "pkg.kernels" and entries
// [{_kiln_3pkg7kernels3add_0, block}, {_kiln_3pkg7kernels5scan_0, no
// block}]. After, the extension object (as LLVM IR):
//
//   declare hidden void @_kiln_3pkg7kernels3add_0_thread(ptr, ptr)
//   @hostEntries = internal constant [2 x {ptr, ptr}]
//       [{@..add_0_thread, @..add_0_block}, {@..scan_0_thread, null}]
//   @kiln.bundle.size = external hidden global i8        (and .checksum)
//   @image = internal constant {i32, i32, i32, i32, ptr, ptr, i64, ptr, i64}
//       {KILN, 2, cpu ABI, 2, @name, null, ptrtoint @kiln.bundle.size,
//        @hostEntries, ptrtoint @kiln.bundle.checksum}
//   define ptr @PyInit_kernels() { ... return loader(@image) }
//
// and the link defines kiln.bundle.size = N and kiln.bundle.checksum = C,
// the bundle's size and manifest checksum (bundleSymbols), so that LLD
// writes the numbers into the image;
//
// and the bundle object, written here byte by byte (LLVM IR cannot ask for
// a section without SHF_ALLOC):
//
//   ELF header | bundle (at 64) | .shstrtab | section headers:
//   [0] null, [1] .kiln.bundle PROGBITS flags 0 align 16, [2] .shstrtab
//
//===----------------------------------------------------------------------===//

#include "backend/host/extension_module.h"

#include "backend/codegen/target_machines.h"
#include "module/format.h"

#include <llvm/ADT/SmallString.h>
#include <llvm/BinaryFormat/ELF.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/Alignment.h>
#include <llvm/Support/Endian.h>
#include <llvm/Support/raw_ostream.h>

#include <cstring>

namespace kiln::backend {

/// The symbols the image reads the bundle's size and checksum from.
static constexpr llvm::StringLiteral bundleSizeSymbol = "kiln.bundle.size";
static constexpr llvm::StringLiteral bundleChecksumSymbol = "kiln.bundle.checksum";

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

/// The value of the absolute symbol `name`, as a number for a constant.
static llvm::Constant *absoluteValue(llvm::Module &module, llvm::StringRef name) {
  llvm::LLVMContext &context = module.getContext();
  auto *symbol = new llvm::GlobalVariable(module, llvm::Type::getInt8Ty(context),
                                          /*isConstant=*/true, llvm::GlobalValue::ExternalLinkage,
                                          nullptr, name);
  symbol->setVisibility(llvm::GlobalValue::HiddenVisibility);
  symbol->setDSOLocal(true);
  return llvm::ConstantExpr::getPtrToInt(symbol, llvm::Type::getInt64Ty(context));
}

llvm::Expected<std::vector<AbsoluteSymbol>> bundleSymbols(llvm::StringRef moduleName,
                                                          llvm::StringRef bundle) {
  KilnBundleHeader header;
  if (bundle.size() < sizeof header)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "the bundle of '" + moduleName + "' has no header");
  std::memcpy(&header, bundle.data(), sizeof header);
  return std::vector<AbsoluteSymbol>{{bundleSizeSymbol.str(), bundle.size()},
                                     {bundleChecksumSymbol.str(), header.manifestChecksum}};
}

llvm::Expected<std::string> createExtensionObject(llvm::StringRef moduleName,
                                                  llvm::ArrayRef<ExtensionEntry> entries) {
  // PyInit runs once per process: LLVM's fast instruction selection and
  // register allocation emit it in a third of the time of the optimizing
  // ones, which matters to a first call that builds its module in process.
  JitOptions glueOptions;
  glueOptions.optimize = false;
  llvm::Expected<std::unique_ptr<llvm::TargetMachine>> machine = createHostMachine(glueOptions);
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

  auto *entryType = llvm::FunctionType::get(llvm::Type::getVoidTy(context), {ptr, ptr}, false);
  auto *rowType = llvm::StructType::get(context, {ptr, ptr});
  std::vector<llvm::Constant *> rows;
  for (const ExtensionEntry &entry : entries) {
    llvm::Constant *none = llvm::ConstantPointerNull::get(llvm::PointerType::getUnqual(context));
    llvm::Constant *thread = hiddenEntry(module, entryType, entry.entryName + "_thread");
    llvm::Constant *block =
        entry.hasBlockEntry ? hiddenEntry(module, entryType, entry.entryName + "_block") : none;
    rows.push_back(llvm::ConstantStruct::get(rowType, {thread, block}));
  }
  llvm::GlobalVariable *table = internalConstant(
      module, llvm::ConstantArray::get(llvm::ArrayType::get(rowType, rows.size()), rows),
      "hostEntries", 8);

  llvm::GlobalVariable *name = internalConstant(
      module, llvm::ConstantDataArray::getString(context, moduleName), "moduleName", 1);
  auto *imageType = llvm::StructType::get(context, {i32, i32, i32, i32, ptr, ptr, i64, ptr, i64});
  llvm::Constant *imageValue = llvm::ConstantStruct::get(
      imageType, {llvm::ConstantInt::get(i32, KILN_MODULE_IMAGE_MAGIC),
                  llvm::ConstantInt::get(i32, KILN_MODULE_FORMAT_VERSION),
                  llvm::ConstantInt::get(i32, KILN_CPU_ABI_VERSION),
                  llvm::ConstantInt::get(i32, entries.size()), name,
                  llvm::ConstantPointerNull::get(llvm::PointerType::getUnqual(context)),
                  absoluteValue(module, bundleSizeSymbol), table,
                  absoluteValue(module, bundleChecksumSymbol)});
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

llvm::Expected<std::string> createBundleObject(llvm::StringRef bundle,
                                               llvm::StringRef extensionObject) {
  static_assert(llvm::endianness::native == llvm::endianness::little,
                "the bundle object is written for little-endian hosts, as every Kiln target");
  namespace elf = llvm::ELF;
  elf::Elf64_Ehdr like;
  if (extensionObject.size() < sizeof like)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "the extension object is not an ELF object");
  std::memcpy(&like, extensionObject.data(), sizeof like);
  if (std::memcmp(like.e_ident, elf::ElfMagic, 4) != 0 ||
      like.e_ident[elf::EI_CLASS] != elf::ELFCLASS64 ||
      like.e_ident[elf::EI_DATA] != elf::ELFDATA2LSB)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "the extension object is not a 64-bit little-endian ELF object");

  // Layout: header, bundle, section names, section headers.
  static constexpr char Names[] = "\0" KILN_BUNDLE_SECTION "\0.shstrtab";
  const uint64_t bundleOffset = llvm::alignTo(sizeof(elf::Elf64_Ehdr), 16);
  const uint64_t namesOffset = bundleOffset + bundle.size();
  const uint64_t headersOffset = llvm::alignTo(namesOffset + sizeof Names, 8);
  elf::Elf64_Shdr sections[3];
  std::memset(sections, 0, sizeof sections);
  sections[1].sh_name = 1;
  sections[1].sh_type = elf::SHT_PROGBITS;
  sections[1].sh_offset = bundleOffset;
  sections[1].sh_size = bundle.size();
  sections[1].sh_addralign = 16;
  sections[2].sh_name = 1 + sizeof KILN_BUNDLE_SECTION;
  sections[2].sh_type = elf::SHT_STRTAB;
  sections[2].sh_offset = namesOffset;
  sections[2].sh_size = sizeof Names;
  sections[2].sh_addralign = 1;

  elf::Elf64_Ehdr header;
  std::memset(&header, 0, sizeof header);
  std::memcpy(header.e_ident, like.e_ident, elf::EI_NIDENT);
  header.e_type = elf::ET_REL;
  header.e_machine = like.e_machine;
  header.e_version = elf::EV_CURRENT;
  header.e_flags = like.e_flags;
  header.e_shoff = headersOffset;
  header.e_ehsize = sizeof(elf::Elf64_Ehdr);
  header.e_shentsize = sizeof(elf::Elf64_Shdr);
  header.e_shnum = 3;
  header.e_shstrndx = 2;

  std::string object(headersOffset + sizeof sections, '\0');
  std::memcpy(object.data(), &header, sizeof header);
  std::memcpy(object.data() + bundleOffset, bundle.data(), bundle.size());
  std::memcpy(object.data() + namesOffset, Names, sizeof Names);
  std::memcpy(object.data() + headersOffset, sections, sizeof sections);
  return object;
}

} // namespace kiln::backend
