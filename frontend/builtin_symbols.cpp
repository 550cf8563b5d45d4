//===- frontend/builtin_symbols.cpp ---------------------------------------===//

#include "frontend/builtin_symbols.h"

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
