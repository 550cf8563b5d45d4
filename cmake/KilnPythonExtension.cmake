# Kiln's own Python extensions (kiln._runtime, kiln._compiler) are built
# once for every CPython from KILN_PYTHON_STABLE_ABI_FLOOR on: compiled against
# CPython's limited API of that version and named `<name>.abi3.so`, which
# every later CPython imports. 3.11 is the oldest limited API with the buffer
# protocol, through which the launch path reads arrays.
#
# An interpreter without the stable ABI (free-threaded CPython, 3.13t and
# later) or older than the floor (3.10) gets a build for its version alone,
# named by its EXT_SUFFIX, from the same sources: the limited API is a subset
# of the full one. KILN_PYTHON_STABLE_ABI=OFF asks for that build anywhere.
#
#   kiln_add_python_extension(<target> <sources>...)
#     a MODULE library for the Python3 CMake found, named and compiled as
#     above; KILN_PYTHON_EXTENSION_SUFFIX is the suffix it got.
find_package(Python3 COMPONENTS Interpreter Development.Module REQUIRED)

set(KILN_PYTHON_STABLE_ABI_FLOOR 3.11)
execute_process(
  COMMAND "${Python3_EXECUTABLE}" -c
          "import sysconfig; print(int(bool(sysconfig.get_config_var('Py_GIL_DISABLED'))))"
  OUTPUT_VARIABLE _kiln_free_threaded OUTPUT_STRIP_TRAILING_WHITESPACE)
if(_kiln_free_threaded OR Python3_VERSION VERSION_LESS KILN_PYTHON_STABLE_ABI_FLOOR)
  set(_kiln_stable_abi_default OFF)
else()
  set(_kiln_stable_abi_default ON)
endif()
option(KILN_PYTHON_STABLE_ABI
       "Build Kiln's Python extensions for every CPython from ${KILN_PYTHON_STABLE_ABI_FLOOR} (abi3)"
       ${_kiln_stable_abi_default})
if(KILN_PYTHON_STABLE_ABI AND NOT _kiln_stable_abi_default)
  message(FATAL_ERROR "KILN_PYTHON_STABLE_ABI needs a CPython from ${KILN_PYTHON_STABLE_ABI_FLOOR} "
                      "that has the stable ABI (not a free-threaded one); "
                      "${Python3_EXECUTABLE} is ${Python3_VERSION}")
endif()

if(KILN_PYTHON_STABLE_ABI)
  set(KILN_PYTHON_EXTENSION_SUFFIX ".abi3.so")
else()
  execute_process(
    COMMAND "${Python3_EXECUTABLE}" -c "import sysconfig; print(sysconfig.get_config_var('EXT_SUFFIX'))"
    OUTPUT_VARIABLE KILN_PYTHON_EXTENSION_SUFFIX OUTPUT_STRIP_TRAILING_WHITESPACE)
endif()

function(kiln_add_python_extension target)
  Python3_add_library(${target} MODULE ${ARGN})
  set_target_properties(${target} PROPERTIES PREFIX "" SUFFIX "${KILN_PYTHON_EXTENSION_SUFFIX}")
  if(KILN_PYTHON_STABLE_ABI)
    string(REPLACE "." ";" _kiln_floor "${KILN_PYTHON_STABLE_ABI_FLOOR}")
    list(GET _kiln_floor 0 _kiln_major)
    list(GET _kiln_floor 1 _kiln_minor)
    math(EXPR _kiln_hex "(${_kiln_major} << 24) | (${_kiln_minor} << 16)" OUTPUT_FORMAT HEXADECIMAL)
    target_compile_definitions(${target} PRIVATE Py_LIMITED_API=${_kiln_hex})
  endif()
endfunction()
