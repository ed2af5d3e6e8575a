/* cubert base — the x86-64 micro-architecture level this CPU runs (x86-64-v3: AVX2, FMA, BMI2;
   x86-64-v4: v3 plus AVX-512 F/BW/VL/DQ/CD), read with the compiler's CPU builtins. One test
   for the two places that act on it: the CPU server's vector width (backends/cpu/server.c) and
   the kernel library's choice among its x86-64-v3/v4 kernel copies (kernels/ops/cpu_variant.c),
   which must agree. 0 on other CPUs and compilers. */
#ifndef CUBERT_BASE_X86_LEVEL_H
#define CUBERT_BASE_X86_LEVEL_H

static inline int cubert_x86_level(void) {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  __builtin_cpu_init();
  if (!(__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
        __builtin_cpu_supports("bmi2")))
    return 0;
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") &&
      __builtin_cpu_supports("avx512cd"))
    return 4;
  return 3;
#else
  return 0;
#endif
}

#endif
