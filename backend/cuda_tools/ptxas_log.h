//===- backend/cuda_tools/ptxas_log.h - What ptxas and nvJitLink print -----*- C++ -*-===//
//
// ptxas reports problems as lines such as
//
//   ptxas kernel.ptx, line 11; error   : Unknown symbol '%rd1'
//   ptxas fatal   : Ptx assembly aborted due to errors
//
// and, with -v, each function's resources:
//
//   ptxas info    : 0 bytes gmem, 4 bytes cmem[3]
//   ptxas info    : Compiling entry function 'block_sum' for 'sm_75'
//   ptxas info    : Function properties for block_sum
//       0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
//   ptxas info    : Used 10 registers, used 1 barriers, 1024 bytes smem, 372 bytes cmem[0]
//
// nvJitLink's logs quote ptxas and add lines of their own in the same style
// ("error   : Undefined reference to 'f' in 'kernels.ptx'"). This file turns
// both into data, and defines the error Kiln returns when a tool rejects
// device code: structured, so that the driver can show it as a diagnostic
// naming the kernel and architecture rather than dumping the tool's output.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <llvm/ADT/ArrayRef.h>
#include <llvm/ADT/StringRef.h>
#include <llvm/Support/Error.h>
#include <llvm/Support/JSON.h>
#include <llvm/Support/raw_ostream.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace kiln::cuda_tools {

enum class ToolSeverity { Note, Warning, Error, Fatal };

/// "note", "warning", "error", "fatal error".
llvm::StringRef severityName(ToolSeverity severity);

struct ToolMessage {
  ToolSeverity severity = ToolSeverity::Note;
  /// The 1-based line of the input the message is about; 0 when it names none.
  unsigned line = 0;
  /// The input file the tool named with the line (ptxas names its input).
  std::string input;
  std::string message;
  /// The text of `line`, when the caller had the input at hand (see
  /// attachSourceLines).
  std::string sourceLine;
};

/// What ptxas -v reports for one function.
struct FunctionResources {
  std::string name;
  /// An entry function (a kernel), rather than a device function.
  bool isKernel = false;
  unsigned registers = 0;
  unsigned barriers = 0;
  uint64_t stackFrameBytes = 0;
  uint64_t spillStoreBytes = 0;
  uint64_t spillLoadBytes = 0;
  /// The stack of the function and everything it calls.
  uint64_t cumulativeStackBytes = 0;
  uint64_t sharedMemoryBytes = 0;
  uint64_t localMemoryBytes = 0;
  /// Bytes per constant bank; bank 0 holds a kernel's parameters.
  std::map<unsigned, uint64_t> constantMemoryBytes;
  unsigned textures = 0;
  unsigned samplers = 0;
  unsigned surfaces = 0;
};

struct ResourceUsage {
  /// Module-wide: __device__ variables.
  uint64_t globalMemoryBytes = 0;
  /// Module-wide bytes per constant bank (bank 3: __constant__ data).
  std::map<unsigned, uint64_t> constantMemoryBytes;
  /// In the order the tool first names them.
  std::vector<FunctionResources> functions;

  const FunctionResources *function(llvm::StringRef name) const;
};

/// What `kiln build --json` and a built module's manifest show of a
/// kernel's resources: registers, stack, spill_stores, spill_loads, shared
/// and local (bytes).
llvm::json::Object resourceSummary(const FunctionResources &function);

struct ToolLog {
  /// Errors, warnings and unrecognised lines, in order; not the info lines.
  std::vector<ToolMessage> messages;
  ResourceUsage usage;

  bool hasErrors() const;
};

/// Parses the output of ptxas (stderr, with or without -v) or an nvJitLink
/// log. Never fails: lines it does not understand become notes.
ToolLog parsePtxasLog(llvm::StringRef text);

/// Sets the sourceLine of every message that has a line number in `input`.
void attachSourceLines(std::vector<ToolMessage> &messages, llvm::StringRef input);

/// A CUDA tool rejected device code.
class CudaToolError : public llvm::ErrorInfo<CudaToolError> {
public:
  static char ID;

  /// `tool`: "ptxas", "nvJitLink"; `arch`: the sm_ it was building for;
  /// `summary`: what went wrong in a few words ("exit status 255").
  CudaToolError(std::string tool, unsigned arch, std::string summary,
                std::vector<ToolMessage> messages);

  const std::string &tool() const { return toolName; }
  unsigned arch() const { return targetArch; }
  const std::string &summary() const { return what; }
  llvm::ArrayRef<ToolMessage> messages() const { return toolMessages; }
  /// The messages that explain the failure: the errors, or every message
  /// when the tool printed no error.
  std::vector<const ToolMessage *> explanation() const;

  /// "ptxas rejected the PTX for sm_80:" and one indented line per error,
  /// with the offending PTX line under it.
  void log(llvm::raw_ostream &os) const override;
  std::error_code convertToErrorCode() const override;

private:
  std::string toolName;
  unsigned targetArch;
  std::string what;
  std::vector<ToolMessage> toolMessages;
};

} // namespace kiln::cuda_tools
