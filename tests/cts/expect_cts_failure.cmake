# Behind the cts_rejects_* tests: runs kiln-cts on a broken driver and passes only when kiln-cts fails it
# cleanly (exit status 1, not a crash), its output names the problem (EXPECTED), and the summary says FAIL.
execute_process(COMMAND ${CTS} --driver ${DRIVER} --gtest_filter=${FILTER} --gtest_brief=1
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
set(all "${out}\n${err}")
if(NOT rc STREQUAL "1")
  message(FATAL_ERROR "kiln-cts on ${DRIVER} should fail with exit status 1 (failures), got: ${rc}\n${all}")
endif()
if(NOT all MATCHES "${EXPECTED}")
  message(FATAL_ERROR "kiln-cts failed ${DRIVER} but its output does not say \"${EXPECTED}\":\n${all}")
endif()
if(NOT out MATCHES "RESULT: FAIL")
  message(FATAL_ERROR "the summary does not say RESULT: FAIL:\n${all}")
endif()
string(REGEX MATCH "==================== Kiln HAL conformance summary.*" summary "${out}")
message("kiln-cts rejected ${DRIVER} as expected (matched \"${EXPECTED}\"):\n${summary}")
