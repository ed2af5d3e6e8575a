/* bench_matmul: SGEMM through cubert_op_matmul (C = A B, row-major f32, N x N x N) against the
   peer of the device in the same run, in GFLOP/s (2 N^3 per product), medians with min–max.

   Peers:
     - CPU server ("cpu"): OpenBLAS cblas_sgemm on as many threads as the CPU server has
       workers (when built with libopenblas-dev). Set OPENBLAS_CORETYPE (e.g. SkylakeX or Zen)
       where OpenBLAS misdetects the CPU; the report prints the core it used.
     - OpenCL devices ("opencl", "opencl:gpu", ...): CLBlast's CLBlastSgemm on the very context
       and device of the cubert client (when built with CLBlast: Debian's libclblast-dev).
   Each size: one warm-up call (it autotunes the key: the tuner's measurements are not timed),
   a spot check of the result against a double-precision host product, then REPS samples, each
   of enough back-to-back products (ending with a sync) to last about 0.2 s, for both.

   With --forms, each size is also measured in other forms of the same product, cubert only:
     at       C = A^T B, A a column-major view (transposed A)
     bt       C = A B^T, B a column-major view (transposed B)
     batched  4 products of N x N x N in one call (rank-3 operands, 2 N^3 each counted)
   printed in a second table beside the plain form (issue 24: within 10% of it).

   Usage: bench_matmul [--device=SEL] [--sizes=N,N,...] [--reps=R] [--csv=PATH] [--no-peer]
                       [--forms=at,bt,batched]
     --device=SEL  cubert device selector (default "cpu")
     --sizes=...   matrix sizes (default 128,256,512,1024,2048)
     --reps=R      samples per size and peer (default 5)
     --csv=PATH    also write rows "device,impl,n,gflops_median,gflops_min,gflops_max" to PATH
                   (tools/plot_sgemm.py draws them)
     --no-peer     skip the peer
     --forms=...   also measure these forms (above); CSV rows impl "cubert-<form>"
   Example: bench_matmul --device=opencl:gpu --sizes=1024,2048,4096 --csv=sgemm_gpu.csv */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_ocl.h"
#include "bench_util.h"
#include "cubert/ops.h"

#ifdef BENCH_HAVE_OPENBLAS
#include <cblas.h>
#endif
#if defined(BENCH_HAVE_CLBLAST) && defined(BENCH_HAVE_OPENCL)
#include <clblast_c.h>
#define BENCH_USE_CLBLAST 1
#endif

#define MAX_SIZES 32

typedef struct config {
  const char *device;
  uint32_t sizes[MAX_SIZES];
  int size_count;
  int reps;
  const char *csv;
  int peer;
  int forms; /* FORM_* bits */
} config;

enum { FORM_AT = 1, FORM_BT = 2, FORM_BATCHED = 4 };
enum { BATCHES = 4 };

static double gflops(uint32_t n, double seconds) {
  return 2.0 * (double)n * n * n / seconds * 1e-9;
}

/* Ops per sample so that one sample lasts about target_s, from the time of one op. */
static int ops_for(double one_s, double target_s) {
  int ops = one_s > 0 ? (int)(target_s / one_s) : 1;
  return ops < 1 ? 1 : ops > 10000 ? 10000 : ops;
}

/* Spot check: a few elements of c against double-precision dot products. */
static int spot_check(const float *a, const float *b, const float *c, uint32_t n) {
  for (int s = 0; s < 16; ++s) {
    const uint32_t i = (uint32_t)((s * 7919u) % n), j = (uint32_t)((s * 104729u + 3) % n);
    double exact = 0, mag = 0;
    for (uint32_t k = 0; k < n; ++k) {
      exact += (double)a[(size_t)i * n + k] * b[(size_t)k * n + j];
      mag += fabs((double)a[(size_t)i * n + k] * b[(size_t)k * n + j]);
    }
    if (fabs(c[(size_t)i * n + j] - exact) > (n + 2) * ldexp(1.0, -22) * mag + 1e-30) {
      fprintf(stderr, "matmul: c[%u][%u] = %g, expected %g\n", i, j, (double)c[(size_t)i * n + j],
              exact);
      return 0;
    }
  }
  return 1;
}

typedef struct result {
  bench_stats gflops;
  int ok;
} result;

static result bench_cubert(cubert_client *client, uint32_t n, int reps, const float *a,
                           const float *b, float *c) {
  result r = {{0, 0, 0, 0}, 0};
  const cubert_layout_desc desc = {.rank = 2, .shape = {n, n}, .dtype = CUBERT_DTYPE_F32};
  cubert_tensor ta, tb, tc;
  BENCH_CHECK(cubert_client_create_tensor(client, a, &desc, &ta));
  BENCH_CHECK(cubert_client_create_tensor(client, b, &desc, &tb));
  BENCH_CHECK(cubert_client_empty_tensor(client, &desc, &tc));
  BENCH_CHECK(cubert_op_matmul(client, 1.0, &ta, &tb, 0.0, &tc)); /* tunes the key */
  BENCH_CHECK(cubert_client_sync(client));
  uint64_t t0 = bench_now_ns();
  BENCH_CHECK(cubert_op_matmul(client, 1.0, &ta, &tb, 0.0, &tc));
  BENCH_CHECK(cubert_client_sync(client));
  const int ops = ops_for(bench_seconds_since(t0), 0.2);
  BENCH_CHECK(cubert_client_read(client, tc.handle, c, (size_t)n * n * sizeof(float)));
  r.ok = spot_check(a, b, c, n);
  double samples[64];
  for (int s = 0; s < reps; ++s) {
    t0 = bench_now_ns();
    for (int i = 0; i < ops; ++i) BENCH_CHECK(cubert_op_matmul(client, 1.0, &ta, &tb, 0.0, &tc));
    BENCH_CHECK(cubert_client_sync(client));
    samples[s] = gflops(n, bench_seconds_since(t0) / ops);
  }
  r.gflops = bench_stats_of(samples, (size_t)reps);
  cubert_tensor_release(&ta);
  cubert_tensor_release(&tb);
  cubert_tensor_release(&tc);
  return r;
}

/* One form (FORM_*) of the product through cubert_op_matmul: the same data as the plain form,
   viewed transposed (A^T or B^T: the spot check uses the transposed host copy), or repeated
   BATCHES times in rank-3 operands (every batch checked at its spot elements). */
static result bench_cubert_form(cubert_client *client, uint32_t n, int reps, int form,
                                const float *a, const float *b, float *c) {
  result r = {{0, 0, 0, 0}, 0};
  const size_t elems = (size_t)n * n;
  const uint32_t batches = form == FORM_BATCHED ? BATCHES : 1;
  float *ha = malloc(elems * batches * sizeof(float)),
        *hb = malloc(elems * batches * sizeof(float));
  float *ref = malloc(elems * sizeof(float)), *hc = malloc(elems * batches * sizeof(float));
  if (!ha || !hb || !ref || !hc) exit(1);
  for (uint32_t bt = 0; bt < batches; ++bt) {
    memcpy(ha + bt * elems, a, elems * sizeof(float));
    memcpy(hb + bt * elems, b, elems * sizeof(float));
  }
  cubert_layout_desc desc = {.rank = 2, .shape = {n, n}, .dtype = CUBERT_DTYPE_F32};
  if (batches > 1)
    desc = (cubert_layout_desc){.rank = 3, .shape = {batches, n, n}, .dtype = CUBERT_DTYPE_F32};
  cubert_tensor ta, tb, tc;
  BENCH_CHECK(cubert_client_create_tensor(client, ha, &desc, &ta));
  BENCH_CHECK(cubert_client_create_tensor(client, hb, &desc, &tb));
  BENCH_CHECK(cubert_client_empty_tensor(client, &desc, &tc));
  cubert_tensor *tr = form == FORM_AT ? &ta : form == FORM_BT ? &tb : NULL;
  if (tr) { /* the stored matrix read column-major: its transpose */
    tr->strides[0] = 1;
    tr->strides[1] = n;
  }
  BENCH_CHECK(cubert_op_matmul(client, 1.0, &ta, &tb, 0.0, &tc)); /* tunes the key */
  BENCH_CHECK(cubert_client_sync(client));
  uint64_t t0 = bench_now_ns();
  BENCH_CHECK(cubert_op_matmul(client, 1.0, &ta, &tb, 0.0, &tc));
  BENCH_CHECK(cubert_client_sync(client));
  const int ops = ops_for(bench_seconds_since(t0), 0.2);
  BENCH_CHECK(cubert_client_read(client, tc.handle, hc, elems * batches * sizeof(float)));
  const float *src = form == FORM_AT ? a : b;
  if (tr)
    for (uint32_t i = 0; i < n; ++i)
      for (uint32_t j = 0; j < n; ++j) ref[(size_t)i * n + j] = src[(size_t)j * n + i];
  r.ok = 1;
  for (uint32_t bt = 0; bt < batches; ++bt)
    r.ok &= spot_check(form == FORM_AT ? ref : a, form == FORM_BT ? ref : b, hc + bt * elems, n);
  double samples[64];
  for (int s = 0; s < reps; ++s) {
    t0 = bench_now_ns();
    for (int i = 0; i < ops; ++i) BENCH_CHECK(cubert_op_matmul(client, 1.0, &ta, &tb, 0.0, &tc));
    BENCH_CHECK(cubert_client_sync(client));
    samples[s] = batches * gflops(n, bench_seconds_since(t0) / ops);
  }
  r.gflops = bench_stats_of(samples, (size_t)reps);
  cubert_tensor_release(&ta);
  cubert_tensor_release(&tb);
  cubert_tensor_release(&tc);
  free(ha);
  free(hb);
  free(ref);
  free(hc);
  (void)c;
  return r;
}

#ifdef BENCH_HAVE_OPENBLAS
static result bench_openblas(uint32_t n, int reps, int threads, const float *a, const float *b,
                             float *c) {
  result r = {{0, 0, 0, 0}, 0};
  openblas_set_num_threads(threads);
  const int ni = (int)n;
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, ni, ni, ni, 1.0f, a, ni, b, ni, 0.0f, c,
              ni);
  uint64_t t0 = bench_now_ns();
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, ni, ni, ni, 1.0f, a, ni, b, ni, 0.0f, c,
              ni);
  const int ops = ops_for(bench_seconds_since(t0), 0.2);
  r.ok = spot_check(a, b, c, n);
  double samples[64];
  for (int s = 0; s < reps; ++s) {
    t0 = bench_now_ns();
    for (int i = 0; i < ops; ++i)
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, ni, ni, ni, 1.0f, a, ni, b, ni, 0.0f,
                  c, ni);
    samples[s] = gflops(n, bench_seconds_since(t0) / ops);
  }
  r.gflops = bench_stats_of(samples, (size_t)reps);
  return r;
}
#endif

#ifdef BENCH_USE_CLBLAST
static result bench_clblast(const bench_ocl *ocl, uint32_t n, int reps, const float *a,
                            const float *b, float *c) {
  result r = {{0, 0, 0, 0}, 0};
  const size_t bytes = (size_t)n * n * sizeof(float);
  cl_command_queue q = bench_ocl_queue(ocl, 0);
  cl_mem ma = bench_ocl_buffer(ocl, bytes), mb = bench_ocl_buffer(ocl, bytes),
         mc = bench_ocl_buffer(ocl, bytes);
  BENCH_CL(clEnqueueWriteBuffer(q, ma, CL_TRUE, 0, bytes, a, 0, NULL, NULL));
  BENCH_CL(clEnqueueWriteBuffer(q, mb, CL_TRUE, 0, bytes, b, 0, NULL, NULL));
#define GEMM()                                                                                     \
  do {                                                                                             \
    CLBlastStatusCode st_ =                                                                        \
        CLBlastSgemm(CLBlastLayoutRowMajor, CLBlastTransposeNo, CLBlastTransposeNo, n, n, n, 1.0f, \
                     ma, 0, n, mb, 0, n, 0.0f, mc, 0, n, &q, NULL);                                \
    if (st_ != CLBlastSuccess) {                                                                   \
      fprintf(stderr, "CLBlastSgemm failed: %d\n", (int)st_);                                      \
      exit(1);                                                                                     \
    }                                                                                              \
  } while (0)
  GEMM(); /* CLBlast compiles its kernels on first use */
  BENCH_CL(clFinish(q));
  uint64_t t0 = bench_now_ns();
  GEMM();
  BENCH_CL(clFinish(q));
  const int ops = ops_for(bench_seconds_since(t0), 0.2);
  BENCH_CL(clEnqueueReadBuffer(q, mc, CL_TRUE, 0, bytes, c, 0, NULL, NULL));
  r.ok = spot_check(a, b, c, n);
  double samples[64];
  for (int s = 0; s < reps; ++s) {
    t0 = bench_now_ns();
    for (int i = 0; i < ops; ++i) GEMM();
    BENCH_CL(clFinish(q));
    samples[s] = gflops(n, bench_seconds_since(t0) / ops);
  }
#undef GEMM
  r.gflops = bench_stats_of(samples, (size_t)reps);
  clReleaseMemObject(ma);
  clReleaseMemObject(mb);
  clReleaseMemObject(mc);
  clReleaseCommandQueue(q);
  return r;
}
#endif

static void usage(const char *argv0) {
  fprintf(stderr,
          "usage: %s [--device=SEL] [--sizes=N,N,...] [--reps=R] [--csv=PATH] [--no-peer]\n",
          argv0);
  exit(2);
}

static void parse(int argc, char **argv, config *cfg) {
  static const uint32_t defaults[] = {128, 256, 512, 1024, 2048};
  cfg->device = "cpu";
  cfg->size_count = 5;
  memcpy(cfg->sizes, defaults, sizeof defaults);
  cfg->reps = 5;
  cfg->csv = NULL;
  cfg->peer = 1;
  cfg->forms = 0;
  for (int i = 1; i < argc; ++i) {
    if (strncmp(argv[i], "--device=", 9) == 0) {
      cfg->device = argv[i] + 9;
    } else if (strncmp(argv[i], "--sizes=", 8) == 0) {
      cfg->size_count = 0;
      for (char *p = argv[i] + 8; *p && cfg->size_count < MAX_SIZES;) {
        char *end;
        const unsigned long v = strtoul(p, &end, 10);
        if (end == p || v == 0 || v > 65536) usage(argv[0]);
        cfg->sizes[cfg->size_count++] = (uint32_t)v;
        p = *end == ',' ? end + 1 : end;
      }
    } else if (strncmp(argv[i], "--reps=", 7) == 0) {
      cfg->reps = atoi(argv[i] + 7);
      if (cfg->reps < 1 || cfg->reps > 64) usage(argv[0]);
    } else if (strncmp(argv[i], "--csv=", 6) == 0) {
      cfg->csv = argv[i] + 6;
    } else if (strncmp(argv[i], "--forms=", 8) == 0) {
      for (const char *f = argv[i] + 8; *f;) {
        const size_t len = strcspn(f, ",");
        if (len == 2 && strncmp(f, "at", 2) == 0) {
          cfg->forms |= FORM_AT;
        } else if (len == 2 && strncmp(f, "bt", 2) == 0) {
          cfg->forms |= FORM_BT;
        } else if (len == 7 && strncmp(f, "batched", 7) == 0) {
          cfg->forms |= FORM_BATCHED;
        } else {
          usage(argv[0]);
        }
        f += len + (f[len] == ',');
      }
    } else if (strcmp(argv[i], "--no-peer") == 0) {
      cfg->peer = 0;
    } else {
      usage(argv[0]);
    }
  }
}

int main(int argc, char **argv) {
  config cfg;
  parse(argc, argv, &cfg);
  cubert_client *client = NULL;
  BENCH_CHECK(cubert_client_create(cfg.device, &client));
  const cubert_device_properties *p = cubert_client_properties(client);
  const int is_cpu = strcmp(p->backend, "cpu") == 0;
  printf("# SGEMM through cubert_op_matmul, f32 row-major, C = A B\n\n");
  bench_print_env(stdout);
  bench_print_device(stdout, p);
  const int threads = (int)p->hardware.num_compute_units;
  const char *peer_name = "none";
#ifdef BENCH_HAVE_OPENBLAS
  if (is_cpu && cfg.peer) {
    const char *coretype = getenv("OPENBLAS_CORETYPE");
    printf("- peer: OpenBLAS %s, core %s, %d threads, OPENBLAS_CORETYPE=%s\n",
           openblas_get_config(), openblas_get_corename(), threads,
           coretype ? coretype : "(unset)");
    peer_name = "OpenBLAS";
  }
#endif
#ifdef BENCH_HAVE_OPENCL
  bench_ocl ocl;
  const int is_ocl = bench_ocl_of(client, &ocl);
  if (is_ocl) {
    cl_uint mhz = 0, cus = 0;
    clGetDeviceInfo(ocl.device, CL_DEVICE_MAX_CLOCK_FREQUENCY, sizeof mhz, &mhz, NULL);
    clGetDeviceInfo(ocl.device, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof cus, &cus, NULL);
    printf("- OpenCL compute units %u, max clock %u MHz", cus, mhz);
    if (strstr(p->vendor, "NVIDIA"))
      /* Hopper and Ampere-class SMs: 128 FP32 lanes, one FMA (2 FLOP) per lane per clock. */
      printf("; FP32 peak (128 FP32 lanes x 2 FLOP per SM per clock) %.1f TFLOP/s",
             cus * 128.0 * 2.0 * mhz * 1e-6);
    printf("\n");
#ifdef BENCH_USE_CLBLAST
    if (cfg.peer) {
      printf("- peer: CLBlast (CLBlastSgemm) on the same OpenCL context and device\n");
      peer_name = "CLBlast";
    }
#endif
  }
#endif
  printf("- samples: %d per size and implementation, each about 0.2 s of back-to-back products\n\n",
         cfg.reps);
  FILE *csv = NULL;
  if (cfg.csv) {
    csv = fopen(cfg.csv, "w");
    if (!csv) {
      fprintf(stderr, "cannot write %s\n", cfg.csv);
      return 1;
    }
    fprintf(csv, "device,impl,n,gflops_median,gflops_min,gflops_max\n");
  }
  printf("| N | cubert GFLOP/s | min–max | %s GFLOP/s | min–max | cubert ÷ %s |\n", peer_name,
         peer_name);
  printf("| --- | --- | --- | --- | --- | --- |\n");
  const char *dev_label = is_cpu ? "cpu" : p->name;
  int all_ok = 1;
  double plain[MAX_SIZES] = {0};
  for (int s = 0; s < cfg.size_count; ++s) {
    const uint32_t n = cfg.sizes[s];
    const size_t elems = (size_t)n * n;
    float *a = malloc(elems * sizeof(float)), *b = malloc(elems * sizeof(float)),
          *c = malloc(elems * sizeof(float));
    if (!a || !b || !c) return 1;
    uint64_t x = 12345;
    for (size_t i = 0; i < elems; ++i) {
      x = x * 6364136223846793005ull + 1442695040888963407ull;
      a[i] = (float)((double)(x >> 40) / (double)(1ull << 24) - 0.5);
      x = x * 6364136223846793005ull + 1442695040888963407ull;
      b[i] = (float)((double)(x >> 40) / (double)(1ull << 24) - 0.5);
    }
    fprintf(stderr, "matmul %u^3: cubert...\n", n);
    const result mine = bench_cubert(client, n, cfg.reps, a, b, c);
    all_ok &= mine.ok;
    plain[s] = mine.gflops.median;
    result peer = {{0, 0, 0, 0}, 1};
    if (cfg.peer) {
#ifdef BENCH_HAVE_OPENBLAS
      if (is_cpu) {
        fprintf(stderr, "matmul %u^3: OpenBLAS...\n", n);
        peer = bench_openblas(n, cfg.reps, threads, a, b, c);
      }
#endif
#ifdef BENCH_USE_CLBLAST
      if (is_ocl) {
        fprintf(stderr, "matmul %u^3: CLBlast...\n", n);
        peer = bench_clblast(&ocl, n, cfg.reps, a, b, c);
      }
#endif
    }
    all_ok &= peer.ok;
    printf(
        "| %u | %s | %s | %s | %s | %s |\n", n, bench_fmt_median(mine.gflops).s,
        bench_fmt_range(mine.gflops).s, peer.gflops.count ? bench_fmt_median(peer.gflops).s : "n/a",
        peer.gflops.count ? bench_fmt_range(peer.gflops).s : "",
        peer.gflops.count ? bench_textf("%.2f×", mine.gflops.median / peer.gflops.median).s : "");
    fflush(stdout);
    if (csv) {
      fprintf(csv, "%s,cubert,%u,%.4g,%.4g,%.4g\n", dev_label, n, mine.gflops.median,
              mine.gflops.min, mine.gflops.max);
      if (peer.gflops.count)
        fprintf(csv, "%s,%s,%u,%.4g,%.4g,%.4g\n", dev_label, peer_name, n, peer.gflops.median,
                peer.gflops.min, peer.gflops.max);
    }
    free(a);
    free(b);
    free(c);
  }
  static const char *const form_names[] = {"at", "bt", "batched"};
  if (cfg.forms) {
    printf(
        "\n| N | form | cubert GFLOP/s | min–max | ÷ plain |\n| --- | --- | --- | --- | --- |\n");
    for (int s = 0; s < cfg.size_count; ++s) {
      const uint32_t n = cfg.sizes[s];
      const size_t elems = (size_t)n * n;
      float *a = malloc(elems * sizeof(float)), *b = malloc(elems * sizeof(float));
      if (!a || !b) return 1;
      uint64_t x = 54321;
      for (size_t i = 0; i < elems; ++i) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        a[i] = (float)((double)(x >> 40) / (double)(1ull << 24) - 0.5);
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        b[i] = (float)((double)(x >> 40) / (double)(1ull << 24) - 0.5);
      }
      for (int f = 0; f < 3; ++f) {
        if (!(cfg.forms & (1 << f))) continue;
        fprintf(stderr, "matmul %u^3 %s: cubert...\n", n, form_names[f]);
        const result r = bench_cubert_form(client, n, cfg.reps, 1 << f, a, b, NULL);
        all_ok &= r.ok;
        printf("| %u | %s | %s | %s | %.2f× |\n", n, form_names[f], bench_fmt_median(r.gflops).s,
               bench_fmt_range(r.gflops).s, plain[s] > 0 ? r.gflops.median / plain[s] : 0.0);
        fflush(stdout);
        if (csv)
          fprintf(csv, "%s,cubert-%s,%u,%.4g,%.4g,%.4g\n", dev_label, form_names[f], n,
                  r.gflops.median, r.gflops.min, r.gflops.max);
      }
      free(a);
      free(b);
    }
  }
  if (csv) fclose(csv);
  if (!all_ok) printf("\n**a result failed its spot check** (see stderr)\n");
  cubert_client_release(client);
  return all_ok ? 0 : 1;
}
