# cubert_add_kernels(<target> FILES a.cube.c ... [PREFIX <symbol prefix>] [EXPORT <macro>]
#                    [INCLUDE_DIRS dir ...] [FIBERS] [NO_SANITIZE])
#
# Adds kernel-language files (cubert/cube.h) to <target>. Each file is
#   - compiled as C for the CPU server (-O3 outside Debug builds: phases vectorise across units
#     only with GCC's complete unrolling; -fopenmp-simd for the unit loops, no OpenMP runtime;
#     -ffp-contract=off to round like the OpenCL side), and
#   - flattened by the C preprocessor with CUBERT_CUBE_OPENCL defined, `#line` directives kept,
#     behind cubert/cube_prelude.cl, into <build>/cubert_kernels/<id>.cl, which is embedded as
#     `const char cubert_cube_src_<id>[]` and referenced by the file's kernel definitions.
# CUBERT_KERNEL_ARCH (cache variable, default empty: the compiler's baseline, e.g. SSE2 on
# x86-64) adds -march=<value> to the C side of every kernel file, e.g. `native` or `x86-64-v3`:
# wider vectors for the CPU server's loops (the tiled SGEMM example runs 2-2.5x faster with
# -march=native here) at the price of binaries that need that CPU. The options are set as the
# file's COMPILE_OPTIONS property, which replaces earlier values: append your own afterwards.
# PREFIX names the definitions (`const cubert_kernel_def <PREFIX><kernel>`; default: the bare
# kernel name), EXPORT is placed in front of them (e.g. a visibility macro).
#
# The language's rules fail the build on both sides. The C side: SYNC_CUBE() in a UNIT_KERNEL
# or inside a PHASE is a static assertion stating the rule, `size_t`, `printf`, `malloc` and
# (without CUBE_NEEDS_FP64) `double` are poisoned, variable-length arrays are errors
# (-Werror=vla), and the generated code is clean under -Wall -Wextra -Wpedantic. The OpenCL
# side: with CUBERT_CHECK_KERNELS on (the default inside cubert's repository; OFF by default
# for an installed cubert, where it needs the cubert-kernel-check tool), each flattened file is
# built with the first OpenCL device when it changes, before <target> (a target
# <target>_opencl_check), so that what only an OpenCL compiler rejects fails the build with
# the compiler's log at the kernel file's line. Without an OpenCL device the check is skipped.
# OPENCL_CHECK_APART makes that check a target of its own built with `all` instead of a
# dependency of <target> (cubert's library: the tool itself links the library); NO_OPENCL_CHECK
# leaves the files out of it (a test's deliberately broken kernel).
set(CUBERT_KERNELS_CMAKE_DIR ${CMAKE_CURRENT_LIST_DIR})

# The kernel sanitizer (docs/debugging.md): with GCC, binutils' nm and objcopy, each kernel file
# is compiled twice more with CUBERT_CUBE_SANITIZE and -fsanitize=thread,bounds-strict,
# integer-divide-by-zero as OBJECT
# libraries <target>_san_<id> and <target>_san_zero_<id> (private memory filled with 0xfe bytes
# or zeroed), whose __tsan_*/__ubsan_* calls sanitize_rename.cmake renames to the CPU server's
# cubert_san_* (so a real TSan/UBSan runtime never sees them); the renamed objects are linked
# into <target> (an OBJECT library target instead lists them in its property
# CUBERT_KERNEL_OBJECTS, for the libraries made from it). The main copy then carries the
# sanitized functions as cpu_sanitize and cpu_sanitize_zero, which validate mode runs. The first
# copy always carries line tables (-g1), from which the CPU server names each report's source
# line. CUBERT_KERNEL_SANITIZER=OFF builds no sanitize copy; NO_SANITIZE leaves them out for the
# files of one call (kernels that a target never runs in validate mode, such as a test's second
# copy of a file).
if(NOT DEFINED CUBERT_KERNEL_SANITIZER)
  set(CUBERT_KERNEL_SANITIZER ON)
endif()
function(cubert_kernel_sanitizer_usable out)
  set(ok OFF)
  if(CUBERT_KERNEL_SANITIZER AND CMAKE_C_COMPILER_ID STREQUAL "GNU" AND CMAKE_OBJCOPY
     AND CMAKE_NM)
    set(ok ON)
  endif()
  set(${out} ${ok} PARENT_SCOPE)
endfunction()

# Writes `text` to `path` unless it already holds exactly that, so that what depends on the file
# is not rebuilt by a configure that changed nothing in it.
function(cubert_write_if_changed path text)
  set(old "")
  if(EXISTS ${path})
    file(READ ${path} old)
  endif()
  if(NOT old STREQUAL text)
    file(WRITE ${path} "${text}")
  endif()
endfunction()

# Sets `out` ON when kernel file `path` may leave private memory unwritten before a read, so that
# its zeroed-private sanitize copy is worth building: an EXCLUSIVE value or array, or a
# declaration without an initialiser ("float a[4];", "uint32_t x, y;") outside a struct, found in
# its text without comments. A textual test: a declaration that a macro of another file makes is
# not seen (that file then gets no private-memory check: docs/debugging.md).
function(cubert_kernel_file_has_uninit path out)
  file(READ ${path} text)
  string(REGEX REPLACE "/\\*([^*]|\\*+[^*/])*\\*+/" "" text "${text}")
  string(REGEX REPLACE "//[^\n]*" "" text "${text}")
  string(REGEX REPLACE "(struct|union)[ \t\n]*[A-Za-z0-9_]*[ \t\n]*{[^}]*}" "" text "${text}")
  set(found OFF)
  if(text MATCHES "EXCLUSIVE(_ARRAY)?[ \t]*\\(")
    set(found ON)
  else()
    string(REGEX MATCHALL "(^|[;{}\n])[ \t]*[A-Za-z_][A-Za-z0-9_]*[ \t*]+[A-Za-z_][A-Za-z0-9_]*[ \t]*(\\[[^]\n]*\\][ \t]*)*[;,]" decls "${text}")
    foreach(d IN LISTS decls)
      if(NOT d MATCHES "^[;{}\n]?[ \t]*(return|goto|break|continue|case|else|do|typedef)[ \t*]")
        set(found ON)
        break()
      endif()
    endforeach()
  endif()
  set(${out} ${found} PARENT_SCOPE)
endfunction()

# Adds the sanitize copies of kernel file `path` (identifier `id`; `source`: the file as written,
# when `path` is the phase transform's output) to `target`; sets `out_defs`
# to the definitions the main copy needs. Two copies, alike but for how private variables start:
# filled with 0xfe bytes (`<kernel>_sanitize_cpu_`, the one whose checks report) and zeroed
# (`<kernel>_sanitize_zero_cpu_`, without line tables: it never reports a line): validate mode
# runs the second after the first on copies of the buffers and reports an output that differs, a
# private variable read before it was written (backends/cpu/san_private.c). The second is built
# only for a file that may leave private memory unwritten (cubert_kernel_file_has_uninit): the
# other copy would be the same code.
function(cubert_add_kernel_sanitize target path source id symbol prefix out_dir includes
         out_defs)
  get_filename_component(dir ${path} DIRECTORY)
  # The include is relative to the wrapper, so that the wrapper's text (and so a compiler cache's
  # key) is the same in every clone whose build folder sits at the same place in the tree.
  file(RELATIVE_PATH inc ${out_dir} ${path})
  get_property(phase_target GLOBAL PROPERTY CUBERT_KERNEL_PHASE_TARGET_${target}_${id})
  get_target_property(type ${target} TYPE)
  set(fills pattern)
  set(defs_out CUBERT_CUBE_HAVE_SANITIZE=1)
  cubert_kernel_file_has_uninit(${source} uninit)
  # The test reads the file at configure time: an edit configures again.
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${source})
  if(uninit)
    list(APPEND fills zero)
    list(APPEND defs_out CUBERT_CUBE_HAVE_SANITIZE_ZERO=1)
  endif()
  foreach(fill ${fills})
    set(suffix "")
    set(fill_defs "")
    # -g1 (after the build type's flags, so it wins): line tables and inlined-call records in
    # every build type, Release included, which the CPU server reads to name each report's source
    # line (backends/cpu/san_symbols.c); no variable records, so the object stays small.
    set(debug -g1)
    if(fill STREQUAL "zero")
      set(suffix _zero)
      set(fill_defs CUBERT_CUBE_SANITIZE_ZERO=1)
      set(debug -g0)
    endif()
    set(wrapper ${out_dir}/${id}_sanitize${suffix}.c)
    set(text "/* generated: the kernel sanitizer's copy of ${inc} (private memory: ${fill}) */\n")
    string(APPEND text "#include \"${inc}\"\n")
    cubert_write_if_changed(${wrapper} "${text}")
    string(MAKE_C_IDENTIFIER "${target}_san${suffix}_${id}" lib)
    add_library(${lib} OBJECT ${wrapper})
    if(phase_target)
      add_dependencies(${lib} ${phase_target})
    endif()
    set_source_files_properties(${wrapper} TARGET_DIRECTORY ${lib} PROPERTIES
                                OBJECT_DEPENDS ${path})
    target_include_directories(${lib} PRIVATE ${includes} ${dir}
                               $<TARGET_PROPERTY:${target},INCLUDE_DIRECTORIES>)
    set(defs CUBERT_CUBE_SANITIZE=1 CUBERT_CUBE_SOURCE=${symbol} ${fill_defs})
    if(prefix)
      list(APPEND defs CUBERT_KERNEL_PREFIX=${prefix})
    endif()
    target_compile_definitions(${lib} PRIVATE ${defs})
    # No other sanitizer of the build (CUBERT_SANITIZE) instruments this copy: its callbacks are
    # the CPU server's. Unused static functions: a hand-written override the copy does not call.
    target_compile_options(${lib} PRIVATE ${debug} -fno-sanitize=all
                           -fsanitize=thread,bounds-strict,integer-divide-by-zero
                           --param=tsan-instrument-func-entry-exit=0
                           -ftrivial-auto-var-init=${fill} -fopenmp-simd -ffp-contract=off
                           -Wno-unused-function)
    set(renamed ${out_dir}/${id}_sanitize${suffix}.o)
    add_custom_command(OUTPUT ${renamed}
      COMMAND ${CMAKE_COMMAND} -DNM=${CMAKE_NM} -DOBJCOPY=${CMAKE_OBJCOPY}
              -DIN=$<TARGET_OBJECTS:${lib}> -DOUT=${renamed}
              -P ${CUBERT_KERNELS_CMAKE_DIR}/sanitize_rename.cmake
      DEPENDS ${lib} $<TARGET_OBJECTS:${lib}> ${CUBERT_KERNELS_CMAKE_DIR}/sanitize_rename.cmake
      COMMENT "Renaming the sanitizer callbacks of ${id} (${fill})" VERBATIM)
    if(type STREQUAL "OBJECT_LIBRARY")
      set_property(TARGET ${target} APPEND PROPERTY CUBERT_KERNEL_OBJECTS ${renamed})
    else()
      target_sources(${target} PRIVATE ${renamed})
    endif()
  endforeach()
  set(${out_defs} ${defs_out} PARENT_SCOPE)
endfunction()

# The phase transform (tools/cubert_phase.py, docs/kernels.md "Natural kernels are phased by
# the build"): with CUBERT_KERNEL_PHASES on (the default) and python3 with libclang's binding
# (Debian's python3-clang), the C side of each kernel file is the tool's output, in which every
# CUBE_KERNEL it can handle is a PHASED_KERNEL, with `#line` directives naming the original
# lines; the OpenCL side is the original. A kernel it cannot handle keeps the fiber form with a
# build note. The output is cached by content (the file, the headers it includes, the tool) in
# CUBERT_KERNEL_PHASES_CACHE (default ~/.cache/cubert-phases), and the tool runs only when one
# of those changes. FIBERS in a cubert_add_kernels call, or CUBE_KERNEL_FIBERS in place of
# CUBE_KERNEL in the source, keeps the fiber form.
if(NOT DEFINED CUBERT_KERNEL_PHASES)
  set(CUBERT_KERNEL_PHASES ON)
endif()
if(NOT DEFINED CUBERT_PHASE_TOOL)
  if(EXISTS ${CMAKE_CURRENT_LIST_DIR}/cubert_phase.py) # installed beside this file
    set(CUBERT_PHASE_TOOL ${CMAKE_CURRENT_LIST_DIR}/cubert_phase.py)
  else()
    get_filename_component(CUBERT_PHASE_TOOL ${CMAKE_CURRENT_LIST_DIR}/../tools/cubert_phase.py
                           ABSOLUTE)
  endif()
endif()
# The module the tool imports from its own folder (per-cube versions of a phase).
get_filename_component(CUBERT_PHASE_RANGES ${CUBERT_PHASE_TOOL} DIRECTORY)
set(CUBERT_PHASE_RANGES ${CUBERT_PHASE_RANGES}/cubert_phase_ranges.py)
if(NOT DEFINED CUBERT_KERNEL_PHASES_CACHE)
  if(DEFINED ENV{XDG_CACHE_HOME})
    set(CUBERT_KERNEL_PHASES_CACHE $ENV{XDG_CACHE_HOME}/cubert-phases)
  else()
    set(CUBERT_KERNEL_PHASES_CACHE $ENV{HOME}/.cache/cubert-phases)
  endif()
endif()
function(cubert_kernel_phases_usable out)
  get_property(checked GLOBAL PROPERTY CUBERT_PHASES_PYTHON)
  if(NOT checked)
    set(checked NONE)
    if(CUBERT_KERNEL_PHASES AND EXISTS ${CUBERT_PHASE_TOOL})
      find_program(CUBERT_PYTHON3 NAMES python3 PATHS /usr/bin NO_DEFAULT_PATH)
      find_program(CUBERT_PYTHON3 NAMES python3)
      if(CUBERT_PYTHON3)
        execute_process(COMMAND ${CUBERT_PYTHON3} -c "import clang.cindex as c; c.Index.create()"
                        RESULT_VARIABLE rc OUTPUT_QUIET ERROR_QUIET)
        if(rc EQUAL 0)
          set(checked ${CUBERT_PYTHON3})
        endif()
      endif()
      if(checked STREQUAL "NONE")
        message(STATUS "cubert: no python3 with libclang (python3-clang): CUBE_KERNELs keep the "
                       "fiber form on the CPU server (install python3-clang to phase them)")
      endif()
    endif()
    set_property(GLOBAL PROPERTY CUBERT_PHASES_PYTHON ${checked})
  endif()
  if(checked STREQUAL "NONE")
    set(checked "")
  endif()
  set(${out} "${checked}" PARENT_SCOPE)
endfunction()

function(cubert_add_kernels target)
  cmake_parse_arguments(A "OPENCL_CHECK_APART;NO_OPENCL_CHECK;FIBERS;NO_SANITIZE" "PREFIX;EXPORT"
                        "FILES;INCLUDE_DIRS" ${ARGN})
  set(stamps "")
  set(check_tool "")
  set(check_tool_target "")
  if(CUBERT_CHECK_KERNELS AND CUBERT_KERNEL_CHECK_TOOL AND NOT A_NO_OPENCL_CHECK)
    # A path (an installed cubert) or the name of the tool's target (this repository's build,
    # where it may be defined after this call).
    if(IS_ABSOLUTE ${CUBERT_KERNEL_CHECK_TOOL})
      if(EXISTS ${CUBERT_KERNEL_CHECK_TOOL})
        set(check_tool ${CUBERT_KERNEL_CHECK_TOOL})
      endif()
    else()
      set(check_tool $<TARGET_FILE:${CUBERT_KERNEL_CHECK_TOOL}>)
      set(check_tool_target ${CUBERT_KERNEL_CHECK_TOOL})
    endif()
  endif()
  if(NOT CUBERT_CUBE_INCLUDE_DIR)
    message(FATAL_ERROR "cubert_add_kernels: CUBERT_CUBE_INCLUDE_DIR (the directory holding "
                        "cubert/cube.h) is not set")
  endif()
  set(out_dir ${CMAKE_CURRENT_BINARY_DIR}/cubert_kernels/${target})
  set(prelude ${CUBERT_CUBE_INCLUDE_DIR}/cubert/cube_prelude.cl)
  set(includes -I${CUBERT_CUBE_INCLUDE_DIR})
  foreach(dir ${A_INCLUDE_DIRS})
    list(APPEND includes -I${dir})
  endforeach()
  foreach(file ${A_FILES})
    get_filename_component(path ${file} ABSOLUTE)
    file(RELATIVE_PATH rel ${CMAKE_CURRENT_SOURCE_DIR} ${path})
    string(MAKE_C_IDENTIFIER ${rel} id)
    set(symbol cubert_cube_src_${id})
    set(cl ${out_dir}/${id}.cl)
    set(embedded ${out_dir}/${id}.c)
    get_filename_component(dir ${path} DIRECTORY)
    add_custom_command(OUTPUT ${cl} ${embedded}
      COMMAND ${CMAKE_COMMAND} -DCC=${CMAKE_C_COMPILER} -DSRC=${path} -DPRELUDE=${prelude}
              "-DINCLUDES=${includes};-I${dir}" -DCL=${cl} -DEMBED=${embedded}
              -DSYMBOL=${symbol} -DDEPFILE=${cl}.d
              -P ${CUBERT_KERNELS_CMAKE_DIR}/flatten.cmake
      DEPENDS ${path} ${prelude} ${CUBERT_CUBE_INCLUDE_DIR}/cubert/cube.h
              ${CUBERT_CUBE_INCLUDE_DIR}/cubert/cube_opencl.h
              ${CUBERT_KERNELS_CMAKE_DIR}/flatten.cmake
      DEPFILE ${cl}.d
      COMMENT "Flattening ${rel} into OpenCL C" VERBATIM)
    # The C side: the phase transform's output, or the file itself.
    set(c_side ${path})
    cubert_kernel_phases_usable(python)
    if(python AND NOT A_FIBERS)
      set(c_side ${out_dir}/${id}_phased.c)
      file(MAKE_DIRECTORY ${out_dir}) # the tool may run before anything else of the target
      set(inc_dirs "$<TARGET_PROPERTY:${target},INCLUDE_DIRECTORIES>")
      set(defs_prop "$<TARGET_PROPERTY:${target},COMPILE_DEFINITIONS>")
      add_custom_command(OUTPUT ${c_side}
        COMMAND ${python} ${CUBERT_PHASE_TOOL} ${path} --output ${c_side} --depfile ${c_side}.d
                --cache-dir ${CUBERT_KERNEL_PHASES_CACHE} -I ${CUBERT_CUBE_INCLUDE_DIR} -I ${dir}
                "$<$<BOOL:${A_INCLUDE_DIRS}>:-I;$<JOIN:${A_INCLUDE_DIRS},;-I;>>"
                "$<$<BOOL:${inc_dirs}>:-I;$<JOIN:${inc_dirs},;-I;>>"
                "$<$<BOOL:${defs_prop}>:-D;$<JOIN:${defs_prop},;-D;>>"
        DEPENDS ${path} ${CUBERT_PHASE_TOOL} ${CUBERT_PHASE_RANGES}
        DEPFILE ${c_side}.d
        COMMENT "Phasing the CUBE_KERNELs of ${rel}" COMMAND_EXPAND_LISTS VERBATIM)
      # One target owns the output, which the sanitize and variant copies include too.
      string(MAKE_C_IDENTIFIER "${target}_phase_${id}" phase_target)
      add_custom_target(${phase_target} DEPENDS ${c_side})
      add_dependencies(${target} ${phase_target})
      set_property(GLOBAL PROPERTY CUBERT_KERNEL_PHASE_TARGET_${target}_${id} ${phase_target})
    endif()
    set_property(GLOBAL PROPERTY CUBERT_KERNEL_C_SIDE_${target}_${id} ${c_side})
    target_sources(${target} PRIVATE ${c_side} ${embedded})
    if(check_tool)
      add_custom_command(OUTPUT ${cl}.checked
        COMMAND ${CMAKE_COMMAND} -DTOOL=${check_tool} -DCL=${cl} -DSTAMP=${cl}.checked
                -P ${CUBERT_KERNELS_CMAKE_DIR}/check_kernel.cmake
        DEPENDS ${cl} ${CUBERT_KERNELS_CMAKE_DIR}/check_kernel.cmake
        COMMENT "Building ${rel} with an OpenCL compiler" VERBATIM)
      list(APPEND stamps ${cl}.checked)
    endif()
    # Clang warns when an `omp simd` loop is not vectorised (a body with a report call in
    # validate mode, a byte loop); the pragma is a request, so that is not a build error.
    set(options "$<$<NOT:$<CONFIG:Debug>>:-O3>;-fopenmp-simd;-ffp-contract=off;-Werror=vla"
                "$<$<C_COMPILER_ID:Clang>:-Wno-pass-failed>")
    if(CUBERT_KERNEL_ARCH)
      list(APPEND options -march=${CUBERT_KERNEL_ARCH})
    endif()
    set(defs CUBERT_CUBE_SOURCE=${symbol})
    if(A_PREFIX)
      list(APPEND defs CUBERT_KERNEL_PREFIX=${A_PREFIX})
    endif()
    cubert_kernel_sanitizer_usable(sanitize)
    if(sanitize AND NOT A_NO_SANITIZE)
      cubert_add_kernel_sanitize(${target} ${c_side} ${path} ${id} ${symbol} "${A_PREFIX}"
                                 ${out_dir}
                                 "${CUBERT_CUBE_INCLUDE_DIR};${A_INCLUDE_DIRS};${dir}" san_defs)
      list(APPEND defs ${san_defs})
    endif()
    if(A_EXPORT)
      list(APPEND defs CUBERT_KERNEL_EXPORT=${A_EXPORT})
    endif()
    if(NOT c_side STREQUAL path)
      list(APPEND options -I${dir}) # the file's own "..." includes
    endif()
    set_source_files_properties(${c_side} TARGET_DIRECTORY ${target} PROPERTIES
      COMPILE_DEFINITIONS "${defs}"
      COMPILE_OPTIONS "${options}")
    # Bytes above 0x7f (UTF-8 in string literals) do not fit a signed char: GCC and Clang wrap
    # them, which is what the embedded text needs.
    set_source_files_properties(${embedded} TARGET_DIRECTORY ${target} PROPERTIES
      COMPILE_OPTIONS "-Wno-overflow")
    set_property(TARGET ${target} APPEND PROPERTY CUBERT_FLATTENED_KERNELS ${cl})
  endforeach()
  if(stamps)
    # One check target per call (a second call for the same target gets a numbered one).
    set(check ${target}_opencl_check)
    set(n 2)
    while(TARGET ${check})
      set(check ${target}_opencl_check_${n})
      math(EXPR n "${n} + 1")
    endwhile()
    if(A_OPENCL_CHECK_APART)
      add_custom_target(${check} ALL DEPENDS ${stamps})
      add_dependencies(${check} ${target})
    else()
      add_custom_target(${check} DEPENDS ${stamps})
      add_dependencies(${target} ${check})
    endif()
    if(check_tool_target)
      add_dependencies(${check} ${check_tool_target})
    endif()
  endif()
endfunction()

# cubert_add_kernel_cpu_variants(<target> FILE a.cube.c [PREFIX p] [EXPORT macro]
#                                VARIANTS name:march ... [DEFINITIONS_HEADER path])
#
# Compiles the C side of a kernel file (already added with cubert_add_kernels, same PREFIX and
# EXPORT) once more per variant with -march=<march>, its definitions named
# <PREFIX><name>_<kernel>, so that a program built for the baseline ISA can pick, at run time,
# the build that suits the CPU it runs on (e.g. `__builtin_cpu_supports("avx512f")`; the
# OpenCL side of every variant is the one flattened file). Each variant is an OBJECT library of
# its own, <target>_<name>_<file id>, linked into <target> (an OBJECT library <target> lists it
# in its property CUBERT_KERNEL_OBJECTS instead, as the sanitize copies). Variants whose -march
# the compiler does not take are skipped; each one built defines CUBERT_KERNEL_VARIANT_<name>=1
# (PRIVATE) on <target>, or, with DEFINITIONS_HEADER, in that header (written here, `#include`d
# by the sources that pick a variant), so that adding or dropping variants recompiles only
# those sources and not the rest of <target>. Ignored when CUBERT_KERNEL_ARCH is set (every
# kernel is then built for that ISA).
include(CheckCCompilerFlag)
function(cubert_add_kernel_cpu_variants target)
  cmake_parse_arguments(A "" "FILE;PREFIX;EXPORT;DEFINITIONS_HEADER" "VARIANTS" ${ARGN})
  set(header_text "/* generated by cubert_add_kernel_cpu_variants: the CPU variants built */\n")
  if(CUBERT_KERNEL_ARCH)
    set(A_VARIANTS "")
  endif()
  get_filename_component(path ${A_FILE} ABSOLUTE)
  file(RELATIVE_PATH rel ${CMAKE_CURRENT_SOURCE_DIR} ${path})
  string(MAKE_C_IDENTIFIER ${rel} id)
  set(out_dir ${CMAKE_CURRENT_BINARY_DIR}/cubert_kernels/${target})
  get_filename_component(dir ${path} DIRECTORY)
  get_target_property(type ${target} TYPE)
  foreach(variant ${A_VARIANTS})
    string(REPLACE ":" ";" parts ${variant})
    list(GET parts 0 name)
    list(GET parts 1 march)
    string(MAKE_C_IDENTIFIER "CUBERT_HAVE_MARCH_${march}" flag_var)
    check_c_compiler_flag(-march=${march} ${flag_var})
    if(NOT ${flag_var})
      continue()
    endif()
    set(wrapper ${out_dir}/${id}_${name}.c)
    get_property(c_side GLOBAL PROPERTY CUBERT_KERNEL_C_SIDE_${target}_${id})
    if(NOT c_side)
      set(c_side ${path})
    endif()
    file(RELATIVE_PATH inc ${out_dir} ${c_side}) # relative: see cubert_add_kernel_sanitize
    cubert_write_if_changed(${wrapper}
      "/* generated: ${rel} built with -march=${march} */\n#include \"${inc}\"\n")
    string(MAKE_C_IDENTIFIER "${target}_${name}_${id}" lib)
    add_library(${lib} OBJECT ${wrapper})
    get_property(phase_target GLOBAL PROPERTY CUBERT_KERNEL_PHASE_TARGET_${target}_${id})
    if(phase_target)
      add_dependencies(${lib} ${phase_target})
    endif()
    set_source_files_properties(${wrapper} TARGET_DIRECTORY ${lib} PROPERTIES OBJECT_DEPENDS ${c_side})
    target_include_directories(${lib} PRIVATE ${dir} $<TARGET_PROPERTY:${target},INCLUDE_DIRECTORIES>)
    set(defs CUBERT_CUBE_SOURCE=cubert_cube_src_${id} CUBERT_KERNEL_PREFIX=${A_PREFIX}${name}_
             $<TARGET_PROPERTY:${target},COMPILE_DEFINITIONS>)
    cubert_kernel_sanitizer_usable(sanitize)
    if(sanitize)
      # The file's sanitize copy (cubert_add_kernels) serves every variant.
      list(APPEND defs CUBERT_CUBE_HAVE_SANITIZE=1 CUBERT_CUBE_SANITIZE_PREFIX=${A_PREFIX})
    endif()
    if(A_EXPORT)
      list(APPEND defs CUBERT_KERNEL_EXPORT=${A_EXPORT})
    endif()
    target_compile_definitions(${lib} PRIVATE ${defs})
    target_compile_options(${lib} PRIVATE $<$<NOT:$<CONFIG:Debug>>:-O3> -fopenmp-simd
                           -ffp-contract=off -Werror=vla -march=${march}
                           $<$<C_COMPILER_ID:Clang>:-Wno-pass-failed>)
    if(type STREQUAL "OBJECT_LIBRARY")
      set_property(TARGET ${target} APPEND PROPERTY CUBERT_KERNEL_OBJECTS $<TARGET_OBJECTS:${lib}>)
    else()
      target_sources(${target} PRIVATE $<TARGET_OBJECTS:${lib}>)
    endif()
    string(APPEND header_text "#define CUBERT_KERNEL_VARIANT_${name} 1\n")
    if(NOT A_DEFINITIONS_HEADER)
      target_compile_definitions(${target} PRIVATE CUBERT_KERNEL_VARIANT_${name}=1)
    endif()
  endforeach()
  if(A_DEFINITIONS_HEADER)
    cubert_write_if_changed(${A_DEFINITIONS_HEADER} "${header_text}")
  endif()
endfunction()
