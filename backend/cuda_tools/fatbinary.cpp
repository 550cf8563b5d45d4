//===- backend/cuda_tools/fatbinary.cpp - Building fat binaries ----------------------===//

#include "backend/cuda_tools/fatbinary.h"

#include "backend/cuda_tools/cuda_archs.h"
#include "backend/cuda_tools/ptx_header.h"
#include "support/temporary_directory.h"
#include "support/tool_runner.h"

#include <llvm/ADT/STLExtras.h>

#include <algorithm>

namespace kiln::cuda_tools {

namespace {

constexpr llvm::StringLiteral kOutputName = "kernels.fatbin";

std::string imageFileName(const FatbinImage &image) {
  return image.kind == FatbinImageKind::Cubin ? smName(image.arch) + ".cubin"
                                              : computeName(image.arch) + ".ptx";
}

std::string imageLabel(const FatbinImage &image) {
  return image.kind == FatbinImageKind::Cubin ? smName(image.arch) + " cubin"
                                              : computeName(image.arch) + " PTX";
}

llvm::Error checkImage(const FatbinImage &image) {
  if (!isCudaArchitecture(image.arch))
    return llvm::createStringError("cannot put the %s in a fat binary: not an architecture "
                                   "CUDA 13 supports",
                                   imageLabel(image).c_str());
  if (image.kind == FatbinImageKind::Cubin) {
    if (!llvm::StringRef(image.bytes)
             .starts_with("\x7f"
                          "ELF"))
      return llvm::createStringError("the %s is not an ELF file", imageLabel(image).c_str());
    return llvm::Error::success();
  }
  llvm::Expected<PtxHeader> header = readPtxHeader(image.bytes);
  if (!header)
    return llvm::createStringError("the %s: %s", imageLabel(image).c_str(),
                                   llvm::toString(header.takeError()).c_str());
  if (header->targetArch != image.arch || !header->targetSuffix.empty())
    return llvm::createStringError(
        "the %s has .target sm_%u%s; a compute_%u image must have .target sm_%u",
        imageLabel(image).c_str(), header->targetArch, header->targetSuffix.c_str(), image.arch,
        image.arch);
  return llvm::Error::success();
}

} // namespace

std::vector<std::string> fatbinaryFlags(const FatbinaryOptions &options) {
  switch (options.compression) {
  case FatbinCompression::None:
    return {"-64", "--compress=false"};
  case FatbinCompression::Ptx:
    return {"-64", "--compress=true"};
  case FatbinCompression::All:
    return {"-64", "--compress-all"};
  }
  return {"-64"};
}

std::string fatbinaryPtxText(llvm::StringRef ptx) {
  std::string text;
  text.reserve(ptx.size());
  bool lineStart = true, blank = false, inString = false;
  for (size_t i = 0; i < ptx.size(); ++i) {
    char c = ptx[i];
    if (c == '\n') {
      // A line keeps its trailing blanks (as one space), a comment's too.
      if (blank && !lineStart)
        text += ' ';
      text += c;
      lineStart = true;
      blank = inString = false;
      continue;
    }
    if (!inString && c == '/' && i + 1 < ptx.size() && ptx[i + 1] == '/') {
      size_t end = ptx.find('\n', i);
      i = (end == llvm::StringRef::npos ? ptx.size() : end) - 1;
      continue;
    }
    if (!inString && (c == ' ' || c == '\t')) {
      blank = true;
      continue;
    }
    if (blank && !lineStart)
      text += ' ';
    blank = lineStart = false;
    if (c == '"')
      inString = !inString;
    text += c;
  }
  if (blank && !lineStart)
    text += ' ';
  return text;
}

llvm::Expected<std::string> createFatbinary(const CudaToolkit &toolkit,
                                            llvm::ArrayRef<FatbinImage> images,
                                            const FatbinaryOptions &options) {
  if (images.empty())
    return llvm::createStringError("a fat binary needs at least one image");
  std::vector<const FatbinImage *> ordered;
  for (const FatbinImage &image : images) {
    if (llvm::Error error = checkImage(image))
      return error;
    ordered.push_back(&image);
  }
  llvm::sort(ordered, [](const FatbinImage *a, const FatbinImage *b) {
    return std::pair(a->kind, a->arch) < std::pair(b->kind, b->arch);
  });
  for (size_t i = 1; i < ordered.size(); ++i)
    if (ordered[i - 1]->kind == ordered[i]->kind && ordered[i - 1]->arch == ordered[i]->arch)
      return llvm::createStringError("the fat binary would hold two %s images",
                                     imageLabel(*ordered[i]).c_str());

  llvm::Expected<std::string> fatbinary = toolkit.require(ToolkitComponent::Fatbinary);
  if (!fatbinary)
    return fatbinary.takeError();
  llvm::Expected<support::TemporaryDirectory> directory =
      support::TemporaryDirectory::create("kiln-fatbinary");
  if (!directory)
    return directory.takeError();
  // --image3's value is a comma-separated list: a comma in the path would
  // split it.
  if (llvm::StringRef(directory->path()).contains(','))
    return llvm::createStringError("the temporary directory '%s' has a comma in its path, which "
                                   "fatbinary cannot take; set TMPDIR to another directory",
                                   directory->path().c_str());

  std::vector<std::string> arguments = {"--create=" + directory->file(kOutputName)};
  for (std::string &flag : fatbinaryFlags(options))
    arguments.push_back(std::move(flag));
  for (const FatbinImage *image : ordered) {
    std::string name = imageFileName(*image);
    if (llvm::Error error = directory->write(name, image->bytes))
      return error;
    arguments.push_back(
        "--image3=kind=" + std::string(image->kind == FatbinImageKind::Cubin ? "elf" : "ptx") +
        ",sm=" + std::to_string(image->arch) + ",file=" + directory->file(name));
  }

  llvm::Expected<support::ToolOutput> output = support::runTool(*fatbinary, arguments);
  if (!output)
    return output.takeError();
  if (output->exitCode != 0)
    return llvm::createStringError("fatbinary failed (exit status %d):%s", output->exitCode,
                                   support::indentedToolOutput(*output, directory->path()).c_str());
  return directory->read(kOutputName);
}

} // namespace kiln::cuda_tools
