# Script behind the install_relocated_finds_drivers test: installs Kiln into a scratch prefix, moves the prefix
# elsewhere, and checks that the moved `kiln` still finds the moved Vulkan driver beside it (issue #13: installs
# that work where they are put) and says where it searched.
file(REMOVE_RECURSE ${WORK})
execute_process(COMMAND ${CMAKE_COMMAND} --install ${KILN_BUILD_DIR} --prefix ${WORK}/first
                RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "cmake --install failed (${rc}): ${err}")
endif()
file(RENAME ${WORK}/first ${WORK}/moved)
execute_process(COMMAND ${WORK}/moved/bin/kiln inspect --devices --device gpu
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}${err}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the moved kiln failed (${rc})")
endif()
