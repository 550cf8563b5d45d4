//===- pipeline/version.h - Kiln's version ------------------------*- C++ -*-===//
#pragma once

namespace kiln::pipeline {

/// "0.1.0 (LLVM 19.1.7, built with CUDA 13.0.88)": the CUDA toolkit whose
/// headers Kiln was built with; `kiln targets` shows the one it runs.
const char *versionString();

/// "0.1.0": Kiln's version alone, as manifests record it.
const char *versionNumber();

} // namespace kiln::pipeline
