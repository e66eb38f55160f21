# Run as a script by kiln_embed_file: writes INPUT's bytes to OUTPUT as a C array named SYMBOL.
file(READ ${INPUT} _hex HEX)
string(LENGTH "${_hex}" _len)
math(EXPR _size "${_len} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," _bytes "${_hex}")
string(REGEX REPLACE "((0x[0-9a-f][0-9a-f],){16})" "\\1\n  " _bytes "${_bytes}")
file(WRITE ${OUTPUT}
  "/* Generated from ${INPUT} by cmake/KilnEmbedRun.cmake. Do not edit. */\n"
  "#include <stddef.h>\n"
  "const unsigned char ${SYMBOL}[${_size} + 1] = {\n  ${_bytes}0x00};\n"
  "const size_t ${SYMBOL}_size = ${_size};\n")
