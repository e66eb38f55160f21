# Behind kiln_inspect_*: runs `kiln inspect MODULE --device gpu --driver DRIVER` and passes only when it exits 0
# and its output holds every line fragment of EXPECTED (a list, each matched literally).
execute_process(COMMAND ${KILN} inspect ${MODULE} --device gpu --driver ${DRIVER}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
set(all "${out}\n${err}")
if(NOT rc STREQUAL "0")
  message(FATAL_ERROR "kiln inspect ${MODULE} exited with ${rc}:\n${all}")
endif()
foreach(fragment IN LISTS EXPECTED)
  string(FIND "${all}" "${fragment}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "kiln inspect ${MODULE}: the output does not say \"${fragment}\":\n${all}")
  endif()
endforeach()
message("${out}")
