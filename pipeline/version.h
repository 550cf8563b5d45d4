//===- pipeline/version.h - Kiln's version ------------------------*- C++ -*-===//
#pragma once

namespace kiln::pipeline {

/// "0.1.0 (LLVM 19.1.7, CUDA 13.0)"
const char *versionString();

/// "0.1.0": Kiln's version alone, as manifests record it.
const char *versionNumber();

} // namespace kiln::pipeline
