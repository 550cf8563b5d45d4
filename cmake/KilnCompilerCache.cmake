# Compiling through ccache when it is installed. The wheel's build tree
# (build-wheel/, scripts/build-wheel.sh) compiles the same sources with the
# same flags as build/, so ccache serves it from the first: paths under the
# source tree are hashed relative to it and the build directory is not
# hashed, so trees at the same depth share entries.
option(KILN_USE_CCACHE "Compile through ccache when it is installed" ON)
find_program(KILN_CCACHE_PROGRAM ccache)
if(KILN_USE_CCACHE AND KILN_CCACHE_PROGRAM AND NOT CMAKE_CXX_COMPILER_LAUNCHER)
  set(_kiln_launcher env "CCACHE_BASEDIR=${CMAKE_SOURCE_DIR}" CCACHE_NOHASHDIR=1
    "${KILN_CCACHE_PROGRAM}")
  set(CMAKE_C_COMPILER_LAUNCHER ${_kiln_launcher})
  set(CMAKE_CXX_COMPILER_LAUNCHER ${_kiln_launcher})
endif()
