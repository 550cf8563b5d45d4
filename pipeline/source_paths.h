//===- pipeline/source_paths.h - Where a project sits ----------*- C++ -*-===//
//
// A build records the paths of its sources relative to the project's root,
// as ccache's base_dir and GCC's -ffile-prefix-map make C builds independent
// of where a checkout sits: two checkouts of one project build the same
// bytes and share every cache entry. The root is the first of these that
// holds the module:
//
//   1. --project-root (what add_python_kernels() passes: CMake's top source
//      folder; kiln.setuptools: the folder of setup.py or pyproject.toml);
//   2. the folder of the pyproject.toml nearest to the module;
//   3. the module's package root, the folder above its top-level package
//      (`--module a.b.c` at /src/a/b/c.py: /src).
//
// --file-prefix-map's entries come after the root, so they win where they
// match (FilePrefixMap).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/source/file_prefix_map.h"
#include "pipeline/build_options.h"

#include <string>

namespace kiln::pipeline {

/// The folder, absolute, the build's source paths are relative to.
std::string projectRoot(const BuildOptions &options);

/// How the build records source paths: relative to projectRoot(), then as
/// --file-prefix-map says. Entries without '=' (which the command line
/// refuses) are left out.
FilePrefixMap recordedPathMap(const BuildOptions &options);

} // namespace kiln::pipeline
