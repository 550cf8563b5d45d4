//===- frontend/resolve/module_scope.h -------------------------*- C++ -*-===//
//
// [Note: module scope]
// A kernel module is executed by Python at import; Kiln instead reads its
// top-level statements and records what each name means:
//
//   from numba import cuda, float32      -> builtin symbols
//   TILE = 32                            -> constant 32
//   SQRT_2PI = np.float32((2*math.pi)**0.5) -> constant np.float32(2.5066...)
//   @cuda.jit("void(float32[:])")        -> kernel with one signature
//   def scale(x): ...
//
// Decorator arguments and signatures are evaluated here, so that everything
// after this stage sees kernels with concrete signatures and options. In a
// kernel module, any other top-level statement gets a diagnostic: the built
// extension module replaces the source module, so code that would only run
// at import time would silently disappear. In a module that stays Python
// (it imports kiln), such statements are host code's: the names they bind
// are what the running module's host values say.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/parse/ast.h"
#include "frontend/resolve/builtin_symbols.h"
#include "frontend/resolve/host_values.h"
#include "frontend/source/diagnostics.h"
#include "ir/constant_value.h"
#include "ir/jit_options.h"
#include "ir/types.h"

#include <llvm/ADT/StringMap.h>

#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kiln {

/// A function signature from a decorator or from the build configuration.
struct Signature {
  /// Null when the signature leaves the return type to inference.
  const Type *returnType = nullptr;
  std::vector<const Type *> args;
  /// Where it was written: a decorator argument, a pyproject.toml entry or
  /// the command line.
  SourceRange range;

  /// "void(float32[:], int64)" in Numba's spelling of types.
  std::string str() const;
};

class ModuleScope;

/// A function the module defines with a Kiln-compatible decorator.
struct FunctionDecl {
  enum class Kind : uint8_t {
    Kernel,    // @cuda.jit
    Device,    // @cuda.jit(device=True), or @jit / @njit called from kernels
    Ufunc,     // @vectorize([...], target='cuda')
    Reduction, // @cuda.reduce
    External,  // name = cuda.declare_device('symbol', 'signature')
  };

  std::string name;
  Kind kind;
  /// The module that defines it, whose names its body sees.
  const ModuleScope *scope = nullptr;
  const ast::FunctionDefStmt *def = nullptr; // null for External
  SourceRange range;                         // the def's name, or the declaration
  JitOptions options;
  std::vector<Signature> signatures;
  /// The default value of each parameter, for device functions; nothing for
  /// a parameter without one.
  std::vector<std::optional<ConstantValue>> defaults;
  /// Whether the last parameter is `*args`: the arguments after the others,
  /// as a tuple (device functions only, as in Numba).
  bool variadic = false;
  /// For External: the symbol name in the linked code, and whether it
  /// syncs the grid (declared with use_cooperative=True), which makes the
  /// kernels that call it cooperative.
  std::string externalSymbol;
  bool externalCooperative = false;
  /// Whether it returns its value as C does (abi="c"), not through a
  /// pointer with an int status (Numba's ABI).
  bool externalCAbi = false;
  /// For the device function a kernel is where device code calls it (Numba
  /// compiles a @cuda.jit kernel so, its signatures aside): that kernel.
  const FunctionDecl *kernelCalled = nullptr;
  /// For a function defined inside another (`def inner(x): ...` in a
  /// kernel): the enclosing function's variables it reads, which every call
  /// passes after the arguments, in this order (closure conversion). A call
  /// where the function is defined passes their current values, as Numba,
  /// which inlines such calls, reads them; elsewhere (the function passed
  /// as an argument) they are the constants it captured.
  std::vector<std::string> captures;
  /// The functions defined directly in its body.
  std::vector<const FunctionDecl *> nested;

  llvm::StringRef kindName() const;
};

/// A module-level `enum.Enum` or `enum.IntEnum` class whose members are
/// constants: kernels read `Color.RED` (an IntEnum member takes part in
/// integer arithmetic, as Numba's IntEnumMember does) and `Color.RED.value`.
struct EnumDefinition {
  std::string name;
  bool isIntEnum = false;
  /// In definition order; aliases (a second name for a value) included.
  std::vector<std::pair<std::string, ConstantValue>> members;

  const ConstantValue *member(llvm::StringRef memberName) const;
};

/// A NumPy array host code computed at import, frozen into the kernels that
/// read it as a read-only contiguous constant array (as Numba freezes global
/// arrays).
struct ConstantArray {
  const Type *elementType;
  std::vector<uint64_t> shape;
  /// C, or F for an array NumPy holds in Fortran order, as Numba types it.
  ArrayLayout layout;
  /// The elements in that order, in the machine's byte order.
  std::shared_ptr<const std::string> data;
  /// The BLAKE3 hash of `data` (hex), which semantic hashes name it by.
  std::string digest;
  /// A device array the running process holds (captured by a kernel
  /// compiled in that process): its data is at `address`, with these byte
  /// strides, and is not copied (`data` is null), as Numba captures device
  /// arrays by reference; kernels may write it.
  std::optional<uint64_t> address;
  std::vector<int64_t> strides;
};

/// A Python function given jitted implementations with
/// numba.extending.overload (see HostValue::Kind::Overload): those resolved
/// so far, by argument types, and the host value source to ask for others.
struct OverloadSet {
  std::string name;
  std::string file;
  std::string key;
  std::map<std::string, const FunctionDecl *> implementations;
  HostValueSource *source = nullptr;
};

/// What a module-level name, or a module-level expression, denotes.
class ModuleValue {
public:
  enum class Kind : uint8_t {
    Constant,  // a Python or NumPy value
    Symbol,    // a builtin module, function or dtype
    Function,  // a decorated function of this module
    Type,      // a Numba type, as written in signatures: float32[:, ::1]
    Signature, // void(float32[:]), or a tuple of argument types
    List,      // [a, b]: signature lists, link lists
    Decorator, // cuda.jit(...), vectorize([...]): a decorator with its arguments
    Enum,      // class Color(IntEnum): ...
    Array,     // a NumPy array host code computed at import
    Module,    // a Python source module of the package: `from . import config`
    Overload,  // a Python function with numba.extending.overload implementations
    HostValue, // a name host code binds in a module that stays Python
               // (hostDescription says what; host values may say more)
    Invalid,   // a name whose definition failed (and was reported), or an
               // import Kiln ignored (ignoredImport names it)
  };

  static ModuleValue constant(ConstantValue value);
  static ModuleValue symbol(const Symbol *symbol);
  static ModuleValue function(const FunctionDecl *function);
  static ModuleValue type(const Type *type);
  static ModuleValue signature(Signature signature);
  static ModuleValue list(std::vector<ModuleValue> items);
  static ModuleValue decorator(const Symbol *decorator, const ast::CallExpr *call);
  static ModuleValue enumeration(std::shared_ptr<const EnumDefinition> definition);
  static ModuleValue invalid(std::string importedModule = "");
  static ModuleValue array(std::shared_ptr<const ConstantArray> array);
  static ModuleValue overload(std::shared_ptr<const OverloadSet> overloads);
  /// The source module `name` (as the importer spelled it: "..config",
  /// "pkg.sub") whose scope is `scope`; null for a package whose
  /// __init__.py was not read, which then has only the submodules bound.
  static ModuleValue sourceModule(std::string name, const ModuleScope *scope);
  /// What host code binds: "a function", "a class".
  static ModuleValue hostValue(std::string description);
  /// A value host code computes at import, bound to `name` in the module
  /// at `file` (canonical path): host values may say what it is.
  static ModuleValue computedAtImport(std::string file, std::string name,
                                      std::string description = "a value computed at import");

  Kind kind() const { return valueKind; }
  const ConstantValue &constantValue() const { return *constantPart; }
  const Symbol *symbolValue() const { return symbolPart; }
  const FunctionDecl *functionValue() const { return functionPart; }
  const Type *typeValue() const { return typePart; }
  const Signature &signatureValue() const { return *signaturePart; }
  const std::vector<ModuleValue> &items() const { return listPart; }
  const ast::CallExpr *decoratorCall() const { return callPart; }
  const EnumDefinition &enumValue() const { return *enumPart; }
  const ConstantArray &arrayValue() const { return *arrayPart; }
  const OverloadSet &overloadValue() const { return *overloadPart; }
  /// For a value computed at import: the module file and name that bind it.
  bool isComputedAtImport() const { return !hostFilePart.empty(); }
  const std::string &hostFile() const { return hostFilePart; }
  const std::string &hostName() const { return hostNamePart; }
  /// For an Invalid value from an ignored import: the module's name.
  const std::string &ignoredImport() const { return importPart; }
  /// For a HostValue: what it is ("a function", "a class").
  const std::string &hostDescription() const { return hostPart; }

  /// For a Module: its name as imported, and the attribute `name` of it (a
  /// submodule `import pkg.sub` bound, else what the module binds `name`
  /// to); null if it has no such attribute.
  const std::string &moduleName() const { return importPart; }
  const ModuleValue *member(llvm::StringRef name) const;
  /// This module with `submodule` bound as its attribute `name`, as
  /// `import pkg.sub` makes `pkg.sub` an attribute of `pkg`.
  ModuleValue withSubmodule(llvm::StringRef name, ModuleValue submodule) const;

  /// What it is, for diagnostics: "constant 3", "function 'abs'", "type float32".
  std::string describe() const;

  /// The expression that first produced this value. Signature strings are
  /// parsed in place from their literal, so that diagnostics point into it.
  const ast::Expr *origin() const { return originExpr; }
  ModuleValue &withOrigin(const ast::Expr *expr) {
    if (!originExpr)
      originExpr = expr;
    return *this;
  }

private:
  explicit ModuleValue(Kind kind) : valueKind(kind) {}
  Kind valueKind;
  const ast::Expr *originExpr = nullptr;
  std::shared_ptr<const ConstantValue> constantPart;
  const Symbol *symbolPart = nullptr;
  const FunctionDecl *functionPart = nullptr;
  const Type *typePart = nullptr;
  std::shared_ptr<const Signature> signaturePart;
  std::vector<ModuleValue> listPart;
  const ast::CallExpr *callPart = nullptr;
  std::shared_ptr<const EnumDefinition> enumPart;
  std::shared_ptr<const ConstantArray> arrayPart;
  std::shared_ptr<const OverloadSet> overloadPart;
  std::string importPart;
  std::string hostPart;
  std::string hostFilePart;
  std::string hostNamePart;
  const ModuleScope *modulePart = nullptr;
  std::shared_ptr<const std::map<std::string, ModuleValue>> submodulesPart;
};

/// Signatures supplied outside the source: [tool.kiln.signatures] in
/// pyproject.toml and `--signature name=sig` on the command line. Each text
/// is parsed like a Numba signature string.
struct ExternalSignature {
  std::string function;
  uint32_t file;  // a SourceManager file holding the signature text
  uint32_t begin; // its byte range in that file
  uint32_t end;
  /// Where the setting came from, for the "how to add a signature" hint.
  std::string origin;
};

/// A decorated function defined inside another function, compiled as a
/// function of its own: a kernel factory's closure, frozen with the values
/// its free variables have (host values of the module named
/// "<name>.<variable>"), as Numba freezes them.
struct ClosureRequest {
  /// The canonical path of the module that defines it: the module built, or
  /// a source module it reads (a factory of another module made it).
  std::string modulePath;
  /// What the build calls it: unique in the module, not a module global.
  std::string name;
  /// The line of its first decorator (Python's co_firstlineno).
  uint32_t line = 0;
  std::vector<std::string> freeVariables;
  /// The function it is defined in, for messages: "make_scaler".
  std::string enclosing;
};

/// A function of a module that stays Python that host code makes a kernel
/// or device function by calling Kiln's decorator on it rather than by
/// decorating it (`add = cuda.jit(device=True)(plain_add)`, as Numba users
/// write): compiled as if that call decorated it.
struct CalledDecorator {
  /// The canonical path of the module that defines the function.
  std::string modulePath;
  /// Its name there (a closure's: the name its ClosureRequest gives).
  std::string function;
  /// The call: `jit("void(float32[:])", fastmath=True)`, cuda.jit's
  /// arguments as host code passed them.
  std::string call;
  /// A top-level function jitted again in another way is compiled again
  /// under a name of its own: the line its definition starts on; else 0.
  uint32_t line = 0;
};

/// A CalledDecorator whose call is a file of the SourceManager.
struct DecoratorCall {
  /// The canonical path of the module that defines the function.
  std::string modulePath;
  /// Its name there; a closure's, the name the build calls it.
  std::string function;
  uint32_t file = 0;
  /// See CalledDecorator::line.
  uint32_t line = 0;
};

/// How a module that stays Python is read: what host code computed and
/// made of its functions, and which of them this build compiles.
struct PythonModuleContext {
  /// Where module globals host code computes (and what closures close
  /// over) come from; null: kernels cannot read them.
  HostValueSource *hostValues = nullptr;
  llvm::ArrayRef<ClosureRequest> closures;
  llvm::ArrayRef<DecoratorCall> decoratorCalls;
  /// The kernels, ufuncs and reductions to compile (the device functions
  /// they call come with them); empty: every one. The others are left to
  /// host code, so that a kernel that does not compile fails only the
  /// builds that ask for it, as a Numba kernel fails only its own compile.
  llvm::ArrayRef<std::string> onlyFunctions;
};

/// Finds other kernel modules by dotted name, for imports: Kiln's prelude
/// modules (numba.cuda.random).
class ModuleLoader {
public:
  virtual ~ModuleLoader() = default;
  /// The scope of `moduleName`, or null if there is no such kernel module.
  virtual const ModuleScope *load(llvm::StringRef moduleName) = 0;
  /// The scope of the Python source module that the module at
  /// `importerPath` names in `from <level dots><moduleName> import ...`: a
  /// sibling in its package, or beside it when it is in none; null if the
  /// name is no such module (then it is host code's, as `numpy` is).
  virtual const ModuleScope *loadSource(llvm::StringRef importerPath, unsigned level,
                                        llvm::StringRef moduleName) = 0;
  /// The scope of the Python source module at `path`; null if it cannot be
  /// read.
  virtual const ModuleScope *loadFile(llvm::StringRef path) = 0;
};

class ModuleScope {
public:
  /// Reads the top-level statements of `module`. Reports diagnostics for
  /// anything a kernel module cannot contain and keeps going. Given
  /// `python`, the module stays Python (see
  /// FrontendOptions::moduleStaysPython).
  static std::unique_ptr<ModuleScope> build(const ast::Module &module, SourceManager &sources,
                                            ast::AstContext &astContext, TypeContext &types,
                                            DiagnosticEngine &diags,
                                            llvm::ArrayRef<ExternalSignature> externalSignatures,
                                            ModuleLoader *loader,
                                            const PythonModuleContext *python = nullptr);

  /// A function defined by the kernel module `moduleName` (loaded on first
  /// use), as in `cuda.random.xoroshiro128p_next`; null if there is none.
  const FunctionDecl *importedFunction(llvm::StringRef moduleName, llvm::StringRef name) const;
  /// An enum class defined by the kernel module `moduleName`, as in
  /// numba.cuda._internal.cuda_fp8's saturation_t; null if there is none.
  const ModuleValue *importedEnum(llvm::StringRef moduleName, llvm::StringRef name) const;
  /// The method `method` numba.extending.overload_method gives a receiver
  /// known by `receiverNames` (its type's name first, then its classes'
  /// from the most specific); null if host values give none.
  const OverloadSet *overloadedMethod(llvm::ArrayRef<std::string> receiverNames,
                                      llvm::StringRef method) const;

  /// The module-level binding of `name`, or, failing that, the Python builtin
  /// of that name; null if neither exists. A value host code computes at
  /// import is what the host values say it is, where they say. In a
  /// closure's scope, its free variables come first.
  const ModuleValue *lookup(llvm::StringRef name) const;
  /// The module's attribute `name`, as another module reads it
  /// (`config.THRESHOLD`): what lookup() gives, Python's builtins aside.
  const ModuleValue *member(llvm::StringRef name) const;
  /// What a dotted path of names denotes: `config.THRESHOLD` is the
  /// attribute THRESHOLD of the source module this module binds `config`
  /// to; null if a part is missing or a part before the last is no module.
  const ModuleValue *lookupPath(llvm::StringRef dottedPath) const;
  /// Where `name` was bound at module level (invalid for Python builtins).
  SourceRange bindingRange(llvm::StringRef name) const;

  /// Every module-level binding, by name, in no particular order.
  const llvm::StringMap<ModuleValue> &moduleBindings() const { return bindings; }

  /// Decorated functions, in source order.
  llvm::ArrayRef<std::unique_ptr<FunctionDecl>> functions() const { return decls; }
  const FunctionDecl *function(llvm::StringRef name) const;

  uint32_t file() const { return fileId; }

private:
  friend class ModuleScopeBuilder;
  const ModuleValue *hostValueOf(const ModuleValue &computed) const;
  /// What the host value of `name` in the module at `file` is to kernels;
  /// nothing if they cannot use it.
  std::optional<ModuleValue> moduleValueOf(const HostValue &value, llvm::StringRef file,
                                           llvm::StringRef name) const;
  const FunctionDecl *preludeFunction(llvm::StringRef qualifiedName) const;
  const FunctionDecl *declaredDeviceFunction(const HostValue &value, llvm::StringRef name) const;
  /// The function `name` of the module at `file` (a canonical path): this
  /// module, or a source module the loader reads.
  const FunctionDecl *functionAt(llvm::StringRef file, llvm::StringRef name) const;

  uint32_t fileId = 0;
  /// In a module that stays Python: its file's canonical path.
  std::string canonicalPath;
  ModuleLoader *loader = nullptr;
  /// For a closure's scope (its free variables): the module's.
  const ModuleScope *parent = nullptr;
  std::vector<std::unique_ptr<ModuleScope>> closureScopes;
  HostValueSource *hostValues = nullptr;
  TypeContext *types = nullptr;
  /// What evaluating a host value's text takes (a declared device
  /// function's signature string), while the module is typed.
  struct Evaluation {
    SourceManager &sources;
    ast::AstContext &astContext;
    DiagnosticEngine &diags;
  };
  std::optional<Evaluation> evaluation;
  /// The functions host values declared (declaredDeviceFunction).
  mutable std::vector<std::unique_ptr<FunctionDecl>> hostDecls;
  /// Values computed at import that host values have given, by file and name.
  mutable std::map<std::pair<std::string, std::string>, std::unique_ptr<ModuleValue>> fromHost;
  /// Overloaded methods host values have given, by "receiver.method".
  mutable std::map<std::string, std::unique_ptr<ModuleValue>> methodsFromHost;
  llvm::StringMap<ModuleValue> bindings;
  llvm::StringMap<SourceRange> bindingRanges;
  llvm::StringMap<ModuleValue> pythonBuiltins;
  std::vector<std::unique_ptr<FunctionDecl>> decls;
  /// The functions defined inside them (FunctionDecl::nested).
  std::vector<std::unique_ptr<FunctionDecl>> nestedDecls;
  /// The exception classes the module defines, and their names.
  std::deque<Symbol> userExceptions;
  std::deque<std::string> userExceptionNames;
};

} // namespace kiln
