//===- tests/frontend/tools/dump_typed_ir.cpp - Print the typed IR --------===//
//
// kiln_dump_typed_ir FILE: checks a kernel module and prints its typed IR,
// or its diagnostics.
//
//===----------------------------------------------------------------------===//

#include "frontend/emit/emit_typed_ir.h"

#include <llvm/Support/Path.h>
#include <llvm/Support/raw_ostream.h>

int main(int argc, char **argv) {
  if (argc != 2) {
    llvm::errs() << "usage: kiln_dump_typed_ir FILE\n";
    return 2;
  }
  auto checked = kiln::checkModule(argv[1], kiln::FrontendOptions());
  if (!checked) {
    llvm::errs() << llvm::toString(checked.takeError()) << '\n';
    return 2;
  }
  kiln::CheckedModule &module = **checked;
  std::unique_ptr<kiln::ir::Module> ir;
  if (!module.hasErrors())
    ir = kiln::emitTypedIR(module, llvm::sys::path::stem(argv[1]));
  module.diags.renderText(llvm::errs(), false);
  if (!ir)
    return 1;
  ir->print(llvm::outs());
  return 0;
}
