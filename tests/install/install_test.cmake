# Script behind the install_and_link test. Fails loudly at the first step that does not work.
file(REMOVE_RECURSE ${WORK})
set(prefix ${WORK}/prefix)

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
  set(run_output "${out}" PARENT_SCOPE)
endfunction()

run(${CMAKE_COMMAND} --install ${KILN_BUILD_DIR} --prefix ${prefix})
file(COPY ${SAMPLE} DESTINATION ${WORK}/src)

# 1. A separate CMake project with find_package(Kiln).
run(${CMAKE_COMMAND} -S ${PROJECT_DIR} -B ${WORK}/build -DCMAKE_PREFIX_PATH=${prefix}
    -DCMAKE_C_COMPILER=${C_COMPILER} -DSAMPLE_SOURCE=${WORK}/src/doc_c_api_sample.c)
run(${CMAKE_COMMAND} --build ${WORK}/build)
run(${WORK}/build/app ${MODEL})
message("find_package: ${run_output}")

# 2. The documented plain compile line with pkg-config, and nothing else: the binary starts without an rpath or
# LD_LIBRARY_PATH of its own (kiln.pc carries the rpath).
set(ENV{PKG_CONFIG_PATH} ${prefix}/lib/pkgconfig)
execute_process(COMMAND pkg-config --cflags --libs kiln OUTPUT_VARIABLE flags RESULT_VARIABLE rc
                OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "pkg-config does not find the installed kiln.pc")
endif()
separate_arguments(flags UNIX_COMMAND "${flags}")
run(${C_COMPILER} -std=c99 -Wall -Werror ${WORK}/src/doc_c_api_sample.c ${flags} -lm -o ${WORK}/app_pc)
run(${WORK}/app_pc ${MODEL})
message("pkg-config: ${run_output}")
