//===- frontend/source/diagnostics.cpp -------------------------------------------===//

#include "frontend/source/diagnostics.h"

#include <llvm/Support/ConvertUTF.h>
#include <llvm/Support/Format.h>
#include <llvm/Support/JSON.h>
#include <llvm/Support/WithColor.h>

#include <algorithm>

namespace kiln {

namespace {

struct DiagInfo {
  Severity severity;
  const char *text;
};

constexpr DiagInfo diagTable[] = {
#define DIAG(ID, SEVERITY, TEXT) {Severity::SEVERITY, TEXT},
#include "frontend/source/diagnostic_kinds.def"
};

llvm::StringRef severityName(Severity severity) {
  switch (severity) {
  case Severity::Note:
    return "note";
  case Severity::Warning:
    return "warning";
  case Severity::Error:
    return "error";
  }
  return "error";
}

/// A source line as it is shown under a diagnostic: tabs expanded to the
/// next multiple of 8, control characters and bytes that are not UTF-8
/// spelled out (<U+0000>, <FF>), so that the output is always printable
/// UTF-8. `columns[i]` is the display column where byte i of the line starts.
struct DisplayLine {
  std::string text;
  std::vector<unsigned> columns;
};

DisplayLine displayLine(llvm::StringRef line) {
  DisplayLine shown;
  unsigned column = 0;
  for (size_t i = 0; i < line.size();) {
    unsigned char c = static_cast<unsigned char>(line[i]);
    shown.columns.push_back(column);
    if (c == '\t') {
      do {
        shown.text.push_back(' ');
        ++column;
      } while (column % 8 != 0);
      ++i;
      continue;
    }
    if (c < 0x20 || c == 0x7F) {
      std::string spelled;
      llvm::raw_string_ostream(spelled) << llvm::format("<U+%04X>", c);
      shown.text += spelled;
      column += static_cast<unsigned>(spelled.size());
      ++i;
      continue;
    }
    unsigned length = c < 0x80 ? 1 : llvm::getNumBytesForUTF8(c);
    const auto *start = reinterpret_cast<const llvm::UTF8 *>(line.data() + i);
    if (c >= 0x80 &&
        (i + length > line.size() || !llvm::isLegalUTF8Sequence(start, start + length))) {
      std::string spelled;
      llvm::raw_string_ostream(spelled) << llvm::format("<%02X>", c);
      shown.text += spelled;
      column += static_cast<unsigned>(spelled.size());
      ++i;
      continue;
    }
    shown.text.append(line.data() + i, length);
    for (unsigned k = 1; k < length; ++k)
      shown.columns.push_back(column);
    ++column;
    i += length;
  }
  shown.columns.push_back(column);
  return shown;
}

} // namespace

llvm::StringRef DiagnosticEngine::formatString(DiagID id) {
  return diagTable[static_cast<size_t>(id)].text;
}

Severity DiagnosticEngine::severityOf(DiagID id) {
  return diagTable[static_cast<size_t>(id)].severity;
}

std::string DiagnosticEngine::format(DiagID id, std::initializer_list<DiagArg> args) const {
  std::vector<std::string> strings;
  for (const DiagArg &arg : args)
    strings.push_back(arg.str());
  return format(id, strings);
}

std::string DiagnosticEngine::format(DiagID id, llvm::ArrayRef<std::string> args) const {
  llvm::StringRef text = formatString(id);
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 1 < text.size() && text[i + 1] >= '0' && text[i + 1] <= '9') {
      size_t index = static_cast<size_t>(text[i + 1] - '0');
      if (index < args.size())
        out += args[index];
      ++i;
      continue;
    }
    out.push_back(text[i]);
  }
  return out;
}

std::string countOf(uint64_t count, llvm::StringRef noun) {
  return std::to_string(count) + " " + noun.str() + (count == 1 ? "" : "s");
}

Diagnostic DiagnosticEngine::makeDiagnostic(DiagID id, SourceRange range,
                                            llvm::ArrayRef<std::string> args) const {
  return Diagnostic{id, severityOf(id), range, format(id, args), {}};
}

Diagnostic DiagnosticEngine::makeNote(DiagID id, SourceRange range,
                                      std::initializer_list<DiagArg> args) const {
  return Diagnostic{id, severityOf(id), range, format(id, args), {}};
}

bool DiagnosticEngine::isDuplicate(const Diagnostic &candidate) const {
  return std::any_of(reported.begin(), reported.end(), [&](const Diagnostic &d) {
    return d.id == candidate.id && d.range.begin.file == candidate.range.begin.file &&
           d.range.begin.offset == candidate.range.begin.offset && d.message == candidate.message;
  });
}

DiagnosticBuilder DiagnosticEngine::report(DiagID id, SourceRange range,
                                           std::initializer_list<DiagArg> args) {
  return reportDiagnostic(Diagnostic{id, severityOf(id), range, format(id, args), {}});
}

void DiagnosticEngine::emit(Diagnostic diagnostic) {
  reportDiagnostic(std::move(diagnostic));
}

void DiagnosticEngine::stopAtErrorLimit() {
  if (limitNoticeGiven)
    return;
  limitNoticeGiven = true;
  reported.push_back(Diagnostic{DiagID::err_too_many_errors,
                                Severity::Error,
                                SourceRange(),
                                format(DiagID::err_too_many_errors, {}),
                                {}});
}

DiagnosticBuilder DiagnosticEngine::reportDiagnostic(Diagnostic diagnostic) {
  if (deferred) {
    contextNotesAdded = 0;
    deferred->push_back(std::move(diagnostic));
    return DiagnosticBuilder(this, &deferred->back());
  }
  if (diagnostic.severity == Severity::Error && errors >= errorLimit) {
    stopAtErrorLimit();
    return DiagnosticBuilder(this, nullptr);
  }
  if (isDuplicate(diagnostic))
    return DiagnosticBuilder(this, nullptr);
  contextNotesAdded = contexts.size();
  for (auto it = contexts.rbegin(); it != contexts.rend(); ++it)
    diagnostic.notes.push_back(*it);
  if (diagnostic.severity == Severity::Error)
    ++errors;
  else if (diagnostic.severity == Severity::Warning)
    ++warnings;
  reported.push_back(std::move(diagnostic));
  return DiagnosticBuilder(this, &reported.back());
}

DiagnosticBuilder &DiagnosticBuilder::note(DiagID id, SourceRange range,
                                           std::initializer_list<DiagArg> args) {
  if (diagnostic) {
    // Explicit notes come before the context notes appended at report time.
    auto firstContext = diagnostic->notes.end() - static_cast<long>(engine->contextNotesAdded);
    diagnostic->notes.insert(firstContext, engine->makeNote(id, range, args));
  }
  return *this;
}

DiagnosticEngine::Deferral::Deferral(DiagnosticEngine &engine)
    : engine(engine), outer(engine.deferred) {
  engine.deferred = &kept;
}

DiagnosticEngine::Deferral::~Deferral() {
  engine.deferred = outer;
}

const Diagnostic *DiagnosticEngine::Deferral::firstError() const {
  for (const Diagnostic &diagnostic : kept)
    if (diagnostic.severity == Severity::Error)
      return &diagnostic;
  return nullptr;
}

DiagnosticEngine::ContextScope::ContextScope(DiagnosticEngine &engine, Diagnostic note)
    : engine(engine) {
  engine.contexts.push_back(std::move(note));
}

DiagnosticEngine::ContextScope::~ContextScope() {
  engine.contexts.pop_back();
}

void DiagnosticEngine::renderOne(llvm::raw_ostream &os, const Diagnostic &diagnostic,
                                 bool color) const {
  const SourceRange &range = diagnostic.range;
  if (color)
    os.changeColor(llvm::raw_ostream::SAVEDCOLOR, /*Bold=*/true);
  if (range.isValid()) {
    LineColumn at = sources.lineColumn(range.begin);
    os << sources.path(range.begin.file) << ':' << at.line << ':' << at.column << ": ";
  } else {
    os << "kiln: ";
  }
  if (color) {
    switch (diagnostic.severity) {
    case Severity::Error:
      os.changeColor(llvm::raw_ostream::RED, true);
      break;
    case Severity::Warning:
      os.changeColor(llvm::raw_ostream::MAGENTA, true);
      break;
    case Severity::Note:
      os.changeColor(llvm::raw_ostream::BLACK, true);
      break;
    }
  }
  os << severityName(diagnostic.severity) << ": ";
  if (color)
    os.changeColor(llvm::raw_ostream::SAVEDCOLOR, true);
  os << diagnostic.message << '\n';
  if (color)
    os.resetColor();

  if (!range.isValid())
    return;
  LineColumn at = sources.lineColumn(range.begin);
  llvm::StringRef line = sources.lineText(range.begin.file, at.line);
  uint32_t lineStart = sources.lineStart(range.begin.file, at.line);
  size_t beginByte = range.begin.offset - lineStart;
  size_t endByte = range.end.file == range.begin.file && range.end.offset > range.begin.offset
                       ? range.end.offset - lineStart
                       : beginByte + 1;
  DisplayLine shown = displayLine(line);
  auto columnOf = [&](size_t byte) {
    return byte < shown.columns.size()
               ? shown.columns[byte]
               : shown.columns.back() + static_cast<unsigned>(byte - line.size());
  };
  unsigned caretBegin = columnOf(beginByte);
  unsigned caretEnd = std::max(columnOf(std::min(endByte, line.size())), caretBegin + 1);
  os << shown.text << '\n';
  if (color)
    os.changeColor(llvm::raw_ostream::GREEN, true);
  os.indent(caretBegin) << '^';
  for (unsigned i = caretBegin + 1; i < caretEnd; ++i)
    os << '~';
  os << '\n';
  if (color)
    os.resetColor();
}

void DiagnosticEngine::renderText(llvm::raw_ostream &os, bool color) const {
  for (const Diagnostic &diagnostic : reported) {
    renderOne(os, diagnostic, color);
    for (const Diagnostic &note : diagnostic.notes)
      renderOne(os, note, color);
  }
  if (errors || warnings) {
    if (warnings)
      os << warnings << (warnings == 1 ? " warning" : " warnings");
    if (warnings && errors)
      os << " and ";
    if (errors)
      os << errors << (errors == 1 ? " error" : " errors");
    os << " generated.\n";
  }
}

namespace {
void writeDiagnosticJson(llvm::json::OStream &json, const SourceManager &sources,
                         const Diagnostic &diagnostic) {
  json.object([&] {
    json.attribute("severity", severityName(diagnostic.severity));
    json.attribute("message", diagnostic.message);
    if (diagnostic.range.isValid()) {
      LineColumn begin = sources.lineColumn(diagnostic.range.begin);
      LineColumn end = sources.lineColumn(diagnostic.range.end);
      json.attribute("file", sources.path(diagnostic.range.begin.file));
      json.attribute("line", begin.line);
      json.attribute("column", begin.column);
      json.attribute("end_line", end.line);
      json.attribute("end_column", end.column);
    }
    if (!diagnostic.notes.empty()) {
      json.attributeArray("notes", [&] {
        for (const Diagnostic &note : diagnostic.notes)
          writeDiagnosticJson(json, sources, note);
      });
    }
  });
}
} // namespace

void DiagnosticEngine::renderJson(llvm::json::OStream &json) const {
  json.array([&] {
    for (const Diagnostic &diagnostic : reported)
      writeDiagnosticJson(json, sources, diagnostic);
  });
}

} // namespace kiln
