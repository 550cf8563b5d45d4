# Where `cmake --install` puts Kiln. Two layouts:
#
#   a prefix (default)        bin/kiln, share/man/man1/kiln.1
#                             lib/kiln/ (the shared compiler library, where
#                             KILN_SHARED_COMPILER_LIBRARY builds one)
#                             lib/cmake/Kiln/KilnConfig.cmake (+ version, AddPythonKernels)
#                             lib/python3.X/site-packages/kiln/ (KILN_INSTALL_PYTHONDIR)
#   a wheel (scikit-build-    the kiln command in the wheel's scripts (the
#   core sets SKBUILD)        environment's bin/), the package at the root of
#                             site-packages, its CMake config in kiln/cmake/
#
# in two components: `runtime` (the kiln package as built modules need it,
# what the kiln-runtime distribution holds) and `compiler` (everything else).
find_package(Python3 COMPONENTS Interpreter REQUIRED)

# scikit-build-core passes SKBUILD in the cache; drop it so that a build
# tree that `pip install` reused installs as a prefix again when configured
# without it.
set(KILN_WHEEL_LAYOUT OFF)
if(SKBUILD)
  set(KILN_WHEEL_LAYOUT ON)
  set(_kiln_scripts_dir "${SKBUILD_SCRIPTS_DIR}")
  set(_kiln_data_dir "${SKBUILD_DATA_DIR}")
endif()
unset(SKBUILD CACHE)

set(KILN_INSTALL_PYTHONDIR
  "lib/python${Python3_VERSION_MAJOR}.${Python3_VERSION_MINOR}/site-packages"
  CACHE STRING "Where `cmake --install` puts the kiln Python package, relative to the prefix")
set(KILN_INSTALL_CMAKEDIR "lib/cmake/Kiln" CACHE STRING
  "Where `cmake --install` puts KilnConfig.cmake, relative to the prefix")

if(KILN_WHEEL_LAYOUT)
  set(KILN_PYTHON_DESTINATION ".")
  set(KILN_BIN_DESTINATION "${_kiln_scripts_dir}")
  set(KILN_CMAKE_DESTINATION "kiln/cmake")
  # The wheel's data: the environment's share/man/man1.
  set(KILN_MAN_DESTINATION "${_kiln_data_dir}/share/man/man1")
  # The environment's lib/kiln/: the shared compiler library.
  set(KILN_LIBRARY_DESTINATION "${_kiln_data_dir}/lib/kiln")
  # The wheel's own folder of data and scripts, <name>-<version>.data/.
  string(REGEX REPLACE "[-_.]+" "_" _kiln_wheel_name "${SKBUILD_PROJECT_NAME}")
  set(KILN_WHEEL_DATA_FOLDER "${_kiln_wheel_name}-${SKBUILD_PROJECT_VERSION}.data")
  # site-packages/kiln/cmake -> the environment (lib/python3.X/site-packages).
  set(KILN_CONFIG_TO_PREFIX "../../../../..")
else()
  set(KILN_PYTHON_DESTINATION "${KILN_INSTALL_PYTHONDIR}")
  set(KILN_BIN_DESTINATION "bin")
  set(KILN_CMAKE_DESTINATION "${KILN_INSTALL_CMAKEDIR}")
  set(KILN_MAN_DESTINATION "share/man/man1")
  set(KILN_LIBRARY_DESTINATION "lib/kiln")
  file(RELATIVE_PATH KILN_CONFIG_TO_PREFIX "/kiln-prefix/${KILN_INSTALL_CMAKEDIR}" "/kiln-prefix")
endif()

# kiln_install_strip_debug(<target> <destination> <component>): after
# install(TARGETS), removes the debug information of the installed copy
# (RelWithDebInfo builds carry hundreds of megabytes of it).
function(kiln_install_strip_debug target destination component)
  if(NOT KILN_INSTALL_STRIP_DEBUG OR NOT CMAKE_STRIP)
    return()
  endif()
  if(IS_ABSOLUTE "${destination}")
    set(_path "\$ENV{DESTDIR}${destination}/$<TARGET_FILE_NAME:${target}>")
  else()
    set(_path "\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${destination}/$<TARGET_FILE_NAME:${target}>")
  endif()
  install(CODE "execute_process(COMMAND \"${CMAKE_STRIP}\" --strip-debug \"${_path}\")"
    COMPONENT ${component})
endfunction()
