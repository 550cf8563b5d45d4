//===- frontend/resolve/builtin_symbols.cpp ---------------------------------------===//

#include "frontend/resolve/builtin_symbols.h"

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
      "globals", "hasattr", "hash", "help", "hex", "id", "input", "int", "isinstance", "issubclass",
      "iter", "len", "list", "locals", "map", "max", "memoryview", "min", "next", "object", "oct",
      "open", "ord", "pow", "print", "property", "range", "repr", "reversed", "round", "set",
      "setattr", "slice", "sorted", "staticmethod", "str", "sum", "super", "tuple", "type", "vars",
      "zip", "__import__", "NotImplemented", "Ellipsis", "copyright", "credits", "license", "exit",
      "quit",
      // Exceptions and warnings other than those of builtins.def.
      "AttributeError", "BaseException", "BaseExceptionGroup", "BlockingIOError", "BrokenPipeError",
      "BufferError", "BytesWarning", "ChildProcessError", "ConnectionAbortedError",
      "ConnectionError", "ConnectionRefusedError", "ConnectionResetError", "DeprecationWarning",
      "EOFError", "EncodingWarning", "EnvironmentError", "ExceptionGroup", "FileExistsError",
      "FileNotFoundError", "FloatingPointError", "FutureWarning", "GeneratorExit", "IOError",
      "ImportError", "ImportWarning", "IndentationError", "InterruptedError", "IsADirectoryError",
      "KeyboardInterrupt", "LookupError", "MemoryError", "ModuleNotFoundError", "NameError",
      "NotADirectoryError", "OSError", "PendingDeprecationWarning", "PermissionError",
      "ProcessLookupError", "RecursionError", "ReferenceError", "ResourceWarning", "RuntimeWarning",
      "StopAsyncIteration", "StopIteration", "SyntaxError", "SyntaxWarning", "SystemError",
      "SystemExit", "TabError", "TimeoutError", "UnboundLocalError", "UnicodeDecodeError",
      "UnicodeEncodeError", "UnicodeError", "UnicodeTranslateError", "UnicodeWarning",
      "UserWarning", "Warning"};
  return llvm::is_contained(names, name);
}

BuiltinSymbols::BuiltinSymbols() {
  symbols = {
#define SYMBOL(ID, NAME, KIND, DETAIL) {BuiltinId::ID, Symbol::Kind::KIND, NAME, DETAIL},
#include "frontend/resolve/builtins.def"
  };
  for (const Symbol &symbol : symbols)
    byName[symbol.qualifiedName] = &symbol;
}

const BuiltinSymbols &BuiltinSymbols::get() {
  static const BuiltinSymbols instance;
  return instance;
}

const Symbol *BuiltinSymbols::lookup(llvm::StringRef qualifiedName) const {
  if (const Symbol *found = byName.lookup(qualifiedName))
    return found;
  // Moving from Numba is one line, `from numba import cuda` becoming
  // `from kiln import cuda`: the kiln package offers Numba's names. So does
  // numba-cuda's successor, `from numba_cuda_mlir import cuda`, as far as
  // its API is numba.cuda's.
  for (llvm::StringRef alias : {"kiln", "numba_cuda_mlir"}) {
    llvm::StringRef rest = qualifiedName;
    if (rest.consume_front(alias) && (rest.empty() || rest.starts_with(".")))
      return byName.lookup("numba" + rest.str());
  }
  return nullptr;
}

const Symbol *BuiltinSymbols::member(const Symbol &module, llvm::StringRef name) const {
  if (module.kind != Symbol::Kind::Module && module.kind != Symbol::Kind::Handle)
    return nullptr;
  // numba.core.types is the module numba.types re-exports: same members.
  if (module.is(BuiltinId::NumbaCoreTypesModule))
    return member(symbol(BuiltinId::NumbaTypesModule), name);
  return lookup((module.qualifiedName.str() + ".").append(name.str()));
}

const Symbol *BuiltinSymbols::pythonBuiltin(llvm::StringRef name) const {
  return lookup("builtins." + name.str());
}

} // namespace kiln
