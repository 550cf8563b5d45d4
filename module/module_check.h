//===- module/module_check.h - Whether a built module is sound --*- C++ -*-===//
//
// [Note: one check of built modules]
// The runtime checks a built module before it imports it (and, per kernel,
// at the kernel's first use: CheckScope below), and `kiln inspect` and
// `kiln audit` before they describe one; all three call checkModule() and
// the per-kernel checks it is made of, so that a module the driver passes
// is one the runtime imports and runs, and a module the runtime refuses is
// one the driver calls damaged or incompatible, for the same reason, in the
// same words.
//
// checkModule() trusts nothing of the bundle: the header's offsets, the
// manifest's checksum (and that the bundle belongs to the code: the image's
// manifest checksum), the manifest as bounded JSON (manifest_json.h), every
// key the runtime reads with the type it reads it as, every fat binary
// against its checksum, and each specialization's parameter layout against
// the one its argument types imply (docs/abi.md), so that a forged
// manifest cannot make the runtime pack a launch the code does not expect.
//
// Plain C++: no LLVM, no Python, no exceptions.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "module/format.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::module {

/// What the code of a module says of itself (its KilnModuleImage).
struct ImageFacts {
  uint32_t formatVersion = 0;
  uint32_t cpuAbiVersion = 0;
  uint32_t specializationCount = 0;
  uint64_t bundleSize = 0;
  uint64_t manifestChecksum = 0;
  /// The module's dotted name; empty when unknown (the driver reads files,
  /// whose image names it through a relocation).
  std::string moduleName;
};

enum class ModuleVerdict : uint8_t { Sound, Incompatible, Damaged };

struct ModuleCheck {
  ModuleVerdict verdict = ModuleVerdict::Sound;
  /// What is wrong, as a phrase completing "module 'x' is damaged: ...",
  /// or for Incompatible "module 'x' was built by an incompatible Kiln:
  /// ..." ("module format 3, this Kiln reads format 2").
  std::string problem;
  /// What the manifest says of the module, when it could be read.
  std::string moduleName;
  std::string kilnVersion;
  std::optional<int64_t> manifestFormat;

  bool sound() const { return verdict == ModuleVerdict::Sound; }
};

/// What checkModule() checks at once. The runtime defers what grows with
/// the number of kernels, so that importing a module costs the same with 1
/// or 500 kernels: at import it checks the bundle, the manifest's checksum,
/// the manifest as bounded JSON, its outline (module, versions, one entry
/// per specialization with its name and kind, the constants); each
/// specialization's entry is checked as `kiln audit` checks it when its
/// kernel is first used (checkSpecialization()), and its fat binary against
/// its checksum just before a GPU first loads it (checkFatBinary()), so the
/// CPU engine never reads one. `kiln inspect` and `kiln audit` check
/// everything at once: they refuse every module the runtime refuses at
/// import or at a kernel's first use, for the same reason, in the same
/// words.
enum class CheckScope : uint8_t { Everything, DeferPerKernel };

/// Where the parts of a sound manifest lie in its text, so that the runtime
/// parses each specialization's entry only when its kernel is first used.
struct ManifestIndex {
  struct Entry {
    std::string name;
    std::string kind; ///< "kernel" when the manifest names none
    size_t begin = 0, end = 0;
  };
  std::vector<Entry> specializations; ///< in manifest order
  /// The constants list; begin == end when the manifest has none.
  size_t constantsBegin = 0, constantsEnd = 0;
  /// The file the module was built from (its name, no folder) and its
  /// kilnChecksum, when the manifest records them.
  std::string sourceFile;
  std::optional<uint64_t> sourceChecksum;
};

/// Checks the image's versions alone: Incompatible when this Kiln cannot
/// read a module of its format or run its host code.
ModuleCheck checkImage(const ImageFacts &image);

/// Checks the image's versions and the bundle `bundle` (the bytes of the
/// module's KILN_BUNDLE_SECTION) as described above. When `index` is given
/// and the module is sound, it is filled from the manifest.
ModuleCheck checkModule(const ImageFacts &image, std::string_view bundle,
                        CheckScope scope = CheckScope::Everything, ManifestIndex *index = nullptr);

/// Checks the manifest entry of specialization `index`, `entry` (its text,
/// as a ManifestIndex places it), as checkModule() checks it with
/// CheckScope::Everything, but for its fat binary's checksum; `payload` is
/// the module's payload. The problem, as a phrase completing "module 'x' is
/// damaged: ...", or nothing.
std::optional<std::string> checkSpecialization(std::string_view entry, size_t index,
                                               std::string_view payload);

/// The problem with a fat binary that a sound manifest places at `fatbin`
/// (inside the payload) with checksum `checksum`, as a phrase completing
/// "module 'x' is damaged: ...", or nothing when it is intact.
std::optional<std::string> checkFatBinary(std::string_view fatbin, uint64_t checksum,
                                          std::string_view kernelName, size_t index);

/// Finds the KilnModuleImage in the bytes of a module's file: the image
/// whose manifest checksum is `manifestChecksum` (the bundle header's).
std::optional<ImageFacts> findImage(std::string_view file, uint64_t manifestChecksum);

/// Finds the bundle of a module's file the way the runtime does (through
/// its section headers, of the size its image gives) and checks it. On
/// success `bundle` is the section's bytes. The manifest must describe the
/// module the file's PyInit_ function makes (the runtime compares the
/// image's name instead).
ModuleCheck checkModuleFile(std::string_view file, std::string_view &bundle);

} // namespace kiln::module
