//===- pipeline/module_writer.cpp - Writing a built kernel module -----------===//

#include "pipeline/module_writer.h"

#include "backend/host/host_library.h"
#include "module/bundle_writer.h"
#include "pipeline/output_file.h"
#include "support/temporary_directory.h"

#include <llvm/ADT/STLExtras.h>
#include <llvm/ADT/StringExtras.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/FormatVariadic.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/Path.h>

#include <malloc.h>

namespace kiln::pipeline {

std::optional<std::string> moduleNameProblem(llvm::StringRef name) {
  llvm::SmallVector<llvm::StringRef, 4> parts;
  name.split(parts, '.');
  for (llvm::StringRef part : parts) {
    bool identifier = !part.empty() && !llvm::isDigit(part.front()) &&
                      llvm::all_of(part, [](char c) { return llvm::isAlnum(c) || c == '_'; });
    if (!identifier)
      return "'" + name.str() + "' is not a module name Kiln can build: each dotted part must be " +
             "an ASCII Python identifier ('" + part.str() + "' is not)";
  }
  return std::nullopt;
}

std::string companionModuleName(llvm::StringRef moduleName) {
  auto [package, last] = moduleName.rsplit('.');
  if (last.empty())
    return "_" + package.str() + "_kiln";
  return package.str() + "._" + last.str() + "_kiln";
}

std::string companionFileStem(llvm::StringRef moduleName) {
  // rfind gives npos without a dot, and npos + 1 is 0.
  return "_" + moduleName.substr(moduleName.rfind('.') + 1).str() + ".kiln";
}

/// Frees what `text` holds (clear() keeps the capacity).
static void release(std::string &text) {
  std::string().swap(text);
}

std::vector<std::string> shadowingBuilds(llvm::StringRef modulePath) {
  std::vector<std::string> found;
  llvm::StringRef stem = llvm::sys::path::filename(modulePath);
  if (!stem.consume_back(".abi3.so"))
    return found;
  llvm::StringRef folder = llvm::sys::path::parent_path(modulePath);
  std::error_code error;
  for (llvm::sys::fs::directory_iterator entry(folder.empty() ? "." : folder, error), end;
       !error && entry != end; entry.increment(error)) {
    llvm::StringRef other = llvm::sys::path::filename(entry->path());
    if (other.consume_front(stem) && other.starts_with(".cpython-") && other.ends_with(".so"))
      found.push_back(entry->path());
  }
  llvm::sort(found);
  return found;
}

llvm::Expected<std::string> writeExtensionModule(ExtensionModuleInputs inputs,
                                                 llvm::StringRef directory,
                                                 llvm::StringRef extensionSuffix) {
  // The build has freed what its kernels' device code and host code took
  // to make; glibc keeps most of it. Handing it back now keeps the link's
  // own peak from adding to it.
  malloc_trim(0);
  std::string bundle = module::writeBundle(inputs.manifest, inputs.fatbins);
  std::vector<std::string>().swap(inputs.fatbins);
  llvm::Expected<std::vector<backend::AbsoluteSymbol>> symbols =
      backend::bundleSymbols(inputs.moduleName, bundle);
  if (!symbols)
    return symbols.takeError();
  llvm::Expected<std::string> bundleObject =
      backend::createBundleObject(bundle, inputs.extensionObject);
  if (!bundleObject)
    return bundleObject.takeError();
  release(bundle);

  // Objects get fixed names in a scratch folder: LLD records none of them
  // in the output, but fixed names keep even its diagnostics stable.
  llvm::Expected<support::TemporaryDirectory> scratch =
      support::TemporaryDirectory::create("kiln-module");
  if (!scratch)
    return scratch.takeError();
  std::vector<std::string> objects;
  for (size_t i = 0; i < inputs.hostObjects.size(); ++i) {
    std::string name = llvm::formatv("host{0:d6}.o", i).str();
    if (llvm::Error error = scratch->write(name, inputs.hostObjects[i]))
      return error;
    release(inputs.hostObjects[i]);
    objects.push_back(scratch->file(name));
  }
  if (llvm::Error error = scratch->write("module.o", inputs.extensionObject))
    return error;
  objects.push_back(scratch->file("module.o"));
  // The bundle's section is not allocated: LLD places it after every
  // loaded segment, with the other non-allocated sections.
  if (llvm::Error error = scratch->write("bundle.o", *bundleObject))
    return error;
  release(*bundleObject);
  objects.push_back(scratch->file("bundle.o"));

  llvm::SmallString<256> finalPath(directory);
  llvm::sys::path::append(finalPath, (inputs.fileStem.empty()
                                          ? backend::extensionBaseName(inputs.moduleName).str()
                                          : inputs.fileStem) +
                                         extensionSuffix);
  std::string libraryPath = scratch->file("module.so");
  if (llvm::Error error = backend::linkSharedLibrary(objects, libraryPath, *symbols))
    return error;
  // Mapped, not read: the library of a module of hundreds of kernels is
  // tens of megabytes, which the build need not hold on the heap.
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> library =
      llvm::MemoryBuffer::getFile(libraryPath, /*IsText=*/false, /*RequiresNullTerminator=*/false);
  if (!library)
    return llvm::createStringError(library.getError(), "cannot read the linked library '%s': %s",
                                   libraryPath.c_str(), library.getError().message().c_str());
  if (llvm::Error error = writeOutputFile(finalPath, (*library)->getBuffer(), /*executable=*/true))
    return error;
  return finalPath.str().str();
}

} // namespace kiln::pipeline
