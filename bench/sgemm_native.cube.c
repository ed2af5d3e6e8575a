/* examples/sgemm.cube.c once more, for bench_kernel_language: bench/CMakeLists.txt compiles this
   file with -march=native and the prefix native_ (native_sgemm_tiled, ...), to show what the
   CPU server gains from the host's vector width (cubert_add_kernels builds for the baseline
   ISA, SSE2 on x86-64, while PoCL compiles for the host's). */
#include "../examples/sgemm.cube.c"
