//===- backend/cuda_tools/ptxas_log.cpp - What ptxas and nvJitLink print -------------===//

#include "backend/cuda_tools/ptxas_log.h"

#include <llvm/ADT/StringExtras.h>
#include <llvm/Support/Regex.h>

namespace kiln::cuda_tools {

namespace {

std::optional<ToolSeverity> parseSeverity(llvm::StringRef word) {
  std::string lower = word.lower();
  if (lower == "error")
    return ToolSeverity::Error;
  if (lower == "fatal")
    return ToolSeverity::Fatal;
  if (lower == "warning")
    return ToolSeverity::Warning;
  if (lower == "info")
    return ToolSeverity::Note; // info lines are parsed, not kept
  return std::nullopt;
}

/// Quoted or bare function name: 'f', f, 'f':
llvm::StringRef unquoteName(llvm::StringRef name) {
  name = name.trim();
  name.consume_back(":");
  if (name.size() >= 2 && name.front() == '\'' && name.back() == '\'')
    name = name.drop_front().drop_back();
  return name;
}

class LogParser {
public:
  ToolLog log;

  void parseLine(llvm::StringRef line) {
    line = line.rtrim();
    llvm::StringRef body = line.ltrim();
    // nvJitLink prefixes ptxas's continuation lines with "ptxas         .".
    if (body.consume_front("ptxas")) {
      body = body.ltrim();
      if (body.consume_front("."))
        body = body.ltrim();
    }
    if (body.empty())
      return;

    llvm::SmallVector<llvm::StringRef, 5> match;
    if (locatedMessage.match(body, &match)) {
      if (std::optional<ToolSeverity> severity = parseSeverity(match[3])) {
        ToolMessage message;
        message.severity = *severity;
        match[2].getAsInteger(10, message.line);
        message.input = match[1].trim().str();
        message.message = match[4].trim().str();
        if (match[3].lower() == "info")
          parseInfo(message.message);
        else
          log.messages.push_back(std::move(message));
        return;
      }
    }
    if (plainMessage.match(body, &match)) {
      if (std::optional<ToolSeverity> severity = parseSeverity(match[1])) {
        if (match[1].lower() == "info") {
          parseInfo(match[2].trim());
          return;
        }
        ToolMessage message;
        message.severity = *severity;
        message.message = match[2].trim().str();
        log.messages.push_back(std::move(message));
        return;
      }
    }
    if (body.contains("bytes stack frame")) {
      parseResourceItems(body);
      return;
    }
    ToolMessage note;
    note.message = body.str();
    log.messages.push_back(std::move(note));
  }

private:
  // Patterns, compiled once per log (llvm::Regex promises nothing about
  // sharing one between threads).
  const llvm::Regex locatedMessage{"^(.*), line ([0-9]+); *([A-Za-z]+) *: ?(.*)$"};
  const llvm::Regex plainMessage{"^([A-Za-z]+) *: ?(.*)$"};
  const llvm::Regex compilingFunction{"^Compiling (entry )?function '([^']*)'"};
  const llvm::Regex moduleItem{"^([0-9]+) bytes (gmem|cmem\\[([0-9]+)\\])$"};
  const llvm::Regex bytesItem{"^([0-9]+) bytes (.*)$"};
  const llvm::Regex countItem{"^([Uu]sed )?([0-9]+) ([a-z]+)$"};

  FunctionResources *current = nullptr;
  std::map<std::string, size_t, std::less<>> functionIndex;

  FunctionResources &functionNamed(llvm::StringRef name) {
    auto found = functionIndex.find(name);
    if (found == functionIndex.end()) {
      found = functionIndex.emplace(name.str(), log.usage.functions.size()).first;
      log.usage.functions.emplace_back();
      log.usage.functions.back().name = name.str();
    }
    return log.usage.functions[found->second];
  }

  void parseInfo(llvm::StringRef info) {
    llvm::SmallVector<llvm::StringRef, 3> match;
    if (compilingFunction.match(info, &match)) {
      current = &functionNamed(match[2]);
      current->isKernel |= !match[1].empty();
      return;
    }
    if (info.consume_front("Function properties for")) {
      current = &functionNamed(unquoteName(info));
      return;
    }
    if (info.starts_with_insensitive("used ")) {
      parseResourceItems(info);
      return;
    }
    if (info.contains("bytes gmem")) {
      parseModuleItems(info);
      return;
    }
    // "Compile time = ...", "Overriding maximum register limit ...": nothing to keep.
  }

  void parseModuleItems(llvm::StringRef items) {
    llvm::SmallVector<llvm::StringRef, 8> parts;
    items.split(parts, ',');
    for (llvm::StringRef part : parts) {
      llvm::SmallVector<llvm::StringRef, 4> match;
      if (!moduleItem.match(part.trim(), &match))
        continue;
      uint64_t bytes = 0;
      match[1].getAsInteger(10, bytes);
      if (match[2] == "gmem") {
        log.usage.globalMemoryBytes = bytes;
      } else {
        unsigned bank = 0;
        match[3].getAsInteger(10, bank);
        log.usage.constantMemoryBytes[bank] = bytes;
      }
    }
  }

  void parseResourceItems(llvm::StringRef items) {
    if (!current)
      return;
    llvm::SmallVector<llvm::StringRef, 8> parts;
    items.split(parts, ',');
    for (llvm::StringRef part : parts) {
      part = part.trim();
      llvm::SmallVector<llvm::StringRef, 4> match;
      uint64_t value = 0;
      if (bytesItem.match(part, &match)) {
        match[1].getAsInteger(10, value);
        llvm::StringRef what = match[2];
        unsigned bank = 0;
        if (what == "stack frame")
          current->stackFrameBytes = value;
        else if (what == "spill stores")
          current->spillStoreBytes = value;
        else if (what == "spill loads")
          current->spillLoadBytes = value;
        else if (what == "cumulative stack size")
          current->cumulativeStackBytes = value;
        else if (what == "smem")
          current->sharedMemoryBytes = value;
        else if (what == "lmem")
          current->localMemoryBytes = value;
        else if (what.consume_front("cmem[") && what.consume_back("]") &&
                 !what.getAsInteger(10, bank))
          current->constantMemoryBytes[bank] = value;
      } else if (countItem.match(part, &match)) {
        match[2].getAsInteger(10, value);
        llvm::StringRef what = match[3];
        if (what == "registers")
          current->registers = static_cast<unsigned>(value);
        else if (what == "barriers")
          current->barriers = static_cast<unsigned>(value);
        else if (what == "stack") // nvJitLink's summary: "0 stack"
          current->cumulativeStackBytes = value;
        else if (what == "textures")
          current->textures = static_cast<unsigned>(value);
        else if (what == "samplers")
          current->samplers = static_cast<unsigned>(value);
        else if (what == "surfaces")
          current->surfaces = static_cast<unsigned>(value);
      }
    }
  }
};

} // namespace

llvm::StringRef severityName(ToolSeverity severity) {
  switch (severity) {
  case ToolSeverity::Note:
    return "note";
  case ToolSeverity::Warning:
    return "warning";
  case ToolSeverity::Error:
    return "error";
  case ToolSeverity::Fatal:
    return "fatal error";
  }
  return "?";
}

const FunctionResources *ResourceUsage::function(llvm::StringRef name) const {
  for (const FunctionResources &resources : functions)
    if (resources.name == name)
      return &resources;
  return nullptr;
}

bool ToolLog::hasErrors() const {
  for (const ToolMessage &message : messages)
    if (message.severity == ToolSeverity::Error || message.severity == ToolSeverity::Fatal)
      return true;
  return false;
}

llvm::json::Object resourceSummary(const FunctionResources &function) {
  return llvm::json::Object{
      {"registers", function.registers},          {"stack", function.stackFrameBytes},
      {"spill_stores", function.spillStoreBytes}, {"spill_loads", function.spillLoadBytes},
      {"shared", function.sharedMemoryBytes},     {"local", function.localMemoryBytes}};
}

ToolLog parsePtxasLog(llvm::StringRef text) {
  LogParser parser;
  llvm::SmallVector<llvm::StringRef, 32> lines;
  text.split(lines, '\n');
  for (llvm::StringRef line : lines)
    parser.parseLine(line);

  // "Ptx assembly aborted due to errors" only repeats that there were errors.
  std::vector<ToolMessage> &messages = parser.log.messages;
  bool otherErrors = false;
  for (const ToolMessage &message : messages)
    otherErrors |= message.severity == ToolSeverity::Error;
  if (otherErrors)
    std::erase_if(messages, [](const ToolMessage &message) {
      return message.severity == ToolSeverity::Fatal &&
             llvm::StringRef(message.message).starts_with("Ptx assembly aborted due to errors");
    });
  return std::move(parser.log);
}

void attachSourceLines(std::vector<ToolMessage> &messages, llvm::StringRef input) {
  llvm::SmallVector<llvm::StringRef, 0> lines;
  input.split(lines, '\n');
  for (ToolMessage &message : messages)
    if (message.line >= 1 && message.line <= lines.size())
      message.sourceLine = lines[message.line - 1].trim().str();
}

char CudaToolError::ID = 0;

CudaToolError::CudaToolError(std::string tool, unsigned arch, std::string summary,
                             std::vector<ToolMessage> messages)
    : toolName(std::move(tool)), targetArch(arch), what(std::move(summary)),
      toolMessages(std::move(messages)) {}

std::vector<const ToolMessage *> CudaToolError::explanation() const {
  std::vector<const ToolMessage *> errors, all;
  for (const ToolMessage &message : toolMessages) {
    all.push_back(&message);
    if (message.severity == ToolSeverity::Error || message.severity == ToolSeverity::Fatal)
      errors.push_back(&message);
  }
  return errors.empty() ? all : errors;
}

void CudaToolError::log(llvm::raw_ostream &os) const {
  os << toolName << " failed for sm_" << targetArch;
  if (!what.empty())
    os << " (" << what << ")";
  std::vector<const ToolMessage *> explained = explanation();
  if (explained.empty())
    return;
  os << ':';
  for (const ToolMessage *message : explained) {
    os << "\n  ";
    if (!message->input.empty())
      os << message->input << (message->line != 0 ? ", " : ": ");
    if (message->line != 0)
      os << "line " << message->line << ": ";
    os << severityName(message->severity) << ": " << message->message;
    if (!message->sourceLine.empty())
      os << "\n      " << message->sourceLine;
  }
}

std::error_code CudaToolError::convertToErrorCode() const {
  return llvm::inconvertibleErrorCode();
}

} // namespace kiln::cuda_tools
