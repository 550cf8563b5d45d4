# Binaries for an older glibc than the build machine's: with
# KILN_GLIBC_LINK_ENVIRONMENT naming a folder that
# scripts/glibc-link-environment.sh made, every executable and library links
# against that folder's glibc stubs (so that it binds each glibc symbol at
# the version of that release, and the link fails where the release lacks
# one), with support/glibc_compat.c for the few newer functions that Debian's
# static libraries call, and every dependency outside glibc linked
# statically (KilnDependencies.cmake). The compiler's wheel is built so
# (scripts/build-wheel.sh), for glibc 2.28: manylinux_2_28.
set(KILN_GLIBC_LINK_ENVIRONMENT "" CACHE PATH
  "A folder of an older glibc's stubs (scripts/glibc-link-environment.sh) to link every binary against; empty: this machine's glibc")
if(NOT KILN_GLIBC_LINK_ENVIRONMENT)
  return()
endif()

set(_kiln_glibc_folder "${KILN_GLIBC_LINK_ENVIRONMENT}")
foreach(_kiln_file glibc-version libc.so libc.so.6 crt1.o libc_nonshared.a)
  if(NOT EXISTS "${_kiln_glibc_folder}/${_kiln_file}")
    message(FATAL_ERROR "Kiln: KILN_GLIBC_LINK_ENVIRONMENT=${_kiln_glibc_folder} has no ${_kiln_file}; "
      "make the folder with scripts/glibc-link-environment.sh")
  endif()
endforeach()
file(STRINGS "${_kiln_glibc_folder}/glibc-version" KILN_GLIBC_LINK_VERSION LIMIT_COUNT 1)
message(STATUS "Kiln: linking against glibc ${KILN_GLIBC_LINK_VERSION} from ${_kiln_glibc_folder}")

# Compiled when CMake configures, so that every link can name it without a
# build dependency on a target of its own.
set(_kiln_glibc_compat_source "${PROJECT_SOURCE_DIR}/support/glibc_compat.c")
set(KILN_GLIBC_COMPAT_OBJECT "${CMAKE_BINARY_DIR}/generated/glibc_compat.o")
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${_kiln_glibc_compat_source}")
file(MAKE_DIRECTORY "${CMAKE_BINARY_DIR}/generated")
execute_process(
  COMMAND "${CMAKE_C_COMPILER}" -O2 -fPIC -Wall -Werror -c "${_kiln_glibc_compat_source}"
          -o "${KILN_GLIBC_COMPAT_OBJECT}"
  RESULT_VARIABLE _kiln_glibc_compat_status
  ERROR_VARIABLE _kiln_glibc_compat_errors)
if(NOT _kiln_glibc_compat_status EQUAL 0)
  message(FATAL_ERROR "Kiln: cannot compile ${_kiln_glibc_compat_source}:\n${_kiln_glibc_compat_errors}")
endif()

# -B finds the folder's crt1.o, -L its libc.so, libm.so, ... before this
# machine's. LLD, because it takes archives in any order: the static
# dependencies need no ordering by hand.
# Before glibc 2.34 the threads, dynamic loading and clock functions were
# in libraries of their own, which this machine's CMake (FindThreads, for
# one) does not know to ask for: every link may have them, as it needs.
# (One SHELL: option, which CMake does not take apart to drop a repeated
# --as-needed.)
add_link_options("-B${_kiln_glibc_folder}" "-L${_kiln_glibc_folder}" -fuse-ld=lld
  "${KILN_GLIBC_COMPAT_OBJECT}" "SHELL:-Wl,--push-state,--as-needed -lpthread -ldl -lrt -Wl,--pop-state")

# kiln_static_library_path(<out> <name>): the static archive lib<name>.a
# where the linker would find lib<name>.so, for the dependencies that must
# be linked in.
function(kiln_static_library_path out name)
  find_library(_kiln_static_${name} "lib${name}.a" REQUIRED)
  set(${out} "${_kiln_static_${name}}" PARENT_SCOPE)
endfunction()

# kiln_link_statically(<imported target> <name> [<what the archive needs>...]):
# the target a find module or pkg-config made for lib<name>.so links
# lib<name>.a instead.
function(kiln_link_statically target name)
  kiln_static_library_path(archive ${name})
  get_target_property(type ${target} TYPE)
  if(type STREQUAL "INTERFACE_LIBRARY")
    set_target_properties(${target} PROPERTIES INTERFACE_LINK_LIBRARIES "${archive};${ARGN}")
  else()
    set_target_properties(${target} PROPERTIES IMPORTED_LOCATION "${archive}"
      INTERFACE_LINK_LIBRARIES "${ARGN}")
  endif()
endfunction()
