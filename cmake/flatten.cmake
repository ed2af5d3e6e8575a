# Invoked by cubert_add_kernels: flattens one kernel-language file into OpenCL C and embeds it.
# -DCC -DSRC -DPRELUDE -DINCLUDES -DCL -DEMBED -DSYMBOL -DDEPFILE
get_filename_component(dir ${CL} DIRECTORY)
file(MAKE_DIRECTORY ${dir})
execute_process(
  COMMAND ${CC} -E -nostdinc -DCUBERT_CUBE_OPENCL=1 ${INCLUDES} -MD -MF ${DEPFILE} -MT ${CL}
          ${SRC}
  OUTPUT_VARIABLE flat ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "flattening ${SRC} failed:\n${err}")
endif()
# GCC's line markers (`# 12 "file" 2`) become `#line 12 "file"`, which OpenCL C compilers read,
# so build logs name the kernel file and line.
string(REGEX REPLACE "(^|\n)# ([0-9]+) (\"[^\"\n]*\")[^\n]*" "\\1#line \\2 \\3" flat "${flat}")
file(READ ${PRELUDE} prelude)
set(text "${prelude}\n#line 1 \"${SRC}\"\n${flat}")
file(WRITE ${CL}.tmp "${text}")
file(RENAME ${CL}.tmp ${CL})
file(READ ${CL} hex HEX)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
file(WRITE ${EMBED}.tmp
  "/* Generated from ${SRC}: its kernels as OpenCL C (cubert/cube.h). */\nconst char ${SYMBOL}[] = {${bytes}0x00};\n")
file(RENAME ${EMBED}.tmp ${EMBED})
