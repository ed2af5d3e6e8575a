/* bench_triad.h — the STREAM triad peer shared by the benchmarks that compare a memory-bound
   kernel with the machine's bandwidth (bench/cpu_server.c, bench/reduce.c).

   Header-only, static. triad() times a = b + s*c over floats with an OpenMP static schedule
   (bytes moved: 3 * n * 4, STREAM's count); triad_init() first-touches the arrays in parallel
   with the same schedule, so pages are faulted in by the threads that use them and no timed
   rep pays for page faults. Allocate the arrays with bench_huge_alloc() (bench_util.h): the
   library's own big pages are 2 MiB THP too, so the peer is not handicapped by TLB misses.
   Without OpenMP the triad runs on one thread. Programs using it should restart themselves
   with OMP_WAIT_POLICY=passive (bench_reexec_with_env) so idle OpenMP threads sleep while
   cubert's workers run. */
#ifndef CUBERT_BENCH_TRIAD_H
#define CUBERT_BENCH_TRIAD_H

#include <stdint.h>

#include "bench_util.h"

#ifndef BENCH_OMP
#ifdef _OPENMP
#include <omp.h>
#define BENCH_OMP(text) _Pragma(text)
#else
#define BENCH_OMP(text)
#endif
#endif

/* STREAM triad a = b + s*c over floats, static schedule; seconds. */
static double triad(float *restrict a, const float *restrict b, const float *restrict c, float s,
                    uint64_t n, int threads) {
  (void)threads; /* unused without OpenMP */
  uint64_t t0 = bench_now_ns();
  BENCH_OMP("omp parallel for schedule(static) num_threads(threads)")
  for (uint64_t i = 0; i < n; ++i) a[i] = b[i] + s * c[i];
  return bench_seconds_since(t0);
}

/* First touch in parallel, with the triad's schedule (a = 0, b = 1, c = 2). */
static void triad_init(float *a, float *b, float *c, uint64_t n, int threads) {
  (void)threads; /* unused without OpenMP */
  BENCH_OMP("omp parallel for schedule(static) num_threads(threads)")
  for (uint64_t i = 0; i < n; ++i) {
    a[i] = 0.0f;
    b[i] = 1.0f;
    c[i] = 2.0f;
  }
}

#endif /* CUBERT_BENCH_TRIAD_H */
