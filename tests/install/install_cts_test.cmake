# Script behind the install_kiln_cts test: what a driver vendor does with an installed Kiln alone. Installs Kiln
# into a scratch prefix, checks that it carries bin/kiln-cts, the suite's modules (share/kiln/cts) and the sample
# driver's sources (share/kiln/sample-driver), moves the prefix elsewhere (an installation is relocatable), builds
# the sample driver from share/kiln/sample-driver as a project of its own against the moved prefix, installs it
# there, and runs the installed kiln-cts on it, which must find its modules beside itself and pass. Then checks
# that KILN_CTS_KMODS and --kmods choose the module folder, the flag first. Fails loudly at the first step that
# does not work.
file(REMOVE_RECURSE ${WORK})
set(prefix ${WORK}/prefix)

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
  set(run_output "${out}" PARENT_SCOPE)
endfunction()

# 1. The installed layout.
run(${CMAKE_COMMAND} --install ${KILN_BUILD_DIR} --prefix ${prefix})
set(expected bin/kiln-cts share/kiln/sample-driver/CMakeLists.txt share/kiln/sample-driver/exports.map)
file(GLOB kernels RELATIVE ${SUITE_KERNELS} ${SUITE_KERNELS}/*.rs)
foreach(kernel ${kernels})
  string(REGEX REPLACE "\\.rs$" ".kmod" kmod ${kernel})
  list(APPEND expected share/kiln/cts/${kmod})
endforeach()
file(GLOB_RECURSE sample_sources RELATIVE ${SAMPLE_DIR} ${SAMPLE_DIR}/*.cc ${SAMPLE_DIR}/*.h)
foreach(source ${sample_sources})
  list(APPEND expected share/kiln/sample-driver/${source})
endforeach()
foreach(file ${expected})
  if(NOT EXISTS ${prefix}/${file})
    message(FATAL_ERROR "the install lacks ${file}")
  endif()
endforeach()
list(LENGTH kernels kernel_count)
list(LENGTH sample_sources source_count)
message("layout: bin/kiln-cts, ${kernel_count} modules in share/kiln/cts, "
        "${source_count} sources in share/kiln/sample-driver")

# The installed kiln-cts names no path inside the build tree (such as the build's module folder). Its debug
# information may name the build folder itself, as the compiler's working directory, not a path below it.
string(REGEX REPLACE "([][+.*()^$?|\\\\])" "\\\\\\1" build_regex "${KILN_BUILD_DIR}")
file(STRINGS ${prefix}/bin/kiln-cts build_paths REGEX "${build_regex}/")
if(build_paths)
  message(FATAL_ERROR "the installed kiln-cts names paths in the build tree:\n${build_paths}")
endif()

# 2. Move the installation, then build and install the sample driver from its installed sources, against the
#    moved prefix alone.
set(moved ${WORK}/moved/kiln)
file(MAKE_DIRECTORY ${WORK}/moved)
file(RENAME ${prefix} ${moved})
run(${CMAKE_COMMAND} -S ${moved}/share/kiln/sample-driver -B ${WORK}/sample-build -DCMAKE_PREFIX_PATH=${moved}
    -DCMAKE_INSTALL_PREFIX=${moved} -DCMAKE_CXX_COMPILER=${CXX_COMPILER} -DCMAKE_BUILD_TYPE=Release)
run(${CMAKE_COMMAND} --build ${WORK}/sample-build)
run(${CMAKE_COMMAND} --install ${WORK}/sample-build)
set(driver ${moved}/lib/kiln/drivers/libkiln_sample_driver.so)
if(NOT EXISTS ${driver})
  message(FATAL_ERROR "installing the sample driver did not produce ${driver}")
endif()

# 3. The installed kiln-cts on the installed sample driver, with nothing saying where its modules are.
unset(ENV{KILN_CTS_KMODS})
run(${moved}/bin/kiln-cts --driver ${driver} --summary ${WORK}/cts-sample-driver.txt)
string(REGEX MATCH "RESULT: [^\n]*" result "${run_output}")
if(NOT result MATCHES "^RESULT: PASS")
  message(FATAL_ERROR "the installed kiln-cts did not pass the installed sample driver:\n${run_output}")
endif()
message("installed kiln-cts on the installed sample driver: ${result}")

# 4. KILN_CTS_KMODS names the module folder; --kmods wins over it. A folder without the suite's modules stops
#    kiln-cts before any test runs, naming the module it cannot open.
set(ENV{KILN_CTS_KMODS} ${WORK}/no-modules)
set(filter --gtest_filter=*Modules.LoadAndReportSupport* --gtest_brief=1)
execute_process(COMMAND ${moved}/bin/kiln-cts --driver builtin:cpu ${filter}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 1 OR NOT "${out}${err}" MATCHES "cannot open ${WORK}/no-modules/")
  message(FATAL_ERROR "with KILN_CTS_KMODS=${WORK}/no-modules kiln-cts should fail to open its modules there, "
                      "got exit status ${rc}:\n${out}\n${err}")
endif()
run(${moved}/bin/kiln-cts --driver builtin:cpu --kmods ${moved}/share/kiln/cts ${filter})
string(REGEX MATCH "RESULT: [^\n]*" result "${run_output}")
if(NOT result MATCHES "^RESULT: PASS")
  message(FATAL_ERROR "kiln-cts --kmods ${moved}/share/kiln/cts did not pass:\n${run_output}")
endif()
message("KILN_CTS_KMODS and --kmods: ${result}")
