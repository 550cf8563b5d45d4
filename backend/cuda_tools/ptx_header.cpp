//===- backend/cuda_tools/ptx_header.cpp - The .version and .target of PTX text ------===//

#include "backend/cuda_tools/ptx_header.h"

#include <llvm/ADT/StringExtras.h>

namespace kiln::cuda_tools {

namespace {

/// Skips whitespace and comments from the front of `text`.
void skipTrivia(llvm::StringRef &text) {
  while (true) {
    text = text.ltrim();
    if (text.consume_front("//")) {
      size_t end = text.find('\n');
      text = end == llvm::StringRef::npos ? llvm::StringRef() : text.substr(end + 1);
    } else if (text.consume_front("/*")) {
      size_t end = text.find("*/");
      text = end == llvm::StringRef::npos ? llvm::StringRef() : text.substr(end + 2);
    } else {
      return;
    }
  }
}

/// The next whitespace- or comma-separated word.
llvm::StringRef takeWord(llvm::StringRef &text) {
  text = text.ltrim(" \t");
  size_t end = text.find_first_of(" \t\r\n,;/");
  llvm::StringRef word = text.substr(0, end);
  text = text.substr(word.size());
  return word;
}

} // namespace

llvm::Expected<PtxHeader> readPtxHeader(llvm::StringRef ptx) {
  PtxHeader header;
  bool haveVersion = false, haveTarget = false;
  llvm::StringRef rest = ptx;
  while (!(haveVersion && haveTarget)) {
    skipTrivia(rest);
    if (rest.consume_front(".version")) {
      llvm::StringRef word = takeWord(rest);
      auto [major, minor] = word.split('.');
      if (major.getAsInteger(10, header.versionMajor) ||
          minor.getAsInteger(10, header.versionMinor))
        return llvm::createStringError("malformed PTX: '.version %s' is not MAJOR.MINOR",
                                       word.str().c_str());
      haveVersion = true;
    } else if (rest.consume_front(".target")) {
      // `.target sm_90, texmode_independent`: the architecture comes first.
      llvm::StringRef word = takeWord(rest);
      llvm::StringRef digits = word;
      if (!digits.consume_front("sm_"))
        return llvm::createStringError("malformed PTX: '.target %s' names no sm_ architecture",
                                       word.str().c_str());
      size_t digitCount = 0;
      while (digitCount < digits.size() && llvm::isDigit(digits[digitCount]))
        ++digitCount;
      if (digitCount == 0 || digits.take_front(digitCount).getAsInteger(10, header.targetArch))
        return llvm::createStringError("malformed PTX: '.target %s' names no sm_ architecture",
                                       word.str().c_str());
      header.targetSuffix = digits.drop_front(digitCount).str();
      haveTarget = true;
      // Skip the rest of the directive (", texmode_independent", ", debug").
      size_t end = rest.find('\n');
      rest = end == llvm::StringRef::npos ? llvm::StringRef() : rest.substr(end + 1);
    } else {
      break;
    }
  }
  if (!haveVersion)
    return llvm::createStringError("malformed PTX: it does not start with a .version directive");
  if (!haveTarget)
    return llvm::createStringError("malformed PTX: no .target directive follows .version");
  return header;
}

} // namespace kiln::cuda_tools
