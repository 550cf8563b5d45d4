//===- tests/runtime/stand_in_driver/ptx_params.cpp - PTX .entry params ---===//

#include "tests/runtime/stand_in_driver/ptx_params.h"

#include <cctype>
#include <cstdlib>

namespace kiln::stand_in {

namespace {

std::string withoutComments(const std::string &ptx) {
  std::string text;
  text.reserve(ptx.size());
  for (size_t i = 0; i < ptx.size();) {
    if (ptx.compare(i, 2, "//") == 0) {
      while (i < ptx.size() && ptx[i] != '\n')
        ++i;
    } else if (ptx.compare(i, 2, "/*") == 0) {
      size_t end = ptx.find("*/", i + 2);
      i = end == std::string::npos ? ptx.size() : end + 2;
      text += ' ';
    } else {
      text += ptx[i++];
    }
  }
  return text;
}

bool isNameChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$' || c == '.' ||
         c == '%';
}

/// Splits a declaration into tokens: words, numbers and single punctuation.
std::vector<std::string> tokens(const std::string &text) {
  std::vector<std::string> result;
  for (size_t i = 0; i < text.size();) {
    char c = text[i];
    if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
    } else if (isNameChar(c)) {
      size_t start = i;
      // A dot starts a new token (".param", ".u64"), except at its start.
      ++i;
      while (i < text.size() && isNameChar(text[i]) && text[i] != '.')
        ++i;
      result.push_back(text.substr(start, i - start));
    } else {
      result.push_back(std::string(1, c));
      ++i;
    }
  }
  return result;
}

uint64_t typeSize(const std::string &type) {
  if (type == "pred")
    return 1;
  if (type.size() < 2)
    return 0;
  char kind = type[0];
  if (kind != 'u' && kind != 's' && kind != 'b' && kind != 'f')
    return 0;
  int bits = std::atoi(type.c_str() + 1);
  return bits > 0 && bits % 8 == 0 ? uint64_t(bits / 8) : 0;
}

PtxParam readParam(const std::vector<std::string> &declaration) {
  PtxParam param;
  param.type = "?";
  uint64_t explicitAlign = 0;
  uint64_t count = 1;
  bool pointer = false;
  for (size_t i = 0; i < declaration.size(); ++i) {
    const std::string &token = declaration[i];
    if (token == ".param" || token == ".global" || token == ".const" || token == ".local" ||
        token == ".shared")
      continue;
    if (token == ".ptr") {
      pointer = true;
    } else if (token == ".align" && i + 1 < declaration.size()) {
      uint64_t value = std::strtoull(declaration[++i].c_str(), nullptr, 10);
      if (!pointer) // After .ptr, .align is the pointee's.
        explicitAlign = value;
    } else if (token.size() > 1 && token[0] == '.' && typeSize(token.substr(1))) {
      param.type = token.substr(1);
    } else if (token == "[" && i + 1 < declaration.size()) {
      count = std::strtoull(declaration[++i].c_str(), nullptr, 10);
    } else if (token != "]" && token[0] != '.') {
      param.name = token;
    }
  }
  uint64_t element = typeSize(param.type);
  param.size = element * count;
  param.align = explicitAlign ? explicitAlign : element;
  return param;
}

} // namespace

std::vector<PtxEntry> readPtxEntries(const std::string &ptx) {
  std::string text = withoutComments(ptx);
  std::vector<PtxEntry> entries;
  for (size_t at = text.find(".entry"); at != std::string::npos; at = text.find(".entry", at + 1)) {
    bool wordStart = at == 0 || !isNameChar(text[at - 1]);
    bool wordEnd = at + 6 < text.size() && !isNameChar(text[at + 6]);
    if (!wordStart || !wordEnd)
      continue;
    size_t open = text.find_first_of("({", at);
    if (open == std::string::npos)
      break;
    PtxEntry entry;
    std::vector<std::string> head = tokens(text.substr(at + 6, open - at - 6));
    if (head.empty())
      continue;
    entry.name = head.front();
    if (text[open] == '(') {
      size_t close = text.find(')', open);
      if (close == std::string::npos)
        break;
      std::string list = text.substr(open + 1, close - open - 1);
      uint64_t offset = 0;
      size_t start = 0;
      while (start <= list.size()) {
        size_t comma = list.find(',', start);
        if (comma == std::string::npos)
          comma = list.size();
        std::vector<std::string> declaration = tokens(list.substr(start, comma - start));
        start = comma + 1;
        if (declaration.empty())
          continue;
        PtxParam param = readParam(declaration);
        if (param.align > 1)
          offset = (offset + param.align - 1) / param.align * param.align;
        param.offset = offset;
        offset += param.size;
        entry.params.push_back(std::move(param));
      }
    }
    entries.push_back(std::move(entry));
  }
  return entries;
}

unsigned ptxTargetArch(const std::string &ptx) {
  size_t at = ptx.find(".target");
  if (at == std::string::npos)
    return 0;
  size_t sm = ptx.find("sm_", at);
  if (sm == std::string::npos)
    return 0;
  return static_cast<unsigned>(std::strtoul(ptx.c_str() + sm + 3, nullptr, 10));
}

} // namespace kiln::stand_in
