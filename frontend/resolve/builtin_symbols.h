//===- frontend/resolve/builtin_symbols.h ----------------------*- C++ -*-===//
//
// The modules, functions, dtypes and constants that kernel modules can name,
// declared in builtins.def. Module-level name resolution maps imports onto
// these symbols; type inference gives each a meaning.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <llvm/ADT/ArrayRef.h>
#include <llvm/ADT/StringMap.h>
#include <llvm/ADT/StringRef.h>

#include <cstdint>
#include <vector>

namespace kiln {

enum class BuiltinId : uint16_t {
#define SYMBOL(ID, NAME, KIND, DETAIL) ID,
#include "frontend/resolve/builtins.def"
};

struct Symbol {
  enum class Kind : uint8_t {
    Module,
    Function,
    DType,
    Constant,
    Dim3,
    Decorator,
    TypeMaker,
    Exception,
    HostOnly,
    Handle
  };

  BuiltinId id;
  Kind kind;
  llvm::StringRef qualifiedName; // "numba.cuda.atomic.add"
  llvm::StringRef detail;        // see builtins.def

  /// The last component of the qualified name ("add").
  llvm::StringRef name() const {
    return qualifiedName.rsplit('.').second.empty() ? qualifiedName
                                                    : qualifiedName.rsplit('.').second;
  }
  /// How users write it: "cuda.atomic.add", "math.sin", "abs".
  std::string displayName() const;
  bool is(BuiltinId other) const { return id == other; }
  /// An exception class the module defines (`class MyError(ValueError)`):
  /// `qualifiedName` is the class's name, `id` that of the builtin it
  /// derives from.
  bool isUserException() const { return kind == Kind::Exception && detail == "user"; }
  /// A NumPy ufunc (np.sin, np.greater, ...): `detail` lists its loops.
  bool isUfunc() const {
    return kind == Kind::Function && qualifiedName.starts_with("numpy.") && !detail.empty();
  }
};

/// Whether `name` is one of Python's builtins (str, list, sum, ...), which
/// kernels cannot use unless Kiln lists it in builtins.def.
bool isPythonBuiltinName(llvm::StringRef name);

class BuiltinSymbols {
public:
  static const BuiltinSymbols &get();

  /// A symbol by qualified name ("numpy.float32"), or null.
  const Symbol *lookup(llvm::StringRef qualifiedName) const;
  /// A member of a module symbol, or a method of a handle; null if none.
  const Symbol *member(const Symbol &module, llvm::StringRef name) const;
  /// A Python builtin ("abs", "range", "ValueError"), or null.
  const Symbol *pythonBuiltin(llvm::StringRef name) const;
  const Symbol &symbol(BuiltinId id) const { return symbols[static_cast<size_t>(id)]; }
  /// Every symbol, in builtins.def's order.
  llvm::ArrayRef<Symbol> all() const { return symbols; }

private:
  BuiltinSymbols();
  std::vector<Symbol> symbols;
  llvm::StringMap<const Symbol *> byName;
};

} // namespace kiln
