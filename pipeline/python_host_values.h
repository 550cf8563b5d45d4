//===- pipeline/python_host_values.h - Globals from an import --*- C++ -*-===//
//
// Host values (see [Note: host values]) for `kiln build`: the first time a
// kernel reads a global that host code computes, a Python interpreter
// imports that module (`python -m kiln.import_host_values FILE`) and says what its
// globals are. Nothing runs for modules whose kernels read no such global.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/resolve/host_values.h"

#include <llvm/ADT/StringSet.h>

#include <string>
#include <vector>

namespace kiln::pipeline {

class PythonHostValues final : public HostValueSource {
public:
  /// `python`: a path or a name on $PATH; empty for python3.
  explicit PythonHostValues(std::string python) : python(std::move(python)) {}

  const HostValue *lookup(llvm::StringRef file, llvm::StringRef name) override;

  /// Why modules could not be imported, one message per module.
  const std::vector<std::string> &problems() const { return importProblems; }

private:
  llvm::Error importModule(llvm::StringRef file);

  std::string python;
  HostValueTable values;
  llvm::StringSet<> imported;
  std::vector<std::string> importProblems;
};

} // namespace kiln::pipeline
