//===- frontend/source/diagnostics.h ---------------------------*- C++ -*-===//
//
// Every message Kiln prints about a user's program is declared once in
// diagnostic_kinds.def and reported through a DiagnosticEngine. The engine
// keeps the diagnostics so that a driver can render them as text, in clang's
// format, or as JSON.
//
//   kernels.py:12:9: error: cannot unify int64 and array(float32, 1d, C) for 'x'
//       x = 10
//           ^~
//   kernels.py:3:1: note: in kernel 'f' compiled for (array(float32, 1d, C),)
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/source/source_manager.h"

#include <llvm/ADT/StringRef.h>
#include <llvm/Support/raw_ostream.h>

#include <cstdint>
#include <deque>
#include <initializer_list>
#include <string>
#include <vector>

namespace llvm::json {
class OStream;
}

namespace kiln {

enum class DiagID : uint16_t {
#define DIAG(ID, SEVERITY, TEXT) ID,
#include "frontend/source/diagnostic_kinds.def"
};

enum class Severity : uint8_t { Note, Warning, Error };

/// One argument substituted for %0, %1, ... in a diagnostic's text.
class DiagArg {
public:
  DiagArg(llvm::StringRef text) : text(text.str()) {}
  DiagArg(const char *text) : text(text) {}
  DiagArg(const std::string &text) : text(text) {}
  DiagArg(int64_t value) : text(std::to_string(value)) {}
  DiagArg(uint64_t value) : text(std::to_string(value)) {}
  DiagArg(int value) : text(std::to_string(value)) {}
  DiagArg(unsigned value) : text(std::to_string(value)) {}

  const std::string &str() const { return text; }

private:
  std::string text;
};

struct Diagnostic {
  DiagID id;
  Severity severity;
  SourceRange range;
  std::string message;
  std::vector<Diagnostic> notes;
};

class DiagnosticEngine;

/// "1 argument", "2 arguments": a count with its noun, for messages.
std::string countOf(uint64_t count, llvm::StringRef noun);

/// Returned by DiagnosticEngine::report so that notes can be attached.
class DiagnosticBuilder {
public:
  DiagnosticBuilder &note(DiagID id, SourceRange range, std::initializer_list<DiagArg> args = {});

private:
  friend class DiagnosticEngine;
  DiagnosticBuilder(DiagnosticEngine *engine, Diagnostic *diagnostic)
      : engine(engine), diagnostic(diagnostic) {}
  DiagnosticEngine *engine;
  Diagnostic *diagnostic; // null when the diagnostic was dropped as a duplicate
};

class DiagnosticEngine {
public:
  explicit DiagnosticEngine(const SourceManager &sources) : sources(sources) {}

  DiagnosticBuilder report(DiagID id, SourceRange range, std::initializer_list<DiagArg> args = {});

  unsigned errorCount() const { return errors; }
  unsigned warningCount() const { return warnings; }
  bool hasErrors() const { return errors != 0; }
  /// True once so many errors were reported that further ones are dropped;
  /// passes may use it to stop early on hopeless input.
  bool errorLimitReached() const { return errors >= errorLimit; }
  /// For a pass that stops early because the limit was reached: reports
  /// "too many errors emitted, stopping now" (once).
  void stopAtErrorLimit();
  void setErrorLimit(unsigned limit) { errorLimit = limit; }

  const std::deque<Diagnostic> &diagnostics() const { return reported; }
  const SourceManager &sourceManager() const { return sources; }

  /// Context notes are appended to every diagnostic reported while they are
  /// active, innermost first ("in call to device function 'f' with ...").
  class ContextScope {
  public:
    ContextScope(DiagnosticEngine &engine, Diagnostic note);
    ~ContextScope();
    ContextScope(const ContextScope &) = delete;
    ContextScope &operator=(const ContextScope &) = delete;

  private:
    DiagnosticEngine &engine;
  };
  /// While one is active, diagnostics are kept aside instead of reported,
  /// for work whose problems matter only if something needs its result
  /// (a function a build was not asked for).
  class Deferral {
  public:
    explicit Deferral(DiagnosticEngine &engine);
    ~Deferral();
    Deferral(const Deferral &) = delete;
    Deferral &operator=(const Deferral &) = delete;

    /// The first error kept aside, if any.
    const Diagnostic *firstError() const;

  private:
    DiagnosticEngine &engine;
    std::deque<Diagnostic> kept;
    std::deque<Diagnostic> *outer;
  };
  Diagnostic makeNote(DiagID id, SourceRange range, std::initializer_list<DiagArg> args) const;
  /// Builds a diagnostic without reporting it, for passes that report only
  /// once they know a diagnostic is real (see type_inference.h).
  Diagnostic makeDiagnostic(DiagID id, SourceRange range, llvm::ArrayRef<std::string> args) const;
  /// Reports a diagnostic made by makeDiagnostic, with the active context notes.
  void emit(Diagnostic diagnostic);

  void renderText(llvm::raw_ostream &os, bool color) const;
  void renderJson(llvm::json::OStream &json) const;

  static llvm::StringRef formatString(DiagID id);
  static Severity severityOf(DiagID id);

private:
  friend class DiagnosticBuilder;
  std::string format(DiagID id, std::initializer_list<DiagArg> args) const;
  std::string format(DiagID id, llvm::ArrayRef<std::string> args) const;
  void renderOne(llvm::raw_ostream &os, const Diagnostic &diagnostic, bool color) const;
  DiagnosticBuilder reportDiagnostic(Diagnostic diagnostic);
  bool isDuplicate(const Diagnostic &candidate) const;

  const SourceManager &sources;
  std::deque<Diagnostic> reported; // deque: builders keep pointers into it
  std::vector<Diagnostic> contexts;
  unsigned errors = 0;
  unsigned warnings = 0;
  unsigned errorLimit = 50;
  bool limitNoticeGiven = false;
  size_t contextNotesAdded = 0;               // by the latest report, for DiagnosticBuilder::note
  std::deque<Diagnostic> *deferred = nullptr; // where an active Deferral keeps them
};

} // namespace kiln
