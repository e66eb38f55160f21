# cmake -DLLVM_NM=llvm-nm-19 -DRSLIB=<kiln_rslib.bc> -P nm_check.cmake
# kiln_rslib.bc must be self-contained: no undefined symbol (no libm, no libc), and it must define the core
# functions (a sanity check that the file is the library and not empty).
cmake_minimum_required(VERSION 3.25)
execute_process(COMMAND ${LLVM_NM} --undefined-only ${RSLIB} RESULT_VARIABLE rc OUTPUT_VARIABLE undef
                ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "llvm-nm failed on ${RSLIB}: ${err}")
endif()
string(STRIP "${undef}" undef)
if(NOT undef STREQUAL "")
  message(FATAL_ERROR "kiln_rslib.bc has undefined symbols:\n${undef}")
endif()
execute_process(COMMAND ${LLVM_NM} --defined-only ${RSLIB} OUTPUT_VARIABLE defined)
foreach(sym _Z4atanf _Z3expf _Z3logf _Z3sinf _Z3cosf _Z3powff _Z4tanhf _Z4sqrtf _Z4atanDv4_f _Z5atan2ff)
  if(NOT defined MATCHES " T ${sym}\n")
    message(FATAL_ERROR "kiln_rslib.bc does not define ${sym}")
  endif()
endforeach()
message(STATUS "kiln_rslib.bc: no undefined symbols")
