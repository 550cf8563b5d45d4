# Finds everything Kiln builds against, the CMake way. Every dependency is a
# Debian package except the CUDA toolkit, which comes from NVIDIA.

find_package(LLVM 19.1 CONFIG REQUIRED HINTS /usr/lib/llvm-19/lib/cmake/llvm)
message(STATUS "Kiln: LLVM ${LLVM_PACKAGE_VERSION} from ${LLVM_DIR}")

# LLVM's headers are not warning-clean under our flags; treat them as system
# headers. Debian ships LLVM as one shared library.
add_library(kiln_llvm INTERFACE)
target_include_directories(kiln_llvm SYSTEM INTERFACE ${LLVM_INCLUDE_DIRS})
separate_arguments(_kiln_llvm_definitions NATIVE_COMMAND "${LLVM_DEFINITIONS}")
target_compile_definitions(kiln_llvm INTERFACE ${_kiln_llvm_definitions})
target_link_libraries(kiln_llvm INTERFACE LLVM)

# LLD links host code into shared libraries for the CPU engine, in process.
find_package(LLD CONFIG REQUIRED HINTS /usr/lib/llvm-19/lib/cmake/lld)
target_include_directories(kiln_llvm SYSTEM INTERFACE ${LLD_INCLUDE_DIRS})

find_package(SQLite3 REQUIRED)
find_package(LibArchive REQUIRED)
find_package(CLI11 CONFIG REQUIRED)
find_package(tomlplusplus CONFIG REQUIRED)
find_package(Python3 COMPONENTS Interpreter REQUIRED)

# The CUDA toolkit: CUDA_HOME, then CUDA_PATH, then /usr/local/cuda. The driver
# repeats this search at run time (backend/cuda_toolkit.h) so that an installed
# kiln follows the user's toolkit, not the one it was built with.
if(NOT CUDAToolkit_ROOT)
  if(DEFINED ENV{CUDA_HOME})
    set(CUDAToolkit_ROOT "$ENV{CUDA_HOME}")
  elseif(DEFINED ENV{CUDA_PATH})
    set(CUDAToolkit_ROOT "$ENV{CUDA_PATH}")
  else()
    set(CUDAToolkit_ROOT "/usr/local/cuda")
  endif()
endif()
find_package(CUDAToolkit 12.0 REQUIRED)
foreach(_kiln_tool ptxas fatbinary nvcc)
  string(TOUPPER "${_kiln_tool}" _kiln_tool_var)
  find_program(KILN_${_kiln_tool_var}_EXECUTABLE ${_kiln_tool}
    HINTS "${CUDAToolkit_BIN_DIR}" NO_DEFAULT_PATH REQUIRED)
endforeach()
find_file(KILN_LIBDEVICE libdevice.10.bc
  HINTS "${CUDAToolkit_LIBRARY_ROOT}/nvvm/libdevice" "${CUDAToolkit_ROOT}/nvvm/libdevice"
  NO_DEFAULT_PATH REQUIRED)
find_library(KILN_NVJITLINK_LIBRARY nvJitLink
  HINTS "${CUDAToolkit_LIBRARY_DIR}" NO_DEFAULT_PATH REQUIRED)
message(STATUS "Kiln: CUDA toolkit ${CUDAToolkit_VERSION} at ${CUDAToolkit_ROOT}")

if(KILN_BUILD_TESTS)
  find_package(GTest CONFIG REQUIRED)
endif()
