//===- tests/module/fuzz_module_check.cpp - libFuzzer on module checks ----===//
//
// Each input is the manifest of a bundle made around it with every checksum
// right (so that the fuzzer reaches the checks of the manifest's contents),
// then the same bytes taken as a whole bundle (the header's checks). The
// seed corpus, tests/module/fuzz_seeds, holds a sound manifest.
//
//===----------------------------------------------------------------------===//

#include "tests/module/bundle_maker.h"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string input(reinterpret_cast<const char *>(data), size);
  const std::string payload = "0123456789abcdef0123456789abcdef01234567";
  std::string bundle = kiln::module::testing::makeBundle(input, payload);
  (void)kiln::module::checkModule(kiln::module::testing::factsOf(bundle), bundle);

  kiln::module::ImageFacts facts = kiln::module::testing::factsOf(bundle);
  facts.bundleSize = size;
  if (size >= sizeof(KilnBundleHeader))
    std::memcpy(&facts.manifestChecksum, data + offsetof(KilnBundleHeader, manifestChecksum), 8);
  (void)kiln::module::checkModule(facts, input);
  return 0;
}
