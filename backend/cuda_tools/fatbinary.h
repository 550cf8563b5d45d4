//===- backend/cuda_tools/fatbinary.h - Building fat binaries --------------*- C++ -*-===//
//
// A fat binary bundles one kernel module's cubins (one per sm_) and PTX (per
// compute_) so that the CUDA driver picks the best image for the GPU at hand.
// Kiln builds them with the toolkit's fatbinary:
//
//   fatbinary --create=kernels.fatbin -64 --compress=false
//             --image3=kind=elf,sm=75,file=sm_75.cubin
//             --image3=kind=ptx,sm=90,file=compute_90.ptx
//
// The result is reproducible: images are passed in a fixed order (cubins,
// then PTX, each by ascending architecture) from fixed file names in a fresh
// temporary directory (fatbinary does not record file names, but this keeps
// it so should a version start to).
//
// fatbinary rewrites PTX as it stores it: runs of spaces and tabs become one
// space (none at the start of a line) and comments are removed, but lines
// stay where they were, so line numbers in driver JIT errors still match.
// fatbin_reader.h reads fat binaries back.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "backend/cuda_tools/cuda_toolkit.h"

#include <llvm/ADT/ArrayRef.h>
#include <llvm/ADT/StringRef.h>
#include <llvm/Support/Error.h>

#include <string>
#include <vector>

namespace kiln::cuda_tools {

enum class FatbinImageKind { Cubin, Ptx };

struct FatbinImage {
  FatbinImageKind kind = FatbinImageKind::Cubin;
  /// sm_<arch> for a cubin, compute_<arch> for PTX (whose .target must be
  /// sm_<arch>).
  unsigned arch = 0;
  /// The ELF bytes, or the PTX text.
  std::string bytes;
};

enum class FatbinCompression {
  /// Images stored as they are: any driver loads them, and `kiln inspect`
  /// and the tests can read them back. Python wheels are compressed anyway.
  None,
  /// PTX compressed (zstd), cubins not: what fatbinary and nvcc do by default.
  Ptx,
  /// Every image compressed.
  All,
};

struct FatbinaryOptions {
  FatbinCompression compression = FatbinCompression::None;
};

/// The fatbinary arguments for `options` (not the images or output file).
std::vector<std::string> fatbinaryFlags(const FatbinaryOptions &options);

/// The PTX text `ptx` as fatbinary rewrites it into a fat binary: `//`
/// comments outside string literals removed, runs of spaces and tabs made
/// one space, none at the start of a line (but one at the end of a line
/// that had any). The cache finds it in a fat
/// binary to keep it there by reference (pipeline/build_cache.h); a
/// fatbinary that rewrites otherwise makes that find nothing, never wrong
/// bytes.
std::string fatbinaryPtxText(llvm::StringRef ptx);

/// Builds a fat binary holding `images` (any order; no two of one kind and
/// architecture).
llvm::Expected<std::string> createFatbinary(const CudaToolkit &toolkit,
                                            llvm::ArrayRef<FatbinImage> images,
                                            const FatbinaryOptions &options = {});

} // namespace kiln::cuda_tools
