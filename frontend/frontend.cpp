//===- frontend/frontend.cpp - Running the front end ----------------------===//

#include "frontend/frontend.h"

#include "frontend/parse/parser.h"
#include "frontend/resolve/build_config.h"
#include "frontend/resolve/prelude.h"
#include "frontend/source/source_file.h"

#include <llvm/ADT/DenseSet.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Path.h>
#include <llvm/Support/thread.h>

#include <optional>

namespace kiln {

namespace {

/// Calls `visit(moduleName, range)` for each absolute import at the
/// module's top level (`import numba.cuda`, `from kiln import cuda`).
void forEachTopLevelImport(const ast::Module &module,
                           llvm::function_ref<void(llvm::StringRef, SourceRange)> visit) {
  for (const ast::Stmt *stmt : module.body) {
    if (const auto *import = llvm::dyn_cast<ast::ImportStmt>(stmt)) {
      for (const ast::ImportAlias &alias : import->names)
        visit(alias.name, alias.range);
    } else if (const auto *from = llvm::dyn_cast<ast::ImportFromStmt>(stmt)) {
      if (from->level == 0)
        visit(from->module, from->moduleRange);
    }
  }
}

bool isTopLevelModule(llvm::StringRef name, llvm::StringRef top) {
  return name.split('.').first == top;
}

/// Loads the modules a checked module imports into the same source manager
/// and contexts: Kiln's prelude by name, and Python source modules beside
/// it by path; each once.
class ImportedModuleLoader : public ModuleLoader {
public:
  ImportedModuleLoader(CheckedModule &checked, HostValueSource *hostValues,
                       llvm::ArrayRef<ClosureRequest> closures,
                       llvm::ArrayRef<DecoratorCall> decoratorCalls)
      : checked(checked), siblings{hostValues, closures, decoratorCalls, {}} {}

  const ModuleScope *load(llvm::StringRef moduleName) override {
    auto found = scopes.find(moduleName);
    if (found != scopes.end())
      return found->second.get();
    std::optional<llvm::StringRef> source = preludeSource(moduleName);
    if (!source)
      return nullptr;
    std::string path = "<kiln>/" + moduleName.str() + ".py";
    std::replace(path.begin() + 7, path.end() - 3, '.', '/');
    return loadScope(moduleName, path, source->str(), /*runsAsPython=*/false);
  }

  const ModuleScope *loadSource(llvm::StringRef importerPath, unsigned level,
                                llvm::StringRef moduleName) override {
    std::optional<std::string> path = findSourceModule(importerPath, level, moduleName);
    return path ? loadFile(*path) : nullptr;
  }

  const ModuleScope *loadFile(llvm::StringRef path) override {
    auto found = scopes.find(path);
    if (found != scopes.end())
      return found->second.get();
    llvm::ErrorOr<std::string> source = readSourceFile(path);
    if (!source)
      return nullptr;
    checked.importedFiles.push_back(path.str());
    return loadScope(path, path, std::move(*source), /*runsAsPython=*/true);
  }

private:
  const ModuleScope *loadScope(llvm::StringRef key, llvm::StringRef path, std::string source,
                               bool runsAsPython) {
    uint32_t file = checked.sources.addFile(path.str(), std::move(source));
    ast::Module module = parseModule(checked.sources, file, checked.astContext, checked.diags);
    // Mark the entry first: a module may import itself indirectly.
    scopes[key] = nullptr;
    std::unique_ptr<ModuleScope> scope =
        ModuleScope::build(module, checked.sources, checked.astContext, checked.types,
                           checked.diags, {}, this, runsAsPython ? &siblings : nullptr);
    const ModuleScope *result = scope.get();
    scopes[key] = std::move(scope);
    return result;
  }

  /// Where Python would find `from <level dots><moduleName> import ...` in
  /// the module at `importerPath`, when that is a source module of the
  /// importer's own package (or, outside any package, of its folder).
  static std::optional<std::string> findSourceModule(llvm::StringRef importerPath, unsigned level,
                                                     llvm::StringRef moduleName) {
    auto isPackage = [](llvm::StringRef folder) {
      llvm::SmallString<256> marker(folder);
      llvm::sys::path::append(marker, "__init__.py");
      return llvm::sys::fs::exists(marker);
    };
    llvm::SmallString<256> base(importerPath);
    if (llvm::sys::fs::make_absolute(base))
      return std::nullopt;
    llvm::sys::path::remove_filename(base);
    if (level > 0) {
      for (unsigned up = 1; up < level; ++up) {
        if (!isPackage(base))
          return std::nullopt;
        llvm::sys::path::remove_filename(base);
      }
    } else if (isPackage(base)) {
      // An absolute name within the importer's own top-level package.
      while (isPackage(llvm::sys::path::parent_path(base)))
        llvm::sys::path::remove_filename(base);
      if (moduleName.split('.').first != llvm::sys::path::filename(base))
        return std::nullopt;
      llvm::sys::path::remove_filename(base);
    }
    llvm::SmallVector<llvm::StringRef, 4> parts;
    if (!moduleName.empty())
      moduleName.split(parts, '.');
    for (llvm::StringRef part : parts)
      llvm::sys::path::append(base, part);
    for (llvm::StringRef candidate : {".py", "/__init__.py"}) {
      std::string path = (base + candidate).str();
      if (!parts.empty() && llvm::sys::fs::is_regular_file(path))
        return path;
    }
    return std::nullopt;
  }

  CheckedModule &checked;
  /// How the source modules it imports from are read: what host code
  /// computed and made of their functions (closures their factories made
  /// included); they compile only what the module's kernels call.
  PythonModuleContext siblings;
  llvm::StringMap<std::unique_ptr<ModuleScope>> scopes;
};

/// Whether values of `type` can be passed to a kernel from the host.
bool isKernelArgumentType(const Type *type) {
  // Host code has no bfloat16 values or arrays to pass (NumPy has no such
  // dtype); kernels make them from float32 and float64.
  const auto *array = llvm::dyn_cast<ArrayType>(type);
  if (isBFloat16(type) || (array && isBFloat16(array->elementType())))
    return false;
  // A record passes by reference: the kernel's stores reach the caller's.
  if (type->isScalar() || llvm::isa<RecordType, DateTimeType, PointerType>(type))
    return true;
  if (array)
    return array->elementType()->isScalar() ||
           llvm::isa<RecordType, CharSequenceType, DateTimeType>(array->elementType());
  if (const auto *tuple = llvm::dyn_cast<TupleType>(type))
    return llvm::all_of(tuple->elementTypes(), isKernelArgumentType);
  if (const auto *member = llvm::dyn_cast<EnumMemberType>(type))
    return isKernelArgumentType(member->valueType());
  return false;
}

void typeModule(CheckedModule &checked, const FrontendOptions &options) {
  TypeContext &types = checked.types;
  TypeInference &inference = *checked.inference;
  std::vector<Specialization *> roots;
  for (const auto &decl : checked.scope->functions()) {
    std::vector<Signature> signatures = decl->signatures;
    switch (decl->kind) {
    case FunctionDecl::Kind::Kernel:
      for (const Signature &signature : signatures) {
        bool valid = true;
        for (const Type *arg : signature.args)
          if (!isKernelArgumentType(arg)) {
            checked.diags.report(DiagID::err_kernel_argument_type, signature.range, {arg->str()});
            valid = false;
          }
        if (valid)
          roots.push_back(inference.specialize(*decl, signature.args));
      }
      break;
    case FunctionDecl::Kind::Ufunc:
      for (const Signature &signature : signatures)
        roots.push_back(inference.specialize(*decl, signature.args));
      break;
    case FunctionDecl::Kind::Reduction:
      if (signatures.empty())
        for (const std::string &name : options.defaultReductionTypes) {
          const Type *dtype = types.scalarByName(name);
          roots.push_back(inference.specialize(*decl, {dtype, dtype}));
        }
      for (const Signature &signature : signatures)
        roots.push_back(inference.specialize(*decl, signature.args));
      break;
    case FunctionDecl::Kind::Device:
      // Device functions with signatures are compiled for them, as Numba
      // does eagerly; the others only for the types callers use.
      for (const Signature &signature : signatures)
        roots.push_back(inference.specialize(*decl, signature.args));
      break;
    case FunctionDecl::Kind::External:
      break;
    }
  }

  // Reductions must produce their element type. (Functions with a declared
  // return type, ufuncs included, are checked while typing their returns.)
  for (Specialization *root : roots) {
    if (root->failed || !root->returnType)
      continue;
    const FunctionDecl &decl = root->decl;
    const Type *expected = nullptr;
    if (decl.kind == FunctionDecl::Kind::Reduction)
      expected = root->argTypes.front();
    if (expected && !types.canConvert(root->returnType, expected))
      root->diagnostics.push_back(checked.diags.makeDiagnostic(
          DiagID::err_return_type_mismatch, decl.range,
          {decl.kindName().str(), decl.name, root->returnType->str(), expected->str()}));
  }
  inference.reportDiagnostics(roots);
  // Every failure is explained by a diagnostic; should one not be, failing
  // loudly beats reporting success.
  if (!checked.diags.hasErrors())
    for (Specialization *root : roots)
      if (root->failed) {
        checked.diags.report(DiagID::err_internal_unexplained_failure, root->decl.range,
                             {root->decl.name});
        break;
      }

  // Group specializations by function, roots first, then everything they call.
  llvm::DenseSet<Specialization *> seen;
  std::vector<Specialization *> order;
  std::vector<Specialization *> worklist(roots.rbegin(), roots.rend());
  while (!worklist.empty()) {
    Specialization *spec = worklist.back();
    worklist.pop_back();
    if (!seen.insert(spec).second)
      continue;
    order.push_back(spec);
    for (auto it = spec->callees.rbegin(); it != spec->callees.rend(); ++it)
      worklist.push_back(it->first);
  }
  for (const auto &decl : checked.scope->functions()) {
    CheckedModule::Function function{decl.get(), {}};
    for (Specialization *spec : order)
      if (&spec->decl == decl.get())
        function.specializations.push_back(spec);
    checked.functions.push_back(std::move(function));
  }
}

/// The front end recurses as deep as a program nests (expressions, calls
/// between device functions); its limits (maxExprDepth,
/// TypeInference::maxCallDepth) are sized for this stack, which it gets
/// whatever thread calls it and whatever `ulimit -s` says.
constexpr unsigned frontendStackBytes = 64u << 20;

template <typename Result, typename Work> Result onFrontendStack(Work &&work) {
  std::optional<Result> result;
  llvm::thread worker(std::optional<unsigned>(frontendStackBytes), [&] { result.emplace(work()); });
  worker.join();
  return std::move(*result);
}

std::unique_ptr<CheckedModule> checkSourceOnThisStack(llvm::StringRef path, std::string contents,
                                                      const FrontendOptions &options) {
  auto checked = std::make_unique<CheckedModule>();
  checked->sources.setPrefixMap(options.recordedPaths);
  uint32_t file = checked->sources.addFile(path.str(), std::move(contents));
  checked->module = parseModule(checked->sources, file, checked->astContext, checked->diags);

  std::vector<ExternalSignature> external;
  if (options.readPyproject)
    external = readBuildSignatures(path, options.moduleName, checked->sources, checked->diags);
  llvm::Expected<std::vector<ExternalSignature>> flags =
      parseSignatureFlags(options.signatureFlags, checked->sources);
  if (!flags) {
    checked->diags.report(DiagID::err_bad_signature_flag, SourceRange(),
                          {llvm::toString(flags.takeError())});
  } else {
    external.insert(external.end(), flags->begin(), flags->end());
  }

  if (options.moduleStaysPython)
    for (const CalledDecorator &called : options.calledDecorators)
      checked->decoratorCalls.push_back(
          {called.modulePath, called.function,
           checked->sources.addFile("<cuda.jit call of '" + called.function + "'>", called.call),
           called.line});
  checked->loader = std::make_unique<ImportedModuleLoader>(
      *checked, options.hostValues, options.closures, checked->decoratorCalls);
  PythonModuleContext python{options.hostValues, options.closures, checked->decoratorCalls,
                             options.onlyFunctions};
  checked->scope = ModuleScope::build(
      checked->module, checked->sources, checked->astContext, checked->types, checked->diags,
      external, checked->loader.get(), options.moduleStaysPython ? &python : nullptr);
  checked->inference =
      std::make_unique<TypeInference>(*checked->scope, checked->types, checked->diags);
  typeModule(*checked, options);
  // What a Numba module fails on here (host code, kernels without
  // signatures) is what a Kiln import allows.
  auto isModuleFormError = [](const Diagnostic &diagnostic) {
    switch (diagnostic.id) {
    case DiagID::err_statement_at_module_level:
    case DiagID::err_main_block_in_kernel_module:
    case DiagID::err_class_in_kernel_module:
    case DiagID::err_undecorated_function:
    case DiagID::err_module_expression_unsupported:
    case DiagID::err_host_api_at_module_level:
    case DiagID::err_kernel_without_signature:
      return true;
    default:
      return false;
    }
  };
  if (options.suggestKilnImport && !options.moduleStaysPython &&
      llvm::any_of(checked->diags.diagnostics(), isModuleFormError))
    forEachTopLevelImport(checked->module, [&](llvm::StringRef name, SourceRange range) {
      if (isTopLevelModule(name, "numba"))
        checked->diags.report(DiagID::note_import_kiln_instead, range);
    });
  return checked;
}

} // namespace

std::unique_ptr<CheckedModule> checkSource(llvm::StringRef path, std::string contents,
                                           const FrontendOptions &options) {
  return onFrontendStack<std::unique_ptr<CheckedModule>>(
      [&] { return checkSourceOnThisStack(path, std::move(contents), options); });
}

llvm::Expected<ModuleOutline> outlineModule(llvm::StringRef path) {
  llvm::ErrorOr<std::string> source = readSourceFile(path);
  if (!source)
    return llvm::createStringError(source.getError(), "cannot read '%s': %s", path.str().c_str(),
                                   readErrorMessage(source.getError()).c_str());
  SourceManager sources;
  DiagnosticEngine diags(sources);
  ast::AstContext context;
  uint32_t file = sources.addFile(path.str(), std::move(*source));
  ast::Module module =
      onFrontendStack<ast::Module>([&] { return parseModule(sources, file, context, diags); });
  ModuleOutline outline;
  forEachTopLevelImport(module, [&](llvm::StringRef name, SourceRange) {
    outline.importsKiln |= isTopLevelModule(name, "kiln");
    outline.importsNumba |= isTopLevelModule(name, "numba");
  });
  for (const ast::Stmt *stmt : module.body)
    if (const auto *def = llvm::dyn_cast<ast::FunctionDefStmt>(stmt))
      if (!def->decorators.empty())
        outline.decoratedFunctions.push_back(def->name.str());
  return outline;
}

llvm::Expected<std::unique_ptr<CheckedModule>> checkModule(llvm::StringRef path,
                                                           const FrontendOptions &options) {
  llvm::ErrorOr<std::string> source = readSourceFile(path);
  if (!source)
    return llvm::createStringError(source.getError(), "cannot read '%s': %s", path.str().c_str(),
                                   readErrorMessage(source.getError()).c_str());
  return checkSource(path, std::move(*source), options);
}

} // namespace kiln
