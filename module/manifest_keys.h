//===- module/manifest_keys.h - The manifest's keys -------------*- C++ -*-===//
//
// The spelling of every manifest key, from the one schema
// (manifest_keys.def): `keys::Specialization::ArgNames` is "arg_names".
// Writers and readers of manifests spell keys only through these.
//
// Plain C++: no LLVM, no Python, no exceptions.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string_view>

namespace kiln::module::keys {

#define MANIFEST_KEY(Object, Name, Spelling, Kind)                                                 \
  namespace Object {                                                                               \
  inline constexpr std::string_view Name = Spelling;                                               \
  }
#include "module/manifest_keys.def"

} // namespace kiln::module::keys
