//===- frontend/frontend.h - The front end's entry point --------*- C++ -*-===//
//
// [Note: the front end]
//
//   kernels.py --parse--> AST --module scope--> decorated functions with
//   signatures --build_ssa--> untyped SSA --type inference--> typed
//   specializations (+ semantic hashes)
//
// checkModule runs the whole front end on one kernel module. Problems in the
// module are diagnostics in the result; only a file that cannot be read at
// all is an llvm::Error.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/parse/ast.h"
#include "frontend/resolve/module_scope.h"
#include "frontend/source/diagnostics.h"
#include "frontend/source/file_prefix_map.h"
#include "frontend/typing/semantic_hash.h"
#include "frontend/typing/type_inference.h"
#include "ir/types.h"

#include <llvm/Support/Error.h>

#include <memory>
#include <string>
#include <vector>

namespace kiln {

struct FrontendOptions {
  /// Dotted module name (`pkg.kernels`), for module-qualified signature keys.
  std::string moduleName;
  /// `--signature NAME=SIGNATURE` values.
  std::vector<std::string> signatureFlags;
  /// Read signatures from the nearest pyproject.toml ([tool.kiln.signatures])
  /// and kiln-signatures.toml ([signatures]).
  bool readPyproject = true;
  /// Whether the module stays Python source beside its build, as where
  /// kiln.cuda.jit specializes kernels on demand in development: then host
  /// code may sit beside the kernels (Kiln skips it, and kernels cannot use
  /// what it computes), and a kernel without any signature simply has no
  /// specialization yet. Otherwise the built module replaces the source
  /// (`kiln build --module`), which may hold only what Kiln compiles.
  bool moduleStaysPython = false;
  /// Note, at each import of numba in a module that does not stay Python
  /// and has errors a module that stays Python would not (host code,
  /// kernels without signatures), how `from kiln import cuda` keeps it
  /// Python (for `kiln check`).
  bool suggestKilnImport = false;
  /// The values of globals host code computes at import, in a module that
  /// stays Python and the source modules it imports (see [Note: host
  /// values]); without them, kernels cannot read such globals.
  HostValueSource *hostValues = nullptr;
  /// Functions defined inside functions to compile too, in a module that
  /// stays Python.
  std::vector<ClosureRequest> closures;
  /// Functions host code makes kernels or device functions by calling
  /// cuda.jit on them, in a module that stays Python or the source modules
  /// it imports from.
  std::vector<CalledDecorator> calledDecorators;
  /// In a module that stays Python, the kernels, ufuncs and reductions to
  /// compile; empty: every one (see PythonModuleContext::onlyFunctions).
  std::vector<std::string> onlyFunctions;
  /// How the source paths the build writes are recorded (the typed IR's
  /// paths, and through them messages and debug information); diagnostics
  /// show the paths as given.
  FilePrefixMap recordedPaths;
  /// Dtypes a @cuda.reduce is compiled for when no signature names them.
  std::vector<std::string> defaultReductionTypes = {"int32", "int64", "float32", "float64"};
};

/// Everything the front end learned about a kernel module.
class CheckedModule {
public:
  SourceManager sources;
  DiagnosticEngine diags{sources};
  ast::AstContext astContext;
  TypeContext types;
  ast::Module module;
  std::unique_ptr<ModuleScope> scope;
  /// Modules the module imports from: Kiln's prelude, and source modules
  /// beside it (`from .helpers import clamp`).
  std::unique_ptr<ModuleLoader> loader;
  /// The source modules it imports from, by absolute path, in load order.
  std::vector<std::string> importedFiles;
  /// FrontendOptions::calledDecorators, each call's text a file of `sources`.
  std::vector<DecoratorCall> decoratorCalls;
  std::unique_ptr<TypeInference> inference;

  struct Function {
    const FunctionDecl *decl;
    /// In the order they were requested: signatures for kernels, ufuncs and
    /// reductions; first use for device functions.
    std::vector<Specialization *> specializations;
  };
  /// Every decorated function, in source order, with the specializations
  /// typing produced; device functions list those reachable from roots.
  std::vector<Function> functions;

  bool hasErrors() const { return diags.hasErrors(); }
  SemanticHash hashOf(const Specialization &spec) const { return semanticHash(spec, sources); }
};

llvm::Expected<std::unique_ptr<CheckedModule>> checkModule(llvm::StringRef path,
                                                           const FrontendOptions &options);

/// What a glance at a module's top level shows, without checking it.
struct ModuleOutline {
  /// It imports Kiln's decorators (`from kiln import cuda`, `import
  /// kiln.cuda`): such a module runs as Python, host code and all, and its
  /// build is a companion of the source rather than its replacement
  /// (FrontendOptions::moduleStaysPython).
  bool importsKiln = false;
  /// It imports Numba (`from numba import cuda`): a kernel module.
  bool importsNumba = false;
  /// Functions defined at top level under at least one decorator.
  std::vector<std::string> decoratedFunctions;
};

llvm::Expected<ModuleOutline> outlineModule(llvm::StringRef path);

/// As checkModule, for source text that did not come from a file.
std::unique_ptr<CheckedModule> checkSource(llvm::StringRef path, std::string contents,
                                           const FrontendOptions &options);

} // namespace kiln
