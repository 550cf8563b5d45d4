//===- ir/jit_options.h - How a function is compiled ------------*- C++ -*-===//
//
// The options of @cuda.jit and friends. The front end reads them from the
// decorator; the typed IR carries them with each function, as they decide
// how the back end compiles it.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace kiln {

/// Options of @cuda.jit and friends, with Numba's defaults.
struct JitOptions {
  bool fastmath = false;
  /// With fastmath, the LLVM fast-math flags its instructions get when the
  /// decorator names them (`fastmath={"nsz", "arcp"}`: "nnan", "ninf",
  /// "nsz", "arcp", "contract", "afn", "reassoc"), sorted; empty means all
  /// of them (`fastmath=True`). The rest of fast math (flushing subnormals,
  /// approximate division, square roots and math functions) comes with any
  /// fastmath, as in numba-cuda, where a non-empty set turns NVVM's on.
  std::vector<std::string> fastmathFlags;
  bool debug = false;
  bool optimize = true;
  bool lineinfo = false;
  std::optional<unsigned> maxRegisters;
  bool forceInline = false;
  bool inlineAlways = false;
  bool cache = false;
  /// Whether the CPU engine checks array indices unless the environment
  /// says otherwise (boundscheck=False turns it off; GPU code never checks).
  bool boundscheck = true;
  std::optional<bool> lto;
  std::vector<unsigned> launchBounds;
  /// Files of CUDA C/C++, PTX or objects to link, as written.
  std::vector<std::string> link;
  /// The shared memory / L1 carveout preference of a kernel, as numba-cuda
  /// passes it to the driver: a percentage of shared memory from 0 to 100,
  /// or -1 for the driver's default ("MaxL1" is 0, "MaxShared" 100,
  /// "default" -1). Unset when not given.
  std::optional<int> sharedMemoryCarveout;
};

/// The options that are flags, as the typed IR's text spells them: a flag
/// is written when its member holds `whenWritten`, which is not its default.
struct JitFlag {
  const char *spelling;
  bool JitOptions::*member;
  bool whenWritten;
};
inline constexpr JitFlag jitFlags[] = {
    {"fastmath", &JitOptions::fastmath, true},
    {"debug", &JitOptions::debug, true},
    {"noopt", &JitOptions::optimize, false},
    {"lineinfo", &JitOptions::lineinfo, true},
    {"forceinline", &JitOptions::forceInline, true},
    {"inline_always", &JitOptions::inlineAlways, true},
    {"cache", &JitOptions::cache, true},
    {"noboundscheck", &JitOptions::boundscheck, false},
};

} // namespace kiln
