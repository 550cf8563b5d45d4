//===- driver/stop_signals.h - Cleaning up when kiln is stopped -*- C++ -*-===//
//
// SIGINT, SIGTERM, SIGHUP and SIGQUIT end kiln as they would any program,
// but first, as gcc does, kiln stops the tools it runs (ptxas, nvcc and
// theirs, the target Python) and removes its temporary files: the process's
// temporary folder and any half-written output.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <signal.h>

namespace kiln::driver {

/// The stop signals the process ignores (nohup ignores SIGHUP), which stay
/// ignored. Call before anything else installs handlers (llvm::InitLLVM).
sigset_t ignoredStopSignals();

/// Installs the handlers for the stop signals not in `ignored`; call once,
/// early in main.
void installStopSignalHandlers(const sigset_t &ignored);

} // namespace kiln::driver
