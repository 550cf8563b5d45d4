//===- tests/module/bundle_maker.h - Bundles for the module check tests ---===//
//
// A bundle as kiln build writes one (module/format.h): header, manifest,
// 16-byte aligned payload, each checksummed; and the image facts that go
// with it.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "module/manifest_format.h"
#include "module/module_check.h"

#include <cstring>
#include <string>

namespace kiln::module::testing {

/// One kernel `scale(array(float32, 1d, C), float64)` with a 40-byte fat
/// binary, as the manifest of module `demo` lists it.
inline std::string manifestWithFatbin(const std::string &fatbin) {
  return R"json({"format": 2, "module": "demo", "kiln_version": "0.1.0", "constants": [{"name": "N", "type": "int64", "value": 3}],
  "specializations": [{"name": "scale", "kind": "kernel", "entry": "_kiln_4demo5scale_0",
    "args": ["array(float32, 1d, C)", "float64"], "arg_names": ["a", "factor"],
    "params": [{"argument": 0, "role": "data", "dimension": 0, "path": [], "type": "ptr"},
               {"argument": 0, "role": "shape", "dimension": 0, "path": [], "type": "i64"},
               {"argument": 0, "role": "stride", "dimension": 0, "path": [], "type": "i64"},
               {"argument": 1, "role": "value", "type": "f64"}],
    "static_shared_bytes": 0, "local_bytes": 0, "raises": false, "index_checks": "checked",
    "cubins": [80], "ptx": [80],
    "fatbin": {"offset": 0, "size": )json" +
         std::to_string(fatbin.size()) + R"json(, "checksum": ")json" +
         checksumText(kilnChecksum(fatbin.data(), fatbin.size())) + R"json("}}]})json";
}

inline std::string makeBundle(const std::string &manifest, const std::string &payload) {
  KilnBundleHeader header{};
  std::memcpy(header.magic, KILN_BUNDLE_MAGIC, sizeof header.magic);
  header.formatVersion = KILN_MODULE_FORMAT_VERSION;
  header.headerSize = sizeof header;
  header.manifestOffset = sizeof header;
  header.manifestSize = manifest.size();
  header.manifestChecksum = kilnChecksum(manifest.data(), manifest.size());
  header.payloadOffset = (sizeof header + manifest.size() + 15) / 16 * 16;
  header.payloadSize = payload.size();
  std::string bundle(header.payloadOffset + payload.size(), '\0');
  std::memcpy(bundle.data(), &header, sizeof header);
  std::memcpy(bundle.data() + sizeof header, manifest.data(), manifest.size());
  std::memcpy(bundle.data() + header.payloadOffset, payload.data(), payload.size());
  return bundle;
}

inline ImageFacts factsOf(const std::string &bundle, uint32_t specializations = 1) {
  KilnBundleHeader header;
  std::memcpy(&header, bundle.data(), sizeof header);
  ImageFacts facts;
  facts.formatVersion = KILN_MODULE_FORMAT_VERSION;
  facts.cpuAbiVersion = KILN_CPU_ABI_VERSION;
  facts.specializationCount = specializations;
  facts.bundleSize = bundle.size();
  facts.manifestChecksum = header.manifestChecksum;
  facts.moduleName = "demo";
  return facts;
}

} // namespace kiln::module::testing
