//===- tests/frontend/fuzz_frontend.cpp - libFuzzer entry point -----------===//
//
// Any bytes are a kernel module to check: the front end must diagnose or
// accept them, never crash, leak, hang, or do undefined behaviour.
//
//===----------------------------------------------------------------------===//

#include "frontend/frontend.h"

#include <llvm/Support/raw_ostream.h>

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  kiln::FrontendOptions options;
  options.readPyproject = false;
  std::unique_ptr<kiln::CheckedModule> checked = kiln::checkSource(
      "fuzz.py", std::string(reinterpret_cast<const char *>(data), size), options);
  std::string rendered;
  llvm::raw_string_ostream os(rendered);
  checked->diags.renderText(os, false);
  return 0;
}
