//===- pipeline/outputs.cpp - What a build writes --------------------------===//

#include "pipeline/outputs.h"

#include "backend/cuda_tools/cuda_toolkit.h"
#include "module/bundle_writer.h"
#include "module/format.h"
#include "module/manifest_writer.h"
#include "pipeline/cuda_includes.h"
#include "pipeline/depfile.h"
#include "pipeline/manifest_records.h"
#include "pipeline/module_writer.h"
#include "pipeline/output_file.h"
#include "pipeline/version.h"
#include "support/temporary_directory.h"

#include <llvm/ADT/StringExtras.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Path.h>
#include <llvm/Support/SHA256.h>
#include <llvm/Support/raw_ostream.h>

#include <unistd.h>

namespace kiln::pipeline {

namespace {

llvm::Error writeFile(llvm::StringRef directory, llvm::StringRef name, llvm::StringRef bytes,
                      std::vector<std::string> &written) {
  llvm::SmallString<256> path(directory);
  llvm::sys::path::append(path, name);
  if (llvm::Error error = writeOutputFile(path, bytes))
    return error;
  written.push_back(path.str().str());
  return llvm::Error::success();
}

/// The module's top-level names bound to constants a manifest can hold,
/// sorted by name.
std::vector<module::ManifestConstant> moduleConstants(const ModuleScope &scope) {
  std::vector<module::ManifestConstant> constants;
  for (const auto &binding : scope.moduleBindings()) {
    const ModuleValue &value = binding.getValue();
    if (value.kind() == ModuleValue::Kind::Constant && isManifestConstant(value.constantValue()))
      constants.push_back(manifestConstant(binding.getKey().str(), value.constantValue()));
  }
  llvm::sort(constants, [](const module::ManifestConstant &a, const module::ManifestConstant &b) {
    return a.name < b.name;
  });
  return constants;
}

std::string sha256Hex(llvm::StringRef bytes) {
  return llvm::toHex(llvm::SHA256::hash(llvm::arrayRefFromStringRef(bytes)), /*LowerCase=*/true);
}

/// `path` as seen from `folder`, with '/': "helpers.py", "../common.py".
std::string relativePath(llvm::StringRef path, llvm::StringRef folder) {
  llvm::SmallString<256> from(folder.empty() ? "." : folder), to(path);
  llvm::sys::fs::make_absolute(from);
  llvm::sys::fs::make_absolute(to);
  llvm::sys::path::remove_dots(from, /*remove_dot_dot=*/true);
  llvm::sys::path::remove_dots(to, /*remove_dot_dot=*/true);
  auto fromPart = llvm::sys::path::begin(from), fromEnd = llvm::sys::path::end(from);
  auto toPart = llvm::sys::path::begin(to), toEnd = llvm::sys::path::end(to);
  while (fromPart != fromEnd && toPart != toEnd && *fromPart == *toPart)
    ++fromPart, ++toPart;
  std::string result;
  for (; fromPart != fromEnd; ++fromPart)
    result += "../";
  for (; toPart != toEnd; ++toPart)
    result += (result.empty() || result.back() == '/' ? "" : "/") + toPart->str();
  return result;
}

llvm::Expected<module::ManifestModule>
describeModule(const BuildOptions &options, const CheckedModule *module, llvm::StringRef moduleName,
               llvm::StringRef companionOf,
               llvm::ArrayRef<module::ManifestSpecialization> entries) {
  llvm::Expected<std::string> source = support::readFileBytes(options.file);
  if (!source)
    return source.takeError();
  module::ManifestModule description;
  description.name = moduleName.str();
  description.kilnVersion = versionNumber();
  description.sourceFile = llvm::sys::path::filename(options.file).str();
  description.sourceChecksum = kilnChecksum(source->data(), source->size());
  description.options = {options.fastmath, options.debug,        options.lineinfo,
                         options.opt,      options.maxRegisters, options.ptxasFlags};
  for (const module::ManifestSpecialization &entry : entries) {
    description.cubinArchs.insert(entry.cubinArchs.begin(), entry.cubinArchs.end());
    description.ptxArchs.insert(entry.ptxArchs.begin(), entry.ptxArchs.end());
  }
  if (module && module->scope)
    description.constants = moduleConstants(*module->scope);
  if (!companionOf.empty()) {
    description.companionOf = companionOf.str();
    description.sources.push_back({description.sourceFile, sha256Hex(*source)});
    if (module)
      for (const std::string &path : module->importedFiles) {
        llvm::Expected<std::string> imported = support::readFileBytes(path);
        if (!imported)
          return imported.takeError();
        description.sources.push_back(
            {relativePath(path, llvm::sys::path::parent_path(options.file)), sha256Hex(*imported)});
      }
  }
  return description;
}

} // namespace

std::vector<std::string> linkFiles(const ir::Function &kernel, llvm::StringRef modulePath) {
  std::vector<std::string> files;
  llvm::StringRef folder = llvm::sys::path::parent_path(modulePath);
  for (const std::string &file : kernel.options.link) {
    llvm::SmallString<256> path(file);
    if (llvm::sys::path::is_relative(path) && !folder.empty()) {
      path = folder;
      llvm::sys::path::append(path, file);
    }
    files.push_back(path.str().str());
  }
  return files;
}

llvm::Error writeTypedIR(const BuildOptions &options, const ir::Module &typed,
                         std::vector<std::string> &written) {
  std::string text;
  llvm::raw_string_ostream stream(text);
  typed.print(stream);
  return writeFile(options.outputDirectory, typed.name + ".typed", text, written);
}

std::string extensionModuleName(const BuildOptions &options, llvm::StringRef moduleName) {
  return options.moduleStaysPython ? companionModuleName(moduleName) : moduleName.str();
}

llvm::Error writeOutputs(const BuildOptions &options, const CheckedModule *module,
                         llvm::StringRef moduleName, llvm::StringRef extensionSuffix,
                         const cuda_tools::ArchSelection *archs,
                         std::vector<KernelArtifacts> &kernels, std::vector<ImageArtifacts> &images,
                         std::string extensionObject, std::vector<std::string> &written) {
  llvm::Error failure = llvm::Error::success();
  size_t firstWritten = written.size();
  auto write = [&](const std::string &name, llvm::StringRef bytes) {
    if (!failure)
      failure = writeFile(options.outputDirectory, name, bytes, written);
  };
  if (options.emit == EmitKind::Fatbin)
    for (const ImageArtifacts &image : images)
      write(image.stem + ".fatbin", image.fatbin);
  std::vector<module::ManifestSpecialization> manifest;
  for (KernelArtifacts &build : kernels) {
    backend::KernelInterface interface = build.interface();
    if (build.host) {
      interface.hasBlockEntry = build.host->interface.hasBlockEntry;
      interface.messageSites = build.host->interface.messageSites;
      interface.indexChecks = build.host->interface.indexChecks;
    }
    module::ManifestSpecialization entry =
        manifestSpecialization(*build.kernel, interface, build.entryResources());
    const ImageArtifacts *image = build.image ? &images[*build.image] : nullptr;
    auto writeOwn = [&](const std::string &name, llvm::StringRef bytes) {
      write(name, bytes);
      entry.files.push_back(name);
    };
    switch (options.emit) {
    case EmitKind::LLVM:
      for (const auto &[arch, code] : build.ptx)
        writeOwn(build.stem + "." + cuda_tools::smName(arch) + ".ll", code.bytes);
      break;
    case EmitKind::Ptx:
      for (const auto &[arch, code] : build.ptx) {
        writeOwn(build.stem + "." + cuda_tools::smName(arch) + ".ptx", code.bytes);
        entry.ptxArchs.insert(arch);
      }
      break;
    case EmitKind::Cubin:
      for (const auto &[arch, cubin] : image->cubins) {
        writeOwn(build.stem + "." + cuda_tools::smName(arch) + ".cubin", cubin);
        entry.cubinArchs.insert(arch);
      }
      break;
    case EmitKind::Fatbin:
      entry.files.push_back(image->stem + ".fatbin");
      [[fallthrough]];
    case EmitKind::Module:
      if (!image) // host code alone
        break;
      // The cubins themselves are in the fat binary by now: what ptxas
      // reported names their architectures.
      for (const auto &[arch, usage] : image->usage)
        entry.cubinArchs.insert(arch);
      if (image->linkFiles.empty())
        entry.ptxArchs = archs->archs.ptx;
      break;
    case EmitKind::Object:
      writeOwn(build.stem + ".o", build.host->bytes);
      break;
    case EmitKind::Typed:
      break;
    }
    manifest.push_back(std::move(entry));
  }
  if (options.emit == EmitKind::Module && !images.empty()) {
    // Every kernel of an image points at its one fat binary.
    std::vector<uint64_t> sizes;
    for (const ImageArtifacts &image : images)
      sizes.push_back(image.fatbin.size());
    std::vector<uint64_t> offsets = module::payloadOffsets(sizes);
    for (size_t i = 0; i < kernels.size(); ++i) {
      size_t at = *kernels[i].image;
      manifest[i].fatbin = module::ManifestBlob{
          offsets[at], sizes[at], kilnChecksum(images[at].fatbin.data(), images[at].fatbin.size())};
    }
  }
  // A module that stays Python gets a companion, which its manifest names.
  bool companion = options.emit == EmitKind::Module && options.moduleStaysPython;
  std::string builtName = options.emit == EmitKind::Module
                              ? extensionModuleName(options, moduleName)
                              : moduleName.str();
  llvm::Expected<module::ManifestModule> description = describeModule(
      options, module, builtName, companion ? moduleName : llvm::StringRef(), manifest);
  if (!description)
    failure = llvm::joinErrors(std::move(failure), description.takeError());
  std::string manifestText;
  if (!failure) {
    llvm::raw_string_ostream stream(manifestText);
    module::writeManifest(stream, *description, manifest);
  }
  if (!failure && options.emit == EmitKind::Module) {
    ExtensionModuleInputs inputs;
    inputs.moduleName = builtName;
    if (companion)
      inputs.fileStem = companionFileStem(moduleName);
    inputs.manifest = manifestText;
    inputs.extensionObject = std::move(extensionObject);
    for (ImageArtifacts &image : images)
      inputs.fatbins.push_back(std::move(image.fatbin));
    for (KernelArtifacts &build : kernels)
      inputs.hostObjects.push_back(std::move(build.host->bytes));
    llvm::Expected<std::string> path =
        writeExtensionModule(std::move(inputs), options.outputDirectory, extensionSuffix);
    if (path)
      written.push_back(*path);
    else
      failure = path.takeError();
  } else if (!failure) {
    failure = writeFile(options.outputDirectory, moduleName.str() + ".manifest.json", manifestText,
                        written);
  }
  if (!failure && !options.depfile.empty()) {
    std::vector<std::string> read;
    if (module)
      read = module->importedFiles;
    for (const KernelArtifacts &build : kernels)
      for (std::string &file : linkFiles(*build.kernel, options.file)) {
        if (llvm::sys::path::extension(file) == ".cu")
          for (std::string &header : includedFiles(file, options.linkIncludeDirectories))
            read.push_back(std::move(header));
        read.push_back(std::move(file));
      }
    failure = writeDepfile(options.depfile, written, buildInputs(options.file, read));
  }
  if (failure) {
    // A failed build leaves none of its outputs: a build system must not
    // take a part of them for a finished build.
    for (size_t i = firstWritten; i < written.size(); ++i)
      ::unlink(written[i].c_str());
    written.resize(firstWritten);
  }
  return failure;
}

} // namespace kiln::pipeline
