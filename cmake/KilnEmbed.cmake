# kiln_embed_file(<target> <file> <symbol>): compiles <file>'s bytes into <target> as
#   const unsigned char <symbol>[]; const size_t <symbol>_size;   (C linkage)
# The file is re-embedded whenever it changes. Used for the demo model and for bitcode libraries.
set(KILN_EMBED_SCRIPT ${CMAKE_CURRENT_LIST_DIR}/KilnEmbedRun.cmake)

function(kiln_embed_file target file symbol)
  get_filename_component(_abs ${file} ABSOLUTE)
  set(_out ${CMAKE_CURRENT_BINARY_DIR}/embedded/${symbol}.c)
  add_custom_command(
    OUTPUT ${_out}
    COMMAND ${CMAKE_COMMAND} -DINPUT=${_abs} -DOUTPUT=${_out} -DSYMBOL=${symbol} -P ${KILN_EMBED_SCRIPT}
    DEPENDS ${_abs} ${KILN_EMBED_SCRIPT}
    COMMENT "Embedding ${file} as ${symbol}"
    VERBATIM)
  target_sources(${target} PRIVATE ${_out})
endfunction()
