//===- frontend/builtin_symbols.cpp ---------------------------------------===//

#include "frontend/builtin_symbols.h"

#include <llvm/ADT/STLExtras.h>

namespace kiln {

std::string Symbol::displayName() const {
  llvm::StringRef shown = qualifiedName;
  if (shown.consume_front("builtins."))
    return shown.str();
  if (shown.consume_front("numba.cuda."))
    return "cuda." + shown.str();
  if (shown.consume_front("numpy."))
    return "np." + shown.str();
  return shown.str();
}

bool isPythonBuiltinName(llvm::StringRef name) {
  static const llvm::StringRef names[] = {
      "abs", "aiter", "all", "anext", "any", "ascii", "bin", "bool", "breakpoint", "bytearray",
      "bytes", "callable", "chr", "classmethod", "compile", "complex", "delattr", "dict", "dir",
      "divmod", "enumerate", "eval", "exec", "filter", "float", "format", "frozenset", "getattr",
      "globals", "hasattr", "hash", "help", "hex", "id", "input", "int", "isinstance",
      "issubclass", "iter", "len", "list", "locals", "map", "max", "memoryview", "min", "next",
      "object", "oct", "open", "ord", "pow", "print", "property", "range", "repr", "reversed",
      "round", "set", "setattr", "slice", "sorted", "staticmethod", "str", "sum", "super", "tuple",
      "type", "vars", "zip", "__import__", "NotImplemented", "Ellipsis"};
  return llvm::is_contained(names, name);
}

BuiltinSymbols::BuiltinSymbols() {
  symbols = {
#define SYMBOL(ID, NAME, KIND, DETAIL) {BuiltinId::ID, Symbol::Kind::KIND, NAME, DETAIL},
#include "frontend/builtins.def"
  };
  for (const Symbol &symbol : symbols)
    byName[symbol.qualifiedName] = &symbol;
}

const BuiltinSymbols &BuiltinSymbols::get() {
  static const BuiltinSymbols instance;
  return instance;
}

const Symbol *BuiltinSymbols::lookup(llvm::StringRef qualifiedName) const {
  return byName.lookup(qualifiedName);
}

const Symbol *BuiltinSymbols::member(const Symbol &module, llvm::StringRef name) const {
  if (module.kind != Symbol::Kind::Module)
    return nullptr;
  return lookup((module.qualifiedName.str() + ".").append(name.str()));
}

const Symbol *BuiltinSymbols::pythonBuiltin(llvm::StringRef name) const {
  return lookup("builtins." + name.str());
}

} // namespace kiln
