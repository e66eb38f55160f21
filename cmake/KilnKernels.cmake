# kiln_compile_kernels(<target> OUTPUT_DIR <dir> SOURCES <file.rs>...): compiles RS-style kernel sources with
# the project's own kilnc into <dir>/<name>.kmod at build time, and makes <target> depend on them.
# KILN_KILNC_EXECUTABLE, when set to a kilnc that exists, compiles them instead.
function(kiln_compile_kernels target)
  cmake_parse_arguments(K "" "OUTPUT_DIR" "SOURCES" ${ARGN})
  if(KILN_KILNC_EXECUTABLE AND EXISTS "${KILN_KILNC_EXECUTABLE}")
    set(_kilnc ${KILN_KILNC_EXECUTABLE})
    set(_kilnc_dep ${KILN_KILNC_EXECUTABLE})
  else()
    set(_kilnc $<TARGET_FILE:kilnc>)
    set(_kilnc_dep kilnc)
  endif()
  set(_outputs "")
  foreach(src ${K_SOURCES})
    get_filename_component(_abs ${src} ABSOLUTE)
    get_filename_component(_name ${src} NAME_WE)
    set(_out ${K_OUTPUT_DIR}/${_name}.kmod)
    add_custom_command(
      OUTPUT ${_out}
      COMMAND ${CMAKE_COMMAND} -E make_directory ${K_OUTPUT_DIR}
      COMMAND ${_kilnc} ${_abs} -o ${_out}
      DEPENDS ${_abs} ${_kilnc_dep}
      COMMENT "kilnc: ${_name}.kmod"
      VERBATIM)
    list(APPEND _outputs ${_out})
  endforeach()
  add_custom_target(${target}_kmods DEPENDS ${_outputs})
  add_dependencies(${target} ${target}_kmods)
endfunction()
