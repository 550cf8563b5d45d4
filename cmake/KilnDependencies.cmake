# Finds everything Kiln builds against, the CMake way. Every dependency is a
# Debian package except the CUDA toolkit, which comes from NVIDIA.

find_package(LLVM 19.1 CONFIG REQUIRED HINTS /usr/lib/llvm-19/lib/cmake/llvm)
message(STATUS "Kiln: LLVM ${LLVM_PACKAGE_VERSION} from ${LLVM_DIR}")

# LLVM's headers are not warning-clean under our flags; treat them as system
# headers. Debian ships LLVM as one shared library, and as static libraries.
add_library(kiln_llvm INTERFACE)
target_include_directories(kiln_llvm SYSTEM INTERFACE ${LLVM_INCLUDE_DIRS})
separate_arguments(_kiln_llvm_definitions NATIVE_COMMAND "${LLVM_DEFINITIONS}")
target_compile_definitions(kiln_llvm INTERFACE ${_kiln_llvm_definitions})

# LLD links host code into shared libraries for the CPU engine, in process.
# Its libraries are linked by file: their CMake targets bring the shared LLVM.
find_package(LLD CONFIG REQUIRED HINTS /usr/lib/llvm-19/lib/cmake/lld)
target_include_directories(kiln_llvm SYSTEM INTERFACE ${LLD_INCLUDE_DIRS})
add_library(kiln_lld INTERFACE)
if(KILN_GLIBC_LINK_ENVIRONMENT)
  kiln_static_library_path(_kiln_zlib z)
  kiln_static_library_path(_kiln_zstd zstd)
else()
  set(_kiln_zlib ZLIB::ZLIB)
  set(_kiln_zstd zstd::libzstd_shared)
endif()
target_link_libraries(kiln_lld INTERFACE $<TARGET_LINKER_FILE:lldELF> $<TARGET_LINKER_FILE:lldCommon>
                      ${_kiln_zlib} ${_kiln_zstd})

option(KILN_STATIC_LLVM "Link LLVM statically into kiln._compiler (and, in a wheel, kiln)" ON)
# A target whose KILN_STATIC_LLVM property is on links the parts of LLVM it
# uses statically: kiln._compiler, which a kernel's first call in development
# loads (loading them takes a fraction of loading Debian's whole libLLVM), and
# the kiln command of a wheel (which must not need Debian's LLVM). Everything
# else links the shared library.
set(_kiln_static_llvm "$<BOOL:$<TARGET_PROPERTY:KILN_STATIC_LLVM>>")
# The archives, by file: the CMake targets of Debian's LLVM name Polly,
# whose archive it does not ship (Kiln uses none of it).
execute_process(
  COMMAND "${LLVM_TOOLS_BINARY_DIR}/llvm-config" --link-static --libnames
          native nvptx passes ipo lto linker irreader bitwriter option debuginfodwarf windowsdriver
  OUTPUT_VARIABLE _kiln_llvm_archives OUTPUT_STRIP_TRAILING_WHITESPACE
  RESULT_VARIABLE _kiln_llvm_config_status)
if(NOT _kiln_llvm_config_status EQUAL 0)
  message(FATAL_ERROR "Kiln: llvm-config could not list LLVM's static libraries")
endif()
separate_arguments(_kiln_llvm_archives UNIX_COMMAND "${_kiln_llvm_archives}")
list(FILTER _kiln_llvm_archives EXCLUDE REGEX "Polly")
list(TRANSFORM _kiln_llvm_archives PREPEND "${LLVM_LIBRARY_DIR}/")
execute_process(
  COMMAND "${LLVM_TOOLS_BINARY_DIR}/llvm-config" --link-static --system-libs
  OUTPUT_VARIABLE _kiln_llvm_system_libraries OUTPUT_STRIP_TRAILING_WHITESPACE)
separate_arguments(_kiln_llvm_system_libraries UNIX_COMMAND "${_kiln_llvm_system_libraries}")
if(KILN_GLIBC_LINK_ENVIRONMENT)
  foreach(_kiln_name z zstd xml2)
    kiln_static_library_path(_kiln_archive ${_kiln_name})
    list(TRANSFORM _kiln_llvm_system_libraries REPLACE "^-l${_kiln_name}$" "${_kiln_archive}")
  endforeach()
endif()
set(_kiln_llvm_static_libraries ${_kiln_llvm_archives} ${_kiln_llvm_system_libraries})
# LLD initializes every target LLVM was built with (for link-time
# optimization, which Kiln's links never use): the targets left out get
# initializers that do nothing.
set(_kiln_absent_targets ${LLVM_TARGETS_TO_BUILD})
list(REMOVE_ITEM _kiln_absent_targets NVPTX ${LLVM_NATIVE_ARCH})
set(_kiln_absent_initializers "")
foreach(_kiln_target IN LISTS _kiln_absent_targets)
  foreach(_kiln_part TargetInfo Target TargetMC AsmPrinter AsmParser Disassembler TargetMCA)
    string(APPEND _kiln_absent_initializers "void LLVMInitialize${_kiln_target}${_kiln_part}() {}\n")
  endforeach()
endforeach()
set(_kiln_absent_source "${CMAKE_BINARY_DIR}/generated/absent_llvm_targets.cpp")
configure_file("${CMAKE_CURRENT_LIST_DIR}/absent_llvm_targets.cpp.in" "${_kiln_absent_source}" @ONLY)
add_library(kiln_llvm_absent_targets OBJECT "${_kiln_absent_source}")
target_link_libraries(kiln_llvm_absent_targets PRIVATE kiln_llvm)
set_target_properties(kiln_llvm_absent_targets PROPERTIES POSITION_INDEPENDENT_CODE ON)
# A target whose KILN_LLVM_IN_COMPILER_LIBRARY property is on gets LLVM
# from the shared compiler library (pipeline/CMakeLists.txt), and nothing
# here.
set(_kiln_llvm_in_library "$<BOOL:$<TARGET_PROPERTY:KILN_LLVM_IN_COMPILER_LIBRARY>>")
target_link_libraries(kiln_llvm INTERFACE
  "$<${_kiln_static_llvm}:${_kiln_llvm_static_libraries};$<TARGET_OBJECTS:kiln_llvm_absent_targets>>"
  "$<$<NOT:$<OR:${_kiln_static_llvm},${_kiln_llvm_in_library}>>:LLVM>")
# LLD resolves the archives in any order; LLVM's symbols stay inside, and
# what the target does not use is dropped (system libraries included: Z3
# and libxml2 serve parts of LLVM Kiln does not use). The one exception is
# the shared compiler library (pipeline/CMakeLists.txt), whose property
# KILN_EXPORTS_LLVM_SUPPORT is on: the kiln command and kiln._compiler call
# LLVM's Support library (llvm::Error, raw_ostream, ...) and llvm::Triple
# through it, so it exports the symbols of those archives (and
# libstdc++'s, so that one copy of its state, such as
# std::generic_category(), serves all three) and hides the rest.
set(_kiln_hidden_archives ${_kiln_llvm_archives})
list(FILTER _kiln_hidden_archives EXCLUDE REGEX "/libLLVM(Support|Demangle|TargetParser)\\.a$")
list(TRANSFORM _kiln_hidden_archives REPLACE "^.*/" "")
list(APPEND _kiln_hidden_archives liblldELF.a liblldCommon.a libgcc_eh.a libsqlite3.a libcrypto.a libhiredis.a libarchive.a
  libz.a libzstd.a libnettle.a libacl.a liblzma.a liblz4.a libbz2.a libxml2.a libicuuc.a
  libicudata.a)
list(JOIN _kiln_hidden_archives ":" _kiln_hidden_archives)
set(_kiln_exclude_libs "$<IF:$<BOOL:$<TARGET_PROPERTY:KILN_EXPORTS_LLVM_SUPPORT>>,\
LINKER:--exclude-libs=${_kiln_hidden_archives},LINKER:--exclude-libs=ALL>")
target_link_options(kiln_llvm INTERFACE
  "$<${_kiln_static_llvm}:-fuse-ld=lld;${_kiln_exclude_libs};LINKER:--gc-sections;LINKER:--as-needed>")

find_package(SQLite3 REQUIRED)
find_package(LibArchive REQUIRED)
# Linked for an older glibc (KilnGlibcLinkEnvironment.cmake), Kiln needs no
# shared library beyond glibc's: the ones Debian has are built against its
# own, newer glibc.
if(KILN_GLIBC_LINK_ENVIRONMENT)
  find_package(Threads REQUIRED)
  kiln_link_statically(SQLite::SQLite3 sqlite3 m ${CMAKE_DL_LIBS} Threads::Threads)
endif()
# The compiler's wheel (scripts/build-wheel.sh) links libarchive's static
# library: the shared one needs libxml2 and ICU (35 MB the wheel would have
# to carry) for archive formats Kiln never reads. What the archive needs
# beyond that comes as shared libraries, and --as-needed drops the unused.
option(KILN_STATIC_LIBARCHIVE "Link libarchive statically (so does every link for an older glibc)" OFF)
if(KILN_STATIC_LIBARCHIVE OR KILN_GLIBC_LINK_ENVIRONMENT)
  find_package(PkgConfig REQUIRED)
  pkg_check_modules(KILN_LIBARCHIVE REQUIRED libarchive)
  find_library(KILN_LIBARCHIVE_STATIC_LIBRARY libarchive.a HINTS ${KILN_LIBARCHIVE_LIBRARY_DIRS}
    REQUIRED)
  set(_kiln_libarchive_dependencies ${KILN_LIBARCHIVE_STATIC_LIBRARIES})
  list(REMOVE_ITEM _kiln_libarchive_dependencies archive)
  if(KILN_GLIBC_LINK_ENVIRONMENT)
    list(TRANSFORM _kiln_libarchive_dependencies REPLACE "^(.+)$" "lib\\1.a")
    get_filename_component(_kiln_libarchive_folder "${KILN_LIBARCHIVE_STATIC_LIBRARY}" DIRECTORY)
    list(TRANSFORM _kiln_libarchive_dependencies PREPEND "${_kiln_libarchive_folder}/")
  endif()
  set_target_properties(LibArchive::LibArchive PROPERTIES
    IMPORTED_LOCATION "${KILN_LIBARCHIVE_STATIC_LIBRARY}"
    INTERFACE_LINK_LIBRARIES "${_kiln_libarchive_dependencies}"
    INTERFACE_LINK_OPTIONS "LINKER:--as-needed")
endif()
# Ed25519 signatures of cache archives (EVP_PKEY_Q_keygen needs 3.0).
find_package(OpenSSL 3.0 REQUIRED COMPONENTS Crypto)
if(KILN_GLIBC_LINK_ENVIRONMENT)
  kiln_link_statically(OpenSSL::Crypto crypto ${CMAKE_DL_LIBS} Threads::Threads)
endif()
find_package(CLI11 CONFIG REQUIRED)
find_package(tomlplusplus CONFIG REQUIRED)
find_package(Python3 COMPONENTS Interpreter REQUIRED)

# The CUDA toolkit: CUDA_HOME, then CUDA_PATH, then /usr/local/cuda. The driver
# repeats this search at run time (backend/cuda_tools/cuda_toolkit.h) so that an installed
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
