# External dependencies, all from Debian 12 packages (scripts/setup.sh installs them). Nothing is downloaded at
# build time. See README.md in this folder for what each is for and which version is pinned.

find_program(KILN_FLATC flatc REQUIRED)
execute_process(COMMAND ${KILN_FLATC} --version OUTPUT_VARIABLE _flatc_version OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT _flatc_version MATCHES "2\\.0\\.8")
  message(WARNING "Kiln is tested with flatc 2.0.8, found: ${_flatc_version}")
endif()
find_path(KILN_FLATBUFFERS_INCLUDE flatbuffers/flatbuffers.h REQUIRED)
# Header-only use: Kiln needs no text-to-number parsing, so the locale-independent parser (which lives in
# libflatbuffers, not PIC in Debian's static build) is switched off and nothing is linked.
add_library(kiln_flatbuffers INTERFACE)
target_include_directories(kiln_flatbuffers SYSTEM INTERFACE ${KILN_FLATBUFFERS_INCLUDE})
target_compile_definitions(kiln_flatbuffers INTERFACE FLATBUFFERS_LOCALE_INDEPENDENT=0)

# kiln_flatc_generate(<target> <schema.fbs>): generates <name>_generated.h into the build tree and adds it to
# <target>'s sources and include path.
function(kiln_flatc_generate target schema)
  get_filename_component(_name ${schema} NAME_WE)
  set(_out_dir ${CMAKE_CURRENT_BINARY_DIR}/generated)
  set(_out ${_out_dir}/${_name}_generated.h)
  add_custom_command(
    OUTPUT ${_out}
    COMMAND ${KILN_FLATC} --cpp --scoped-enums -o ${_out_dir} ${schema}
    DEPENDS ${schema}
    COMMENT "flatc: generating ${_name}_generated.h"
    VERBATIM)
  target_sources(${target} PRIVATE ${_out})
  target_include_directories(${target} PRIVATE ${_out_dir})
endfunction()

find_package(GTest REQUIRED)
find_package(benchmark QUIET)
find_package(Threads REQUIRED)

# LLVM and Clang 19, linked as the shared libLLVM/libclang-cpp to keep links fast.
find_package(LLVM REQUIRED CONFIG PATHS /usr/lib/llvm-19/lib/cmake/llvm NO_DEFAULT_PATH)
if(NOT LLVM_VERSION_MAJOR EQUAL 19)
  message(FATAL_ERROR "Kiln needs LLVM 19, found ${LLVM_PACKAGE_VERSION} (run scripts/setup.sh)")
endif()
find_package(Clang REQUIRED CONFIG PATHS /usr/lib/llvm-19/lib/cmake/clang NO_DEFAULT_PATH)
if(LLVM_FOUND)
  add_library(kiln_llvm INTERFACE)
  target_include_directories(kiln_llvm SYSTEM INTERFACE ${LLVM_INCLUDE_DIRS})
  target_compile_definitions(kiln_llvm INTERFACE ${LLVM_DEFINITIONS})
  target_link_libraries(kiln_llvm INTERFACE LLVM)
endif()
if(Clang_FOUND)
  add_library(kiln_clang INTERFACE)
  target_include_directories(kiln_clang SYSTEM INTERFACE ${CLANG_INCLUDE_DIRS})
  target_link_libraries(kiln_clang INTERFACE clang-cpp kiln_llvm)
endif()
set(KILN_LLVM_FOUND ${LLVM_FOUND})
set(KILN_CLANG_FOUND ${Clang_FOUND})

# glslang 12 and SPIRV-Tools (Debian: glslang-dev spirv-tools), for kilnc's GPU lowering (GLSL to SPIR-V,
# validated in-process). Debian ships them as static libraries that must be linked as one group.
# kiln_glslang links both; KILN_GLSLANG_FOUND says whether they are there.
set(KILN_GLSLANG_FOUND TRUE)
set(_kiln_glslang_group "")
foreach(_lib SPIRV glslang MachineIndependent OSDependent GenericCodeGen OGLCompiler
             glslang-default-resource-limits SPIRV-Tools-opt SPIRV-Tools)
  find_library(KILN_GLSLANG_LIB_${_lib} NAMES lib${_lib}.a ${_lib})
  if(NOT KILN_GLSLANG_LIB_${_lib})
    set(KILN_GLSLANG_FOUND FALSE)
  endif()
  list(APPEND _kiln_glslang_group ${KILN_GLSLANG_LIB_${_lib}})
endforeach()
find_path(KILN_GLSLANG_INCLUDE glslang/Public/ShaderLang.h)
find_path(KILN_SPIRV_TOOLS_HEADERS spirv-tools/libspirv.hpp)
if(KILN_GLSLANG_FOUND AND KILN_GLSLANG_INCLUDE AND KILN_SPIRV_TOOLS_HEADERS)
  add_library(kiln_glslang INTERFACE)
  target_include_directories(kiln_glslang SYSTEM INTERFACE ${KILN_GLSLANG_INCLUDE} ${KILN_SPIRV_TOOLS_HEADERS})
  target_link_libraries(kiln_glslang INTERFACE "-Wl,--start-group" ${_kiln_glslang_group} "-Wl,--end-group"
                        Threads::Threads)
else()
  set(KILN_GLSLANG_FOUND FALSE)
  message(WARNING "glslang or SPIRV-Tools not found (Debian: glslang-dev spirv-tools): kilnc writes no SPIR-V")
endif()

# XNNPACK (with pthreadpool, its thread pool): the host engine for builtin float ops (ops/xnnpack). Optional:
# without it every builtin op runs on its reference kernel.
find_path(KILN_XNNPACK_INCLUDE xnnpack.h)
find_path(KILN_PTHREADPOOL_INCLUDE pthreadpool.h)
find_library(KILN_XNNPACK_LIB XNNPACK)
find_library(KILN_PTHREADPOOL_LIB pthreadpool)
if(KILN_XNNPACK_INCLUDE AND KILN_PTHREADPOOL_INCLUDE AND KILN_XNNPACK_LIB AND KILN_PTHREADPOOL_LIB)
  set(KILN_HAVE_XNNPACK ON)
  add_library(kiln_xnnpack INTERFACE)
  target_include_directories(kiln_xnnpack SYSTEM INTERFACE ${KILN_XNNPACK_INCLUDE} ${KILN_PTHREADPOOL_INCLUDE})
  target_link_libraries(kiln_xnnpack INTERFACE ${KILN_XNNPACK_LIB} ${KILN_PTHREADPOOL_LIB})
else()
  set(KILN_HAVE_XNNPACK OFF)
  message(WARNING "XNNPACK not found: builtin ops run on their reference kernels only (Debian: libxnnpack-dev "
                  "libpthreadpool-dev)")
endif()
