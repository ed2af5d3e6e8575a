# Renames the sanitizer callbacks of a kernel file's sanitize copy (cubert_add_kernels):
# every undefined __tsan_* and __ubsan_* symbol of IN becomes cubert_san_tsan_* /
# cubert_san_ubsan_* in OUT, which the CPU server implements (backends/cpu/sanitize.c), so the
# object never calls into a real TSan or UBSan runtime (KCSAN-style).
# cmake -DNM=nm -DOBJCOPY=objcopy -DIN=a.o -DOUT=b.o -P sanitize_rename.cmake
execute_process(COMMAND ${NM} -u ${IN} OUTPUT_VARIABLE out RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "sanitize_rename: ${NM} -u ${IN} failed (${rc})")
endif()
string(REGEX MATCHALL "__(tsan|ubsan)_[A-Za-z0-9_]+" syms "${out}")
set(map "")
if(syms)
  list(REMOVE_DUPLICATES syms)
endif()
foreach(sym ${syms})
  string(REGEX REPLACE "^__(tsan|ubsan)_" "cubert_san_\\1_" renamed ${sym})
  string(APPEND map "${sym} ${renamed}\n")
endforeach()
file(WRITE ${OUT}.syms "${map}")
execute_process(COMMAND ${OBJCOPY} --redefine-syms=${OUT}.syms ${IN} ${OUT} RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "sanitize_rename: ${OBJCOPY} failed (${rc})")
endif()
