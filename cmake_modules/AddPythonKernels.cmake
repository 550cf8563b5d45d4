# add_python_kernels(<target> <source.py>
#                    [MODULE <dotted.name>]
#                    [ARCHITECTURES <list>]
#                    [OUTPUT_DIRECTORY <dir>]
#                    [PYTHON_ABI <abi>]
#                    [OPTIONS <kiln build flags>...])
#
# Compiles a kernel module with `kiln build --module` into a Python extension
# module, as nanobind_add_module and Python_add_library build theirs:
#
#   find_package(Kiln CONFIG REQUIRED)
#   add_python_kernels(pkg_kernels pkg/kernels.py MODULE pkg.kernels ARCHITECTURES "80;90")
#   install(TARGETS pkg_kernels LIBRARY DESTINATION pkg)
#
# <target> is a MODULE library whose file is the built module:
# `<last name component><suffix>` (kernels.abi3.so) in OUTPUT_DIRECTORY (default: the current binary folder), so that
# install(TARGETS), $<TARGET_FILE:...> and OUTPUT_NAME/LIBRARY_OUTPUT_DIRECTORY
# work as for any module. Kiln writes the module into the target's private
# folder and its (trivial) link step copies it over the linked stub.
#
# A module that imports kiln (`from kiln import cuda`) stays Python, host code
# and all: its build is then the companion its kernels load, named
# `_<last name component>.kiln<suffix>` (_ops.kiln.abi3.so),
# and the package installs the source beside it (install(FILES ...)). The
# import is read from the source's top-level lines at configure time, and
# CMake configures again when the source changes.
#
# MODULE defaults to the source's file name without `.py`. The suffix says
# which CPython the module is for, as `kiln build --python-abi` takes it:
# PYTHON_ABI, else KILN_PYTHON_ABI, else abi3 (`.abi3.so`: one module for
# every CPython from 3.10 on; `interpreter` where the Python below is a
# free-threaded one, which has no stable ABI); cp313 or cp313t (free-threaded)
# name a module for one version (`.cpython-313-x86_64-linux-gnu.so`), and
# `interpreter` the EXT_SUFFIX of the Python below. KILN_PYTHON_EXT_SUFFIX overrides them
# all. That Python is KILN_PYTHON_EXECUTABLE, else Python3_EXECUTABLE, else
# Python_EXECUTABLE, else python3 on PATH; it imports a module that stays
# Python when its kernels read NumPy arrays or other values its host code
# computes at import (kiln.import_host_values).
#
# Architectures: ARCHITECTURES, else the CUDA_ARCHITECTURES property of
# <target> (set it after the call to change it), which starts as
# CMAKE_CUDA_ARCHITECTURES, else $CUDAARCHS at configure time; the grammar is
# CMake's (75;80-real;90-virtual, all, all-major). Unset or OFF: Kiln's default.
#
# Kiln records the source's path relative to CMAKE_SOURCE_DIR (in messages
# compiled into the module, debug information and cache keys), so that
# every checkout and build folder builds the same bytes; OPTIONS may add
# --file-prefix-map for paths outside it.
#
# The module is rebuilt when the source, the pyproject.toml Kiln reads
# signatures from, a link=[...] file or the kiln executable changes (a DEPFILE
# written by `kiln build --depfile`), or the command changes. Every module
# shares Kiln's specialization cache: KILN_CACHE_DIR (a CMake variable, else
# the environment's KILN_CACHE_DIR at build time, else ~/.cache/kiln). Remote
# caches behind it: KILN_REMOTE_CACHE (a CMake list of remotes, such as
# "redis://cache.internal:6379|read-only"; else the environment's
# KILN_REMOTE_CACHE at build time). See docs/cache.md.
# Under Ninja, kiln builds run in the `kiln` job pool when KILN_JOB_POOL_SIZE
# is set (each build is itself parallel; `-j N` in OPTIONS bounds that).

cmake_policy(PUSH)
cmake_policy(VERSION 3.20)
if(POLICY CMP0116)
  cmake_policy(SET CMP0116 NEW) # Ninja rewrites DEPFILE paths as Make does
endif()

function(_kiln_python out)
  foreach(_kiln_candidate KILN_PYTHON_EXECUTABLE Python3_EXECUTABLE Python_EXECUTABLE)
    if(${_kiln_candidate})
      set(${out} "${${_kiln_candidate}}" PARENT_SCOPE)
      return()
    endif()
  endforeach()
  find_program(_kiln_found_python NAMES python3 python REQUIRED)
  set(${out} "${_kiln_found_python}" PARENT_SCOPE)
endfunction()

# The Python's EXT_SUFFIX and whether it is free-threaded, asked once.
function(_kiln_ask_python suffix_out free_threaded_out)
  _kiln_python(_kiln_python)
  get_property(_kiln_known GLOBAL PROPERTY "_KILN_EXT_SUFFIX:${_kiln_python}" SET)
  if(NOT _kiln_known)
    execute_process(
      COMMAND "${_kiln_python}" -c
              "import sysconfig; print(sysconfig.get_config_var('EXT_SUFFIX'), int(bool(sysconfig.get_config_var('Py_GIL_DISABLED'))))"
      OUTPUT_VARIABLE _kiln_answer OUTPUT_STRIP_TRAILING_WHITESPACE
      RESULT_VARIABLE _kiln_status)
    separate_arguments(_kiln_answer)
    list(LENGTH _kiln_answer _kiln_count)
    if(NOT _kiln_status EQUAL 0 OR NOT _kiln_count EQUAL 2)
      message(FATAL_ERROR "add_python_kernels: cannot ask '${_kiln_python}' for its extension "
                          "suffix (EXT_SUFFIX); set KILN_PYTHON_EXECUTABLE or KILN_PYTHON_EXT_SUFFIX")
    endif()
    list(GET _kiln_answer 0 _kiln_suffix)
    list(GET _kiln_answer 1 _kiln_free_threaded)
    set_property(GLOBAL PROPERTY "_KILN_EXT_SUFFIX:${_kiln_python}" "${_kiln_suffix}")
    set_property(GLOBAL PROPERTY "_KILN_FREE_THREADED:${_kiln_python}" "${_kiln_free_threaded}")
  endif()
  get_property(_kiln_suffix GLOBAL PROPERTY "_KILN_EXT_SUFFIX:${_kiln_python}")
  get_property(_kiln_free_threaded GLOBAL PROPERTY "_KILN_FREE_THREADED:${_kiln_python}")
  set(${suffix_out} "${_kiln_suffix}" PARENT_SCOPE)
  set(${free_threaded_out} "${_kiln_free_threaded}" PARENT_SCOPE)
endfunction()

# The module file name suffix for the Python ABI `abi`, as kiln names it.
function(_kiln_ext_suffix out abi)
  if(KILN_PYTHON_EXT_SUFFIX)
    set(${out} "${KILN_PYTHON_EXT_SUFFIX}" PARENT_SCOPE)
  elseif(abi STREQUAL "abi3")
    set(${out} ".abi3.so" PARENT_SCOPE)
  elseif(abi STREQUAL "interpreter")
    _kiln_ask_python(_kiln_suffix _kiln_free_threaded)
    set(${out} "${_kiln_suffix}" PARENT_SCOPE)
  else()
    get_property(_kiln_executable GLOBAL PROPERTY KILN_EXECUTABLE)
    execute_process(COMMAND "${_kiln_executable}" targets --python-abi "${abi}" --json
                    OUTPUT_VARIABLE _kiln_json ERROR_QUIET)
    string(JSON _kiln_suffix ERROR_VARIABLE _kiln_no_suffix GET "${_kiln_json}" python
           extension_suffix)
    if(_kiln_no_suffix)
      string(JSON _kiln_why ERROR_VARIABLE _kiln_unreadable GET "${_kiln_json}" python error)
      if(_kiln_unreadable)
        set(_kiln_why "'${_kiln_executable} targets --json' did not say")
      endif()
      message(FATAL_ERROR "add_python_kernels: Python ABI '${abi}': ${_kiln_why}")
    endif()
    set(${out} "${_kiln_suffix}" PARENT_SCOPE)
  endif()
endfunction()

function(add_python_kernels target source)
  cmake_parse_arguments(PARSE_ARGV 2 ARG "" "MODULE;OUTPUT_DIRECTORY;PYTHON_ABI"
                        "ARCHITECTURES;OPTIONS")
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "add_python_kernels(${target}): unexpected arguments '${ARG_UNPARSED_ARGUMENTS}'")
  endif()
  get_property(_kiln_executable GLOBAL PROPERTY KILN_EXECUTABLE)
  if(NOT _kiln_executable)
    message(FATAL_ERROR "add_python_kernels(${target}): call find_package(Kiln CONFIG REQUIRED) first")
  endif()

  get_filename_component(_source "${source}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
  if(NOT ARG_MODULE)
    get_filename_component(ARG_MODULE "${_source}" NAME_WE)
  endif()
  string(REGEX REPLACE "^.*\\." "" _name "${ARG_MODULE}")
  if(NOT ARG_OUTPUT_DIRECTORY)
    set(ARG_OUTPUT_DIRECTORY "${CMAKE_CURRENT_BINARY_DIR}")
  endif()
  get_filename_component(_output_directory "${ARG_OUTPUT_DIRECTORY}" ABSOLUTE
                         BASE_DIR "${CMAKE_CURRENT_BINARY_DIR}")
  if(ARG_PYTHON_ABI)
    set(_abi "${ARG_PYTHON_ABI}")
  elseif(KILN_PYTHON_ABI)
    set(_abi "${KILN_PYTHON_ABI}")
  elseif(KILN_PYTHON_EXT_SUFFIX)
    set(_abi "")
  else()
    _kiln_ask_python(_interpreter_suffix _free_threaded)
    if(_free_threaded)
      set(_abi "interpreter")
    else()
      set(_abi "abi3")
    endif()
  endif()
  _kiln_ext_suffix(_suffix "${_abi}")

  # As `kiln build` decides: a module importing kiln gets a companion.
  file(STRINGS "${_source}" _kiln_imports
       REGEX "^(from[ \t]+kiln([ \t]|\\.)|import[ \t]+([^#]*,[ \t]*)?kiln([ \t,.]|$))")
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${_source}")
  if(_kiln_imports)
    set(_file_stem "_${_name}.kiln")
  else()
    set(_file_stem "${_name}")
  endif()

  # What kiln writes, in the target's private folder.
  set(_work "${CMAKE_CURRENT_BINARY_DIR}/CMakeFiles/${target}.dir/kiln")
  set(_built "${_work}/${_file_stem}${_suffix}")
  set(_depfile "${_work}/${_name}.d")

  # The MODULE library: a one-line stub, linked, then replaced by Kiln's module.
  get_property(_languages GLOBAL PROPERTY ENABLED_LANGUAGES)
  if("C" IN_LIST _languages)
    set(_stub "${CMAKE_CURRENT_BINARY_DIR}/kiln_stubs/${target}.c")
  elseif("CXX" IN_LIST _languages)
    set(_stub "${CMAKE_CURRENT_BINARY_DIR}/kiln_stubs/${target}.cpp")
  else()
    message(FATAL_ERROR "add_python_kernels(${target}): enable C or CXX in project() "
                        "(the target's link step needs a linker)")
  endif()
  if(NOT EXISTS "${_stub}")
    file(WRITE "${_stub}" "/* Replaced by the module kiln builds (add_python_kernels). */\n"
                          "typedef int kiln_add_python_kernels_stub;\n")
  endif()
  add_library(${target} MODULE "${_stub}" "${_built}")
  set_source_files_properties("${_built}" PROPERTIES EXTERNAL_OBJECT FALSE HEADER_FILE_ONLY TRUE)
  set_target_properties(${target} PROPERTIES
    PREFIX ""
    OUTPUT_NAME "${_file_stem}"
    SUFFIX "${_suffix}"
    LIBRARY_OUTPUT_DIRECTORY "${_output_directory}"
    LINK_DEPENDS "${_built}"
    KILN_MODULE "${ARG_MODULE}"
    KILN_SOURCE "${_source}")
  if(DEFINED ARG_ARCHITECTURES)
    # PARSE_ARGV keeps a quoted list ("75;80;90") one element, its
    # semicolons escaped: a list either way, as every CMake function takes.
    string(REPLACE "\\;" ";" _architectures "${ARG_ARCHITECTURES}")
    set_property(TARGET ${target} PROPERTY CUDA_ARCHITECTURES "${_architectures}")
  elseif(DEFINED CMAKE_CUDA_ARCHITECTURES)
    set_property(TARGET ${target} PROPERTY CUDA_ARCHITECTURES "${CMAKE_CUDA_ARCHITECTURES}")
  elseif(DEFINED ENV{CUDAARCHS})
    set_property(TARGET ${target} PROPERTY CUDA_ARCHITECTURES "$ENV{CUDAARCHS}")
  endif()
  add_custom_command(TARGET ${target} POST_BUILD
    COMMAND "${CMAKE_COMMAND}" -E copy "${_built}" "$<TARGET_FILE:${target}>"
    VERBATIM)

  set(_archs "$<TARGET_PROPERTY:${target},CUDA_ARCHITECTURES>")
  set(_command "${_kiln_executable}" build "${_source}" --module "${ARG_MODULE}"
               -o "${_work}" --ext-suffix "${_suffix}" --depfile "${_depfile}" --quiet
               --project-root "${CMAKE_SOURCE_DIR}"
               "$<$<BOOL:${_archs}>:--arch=$<JOIN:${_archs},$<COMMA>>>")
  if(_kiln_imports)
    # The interpreter that imports the module when its kernels read what its
    # host code computes.
    _kiln_python(_python)
    list(APPEND _command --python "${_python}")
  endif()
  if(KILN_CACHE_DIR)
    list(APPEND _command --cache-dir "${KILN_CACHE_DIR}")
  endif()
  foreach(_remote IN LISTS KILN_REMOTE_CACHE)
    list(APPEND _command "--remote-cache=${_remote}")
  endforeach()
  list(APPEND _command ${ARG_OPTIONS})
  set(_pool)
  if(KILN_JOB_POOL_SIZE AND CMAKE_GENERATOR MATCHES "Ninja")
    get_property(_pools GLOBAL PROPERTY JOB_POOLS)
    if(NOT _pools MATCHES "(^|;)kiln=")
      set_property(GLOBAL APPEND PROPERTY JOB_POOLS "kiln=${KILN_JOB_POOL_SIZE}")
    endif()
    set(_pool JOB_POOL kiln)
  endif()
  file(RELATIVE_PATH _shown "${CMAKE_BINARY_DIR}" "${_output_directory}/${_file_stem}${_suffix}")
  add_custom_command(
    OUTPUT "${_built}"
    COMMAND ${_command}
    DEPENDS "${_source}" "${_kiln_executable}"
    DEPFILE "${_depfile}"
    ${_pool}
    COMMENT "Building kernel module ${ARG_MODULE} (${_shown})"
    COMMAND_EXPAND_LISTS # drops the empty --arch
    VERBATIM)
endfunction()

cmake_policy(POP)
