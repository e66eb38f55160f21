# Runs one command and passes only when it exits 0 and its output (stdout and stderr together) matches a regex.
# CTest's PASS_REGULAR_EXPRESSION alone ignores the exit status, so a crash or a sanitizer report after the
# expected output would pass; this checks both. Used through kiln_add_output_test (tests/CMakeLists.txt).
#   cmake -DCOMMAND=<program>|<arg>|... -DEXPECT=<regex> [-DEXIT=<status>] -P expect_output.cmake
# EXIT (default 0) is the exit status the command must end with: a command that must fail, with a message.
string(REPLACE "|" ";" _command "${COMMAND}")
execute_process(COMMAND ${_command} RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _err)
message("${_out}${_err}")
if(NOT DEFINED EXIT)
  set(EXIT 0)
endif()
if(NOT _rc STREQUAL "${EXIT}")
  message(FATAL_ERROR "FAILED: the command exited with ${_rc}, not ${EXIT}")
endif()
if(NOT "${_out}${_err}" MATCHES "${EXPECT}")
  message(FATAL_ERROR "FAILED: the output does not match ${EXPECT}")
endif()
