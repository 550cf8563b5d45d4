# Warning and language flags shared by every Kiln target.

add_library(kiln_warnings INTERFACE)
target_compile_options(kiln_warnings INTERFACE
  -Wall -Wextra -Wpedantic -Wnon-virtual-dtor -Wimplicit-fallthrough
  -Werror=unused-result -Werror=return-type)
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  # GCC's -Wshadow also reports a constructor parameter named after the
  # member it initializes (Range(int size) : size(size)), the idiom Clang's
  # -Wshadow accepts; with Clang's set checked by Clang builds, GCC checks
  # shadowing among locals. GCC 12's -Wrestrict reports std::string
  # concatenations whose buffers cannot overlap (GCC bug 105651).
  target_compile_options(kiln_warnings INTERFACE -Wshadow=local -Wno-restrict)
else()
  target_compile_options(kiln_warnings INTERFACE -Wshadow)
endif()
if(KILN_WARNINGS_AS_ERRORS)
  target_compile_options(kiln_warnings INTERFACE -Werror)
endif()

# Library code reports failure through llvm::Error / llvm::Expected, never by
# throwing. Only the driver (CLI11) and the tests (GoogleTest) use exceptions.
add_library(kiln_library_options INTERFACE)
target_compile_options(kiln_library_options INTERFACE -fno-exceptions)
target_link_libraries(kiln_library_options INTERFACE kiln_warnings)

# Layering the build enforces: a target sees the headers of its own
# component folder and of the libraries it links, nothing else, so that an
# include reaching into another layer fails to compile. Each folder is
# exposed through an include root of its own, build/include/<folder>/,
# holding one link to the source folder ("ir/types.h" is found only there).
#
# kiln_expose_folder(<target> <PUBLIC|PRIVATE|INTERFACE> <folder>...)
function(kiln_folder_include_root folder out)
  set(root ${PROJECT_BINARY_DIR}/include/${folder})
  if(NOT EXISTS ${root}/${folder})
    file(MAKE_DIRECTORY ${root})
    file(CREATE_LINK ${PROJECT_SOURCE_DIR}/${folder} ${root}/${folder} SYMBOLIC)
  endif()
  set(${out} ${root} PARENT_SCOPE)
endfunction()

function(kiln_expose_folder target visibility)
  foreach(folder ${ARGN})
    kiln_folder_include_root(${folder} root)
    target_include_directories(${target} ${visibility} ${root})
  endforeach()
endfunction()

# The component folder (ir, frontend, backend, ...) of the CMakeLists.txt
# being read.
function(kiln_current_component out)
  file(RELATIVE_PATH relative ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_SOURCE_DIR})
  string(REGEX REPLACE "/.*" "" component "${relative}")
  set(${out} ${component} PARENT_SCOPE)
endfunction()

# kiln_add_library(<name> <sources>...): a component library with Kiln's
# flags, exposing its component folder to whatever links it.
function(kiln_add_library name)
  add_library(${name} STATIC ${ARGN})
  kiln_current_component(component)
  kiln_expose_folder(${name} PUBLIC ${component})
  target_link_libraries(${name} PRIVATE kiln_library_options)
  set_target_properties(${name} PROPERTIES POSITION_INDEPENDENT_CODE ON)
endfunction()

# Sanitized copies of the front end and the fat binary reader, and the
# libFuzzer fuzzer of the front end, cost a quarter of a build: they are off
# by default, and scripts/fuzz.sh builds and runs them in a tree of their
# own. Both need clang.
option(KILN_ENABLE_SANITIZERS
  "Build the front end and the fat binary reader again under AddressSanitizer and UBSan, with their tests" OFF)
option(KILN_ENABLE_FUZZING "Build the front end's libFuzzer fuzzer (implies KILN_ENABLE_SANITIZERS)" OFF)
if(KILN_ENABLE_FUZZING)
  set(KILN_ENABLE_SANITIZERS ON)
endif()
set(KILN_FUZZING_FLAGS -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined)
if(KILN_ENABLE_SANITIZERS)
  include(CheckCXXSourceCompiles)
  set(CMAKE_REQUIRED_FLAGS "-fsanitize=fuzzer,address,undefined")
  set(CMAKE_REQUIRED_LINK_OPTIONS "-fsanitize=fuzzer,address,undefined")
  check_cxx_source_compiles(
    "#include <cstddef>\n#include <cstdint>\nextern \"C\" int LLVMFuzzerTestOneInput(const uint8_t *, size_t) { return 0; }"
    KILN_HAVE_LIBFUZZER)
  unset(CMAKE_REQUIRED_FLAGS)
  unset(CMAKE_REQUIRED_LINK_OPTIONS)
  if(NOT KILN_HAVE_LIBFUZZER)
    message(FATAL_ERROR "KILN_ENABLE_SANITIZERS and KILN_ENABLE_FUZZING need clang with libFuzzer and the sanitizers")
  endif()
endif()
