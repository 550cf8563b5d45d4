//===- tests/frontend/tools/dump_ssa.cpp - Print untyped SSA --------------===//
//
// kiln_dump_ssa FILE: builds the module scope and the untyped SSA form of
// every decorated function, printing the SSA, or the diagnostics.
//
//===----------------------------------------------------------------------===//

#include "frontend/parse/parser.h"
#include "frontend/ssa/ssa.h"

#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/raw_ostream.h>

int main(int argc, char **argv) {
  if (argc != 2) {
    llvm::errs() << "usage: kiln_dump_ssa FILE\n";
    return 2;
  }
  auto buffer = llvm::MemoryBuffer::getFile(argv[1]);
  if (!buffer) {
    llvm::errs() << "cannot read " << argv[1] << '\n';
    return 2;
  }
  kiln::SourceManager sources;
  uint32_t file = sources.addFile(argv[1], (*buffer)->getBuffer().str());
  kiln::DiagnosticEngine diags(sources);
  kiln::ast::AstContext context;
  kiln::TypeContext types;
  kiln::ast::Module module = kiln::parseModule(sources, file, context, diags);
  auto scope = kiln::ModuleScope::build(module, sources, context, types, diags, {}, nullptr);
  for (const auto &decl : scope->functions()) {
    llvm::outs() << "; " << decl->kindName() << " " << decl->name;
    for (const auto &signature : decl->signatures)
      llvm::outs() << " [" << signature.str() << "]";
    llvm::outs() << '\n';
    if (!decl->def)
      continue;
    if (auto fn = kiln::ssa::buildSSA(*decl, *scope, types, diags))
      fn->print(llvm::outs());
  }
  diags.renderText(llvm::errs(), false);
  return diags.hasErrors() ? 1 : 0;
}
