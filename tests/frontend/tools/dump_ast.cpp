//===- tests/frontend/tools/dump_ast.cpp - Print a file's AST -------------===//
//
// kiln_dump_ast FILE...: prints each file's AST in the S-expression form of
// frontend/parse/ast_printer.h, preceded by "== FILE". A file that does not parse
// prints its diagnostics instead; the exit status is 1 if any file failed.
//
//===----------------------------------------------------------------------===//

#include "frontend/parse/ast_printer.h"
#include "frontend/parse/parser.h"

#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/raw_ostream.h>

int main(int argc, char **argv) {
  int status = 0;
  for (int i = 1; i < argc; ++i) {
    auto buffer = llvm::MemoryBuffer::getFile(argv[i]);
    llvm::outs() << "== " << argv[i] << '\n';
    if (!buffer) {
      llvm::outs() << "error: cannot read: " << buffer.getError().message() << '\n';
      status = 1;
      continue;
    }
    kiln::SourceManager sources;
    uint32_t file = sources.addFile(argv[i], (*buffer)->getBuffer().str());
    kiln::DiagnosticEngine diags(sources);
    kiln::ast::AstContext context;
    kiln::ast::Module module = kiln::parseModule(sources, file, context, diags);
    if (diags.hasErrors()) {
      diags.renderText(llvm::outs(), false);
      status = 1;
      continue;
    }
    kiln::printModule(module, llvm::outs());
  }
  return status;
}
