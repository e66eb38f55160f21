# kiln_compile_kernels(<target> OUTPUT_DIR <dir> SOURCES <file.rs>...): compiles RS-style kernel sources with
# the project's own kilnc into <dir>/<name>.kmod at build time, and makes <target> depend on them.
function(kiln_compile_kernels target)
  cmake_parse_arguments(K "" "OUTPUT_DIR" "SOURCES" ${ARGN})
  set(_outputs "")
  foreach(src ${K_SOURCES})
    get_filename_component(_abs ${src} ABSOLUTE)
    get_filename_component(_name ${src} NAME_WE)
    set(_out ${K_OUTPUT_DIR}/${_name}.kmod)
    add_custom_command(
      OUTPUT ${_out}
      COMMAND ${CMAKE_COMMAND} -E make_directory ${K_OUTPUT_DIR}
      COMMAND $<TARGET_FILE:kilnc> ${_abs} -o ${_out}
      DEPENDS ${_abs} kilnc
      COMMENT "kilnc: ${_name}.kmod"
      VERBATIM)
    list(APPEND _outputs ${_out})
  endforeach()
  add_custom_target(${target}_kmods DEPENDS ${_outputs})
  add_dependencies(${target} ${target}_kmods)
endfunction()
