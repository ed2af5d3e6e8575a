/* bench_streams — streams and profiling (issue 5): cross-stream dependencies, transfer/kernel
   overlap between streams, and what profiling costs.

   Streams are client views pinned to explicit stream ids (cubert_client_with_stream), so one
   thread drives several streams. Raw OpenCL peers (on OpenCL devices) run in cubert's own
   context and device (backends/opencl/api.h) with the library kernels' own sources and build
   options, interleaved with cubert block by block in the same run. Prints a markdown report:
   environment, one table (median, min–max, the peer, the ratio, pass/miss per target), notes.

   1. Cross-stream dependency overhead, per round: producer stream P fills a small buffer x
      (fill_u32, 1024 elements), consumer stream C computes z = x + b (add_f32) and syncs,
      against the same work on one stream (own buffers). Overhead = two streams − one stream,
      paired per block. Peer (OpenCL): the raw pattern on two queues — fill on q1,
      clEnqueueMarkerWithWaitList on q1 + clFlush, clEnqueueBarrierWithWaitList on q2, add on
      q2, clFinish(q2) — minus fill + add + clFinish on one queue.
      Targets: CPU server <= 2 us; OpenCL <= raw overhead + 2 us.
   2. Overlap: stream A reads a 256 MiB buffer to the host (cubert_client_read_async), stream B
      runs K saxpy_f32 launches on two other 256 MiB buffers (K tuned so the kernels take
      about as long as the read); wall time of both streams started together against the same
      work on one stream. Target (devices with their own memory): serial / parallel >= 1.5.
      Peers: raw OpenCL on two queues vs one (what the driver itself overlaps), and on such
      devices cubert with a pageable (malloc'd) destination instead of pinned memory;
      informative on host-unified devices (PoCL).
   3. Profiling: (a) launch + sync of noop on a stream that opened and closed one profile
      (its server switched to a profiling queue and back) against a stream that never did,
      interleaved; an A/A run of the same two streams before the profile shows the noise;
      target: |difference| <= max(0.2 us, 2% of the never-profiled median). Informative:
      launch + sync inside an open profile region. (b) the device-timed duration that
      cubert_client_profile reports for one add_f32 launch on 64M floats against raw event
      profiling (END − START) of the same kernel and NDRange on a CL_QUEUE_PROFILING_ENABLE
      queue, 20 interleaved repetitions; target: within 5%.

   Usage: bench_streams [--device=SELECTOR] [--quick] [--only=123] [--transfer-mib=MIB]
                        [--n=ELEMENTS]
     --device=SEL     cubert selector (default "opencl"; "opencl:gpu", "cpu")
     --quick          a smoke test: few repetitions, small buffers (not for the record)
     --only=DIGITS    run only the listed sections
     --transfer-mib   MiB per buffer in section 2 (default 256)
     --n=ELEMENTS     floats per array in section 3b (default 64M) */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_ocl.h"
#include "bench_util.h"

/* Stream ids of the client views (ids map onto slots id % CUBERT_MAX_STREAMS, 32 by default;
   each section gets slots of its own so that none inherits another's queues or memory). */
enum {
  STREAM_PRODUCER = 1,
  STREAM_CONSUMER = 2,
  STREAM_NEVER_PROFILED = 3,
  STREAM_PROFILED = 4,
  STREAM_TRANSFER = 5,
  STREAM_COMPUTE = 6,
};

/* ---- run configuration ----------------------------------------------------------------- */

typedef struct config {
  int dep_blocks;          /* section 1: blocks per variant */
  double block_seconds;    /* target duration of one block (sections 1 and 3a) */
  uint64_t transfer_bytes; /* section 2: bytes per buffer */
  int overlap_reps;
  int profile_blocks; /* section 3a: blocks per variant and phase */
  uint64_t elements;  /* section 3b */
  int profile_reps;
} config;

static config config_default(void) {
  config c = {
      .dep_blocks = 40,
      .block_seconds = 0.01,
      .transfer_bytes = 256ull << 20,
      .overlap_reps = 7,
      .profile_blocks = 40,
      .elements = 64ull << 20,
      .profile_reps = 20,
  };
  return c;
}

typedef struct bench_run {
  config cfg;
  const char *selector;
  cubert_client *client; /* never submits work itself: every section uses pinned views */
  const cubert_device_properties *props;
  int is_cpu_server;
  int have_ocl; /* raw OpenCL peers available */
#if BENCH_HAVE_OPENCL
  bench_ocl ocl;
#endif
  int host_unified; /* no separate device memory (CPU server, PoCL, integrated GPUs) */
  bench_notes notes;
} bench_run;

static void progress(const char *what) {
  fprintf(stderr, "bench_streams: %s\n", what);
}

static const bench_stats no_stats = {0, 0, 0, 0};

static cubert_client *view(bench_run *run, cubert_stream_id id) {
  cubert_client *v = NULL;
  BENCH_CHECK(cubert_client_with_stream(run->client, id, &v));
  return v;
}

/* A 1-D geometry of n units in cubes of 256 (the count through cubert_cube_count_select, so
   it fits the device's limits). */
typedef struct geometry {
  cubert_cube_count count;
  cubert_cube_dim dim;
} geometry;

static geometry geometry_for(cubert_client *client, uint64_t n) {
  geometry g;
  g.dim = cubert_cube_dim_new_3d(256, 1, 1);
  cubert_cube_count_selection sel;
  BENCH_CHECK(cubert_cube_count_select(client, (uint32_t)((n + 255) / 256), &sel));
  g.count = sel.cube_count;
  return g;
}

static void fill(cubert_client *client, cubert_handle *h, uint64_t n, float value) {
  cubert_handle *buffers[1] = {h};
  uint64_t info[2] = {n, cubert_kernel_info_f32(value)};
  cubert_kernel_args args = {buffers, 1, info, 2};
  geometry g = geometry_for(client, n);
  BENCH_CHECK(cubert_client_launch(client, &cubert_kernel_fill_u32, g.count, g.dim, &args));
}

static void expect_f32(cubert_client *client, cubert_handle *h, uint64_t n, float expect,
                       const char *what) {
  const uint64_t at[3] = {0, n / 2, n - 1};
  for (int i = 0; i < 3; ++i) {
    float v = 0;
    BENCH_CHECK(cubert_client_read_range(client, h, at[i] * 4, &v, 4));
    if (fabsf(v - expect) > 1e-5f * fabsf(expect) + 1e-30f) {
      fprintf(stderr, "%s: element %llu is %g, expected %g\n", what, (unsigned long long)at[i],
              (double)v, (double)expect);
      exit(1);
    }
  }
}

/* ---- 1. cross-stream dependencies -------------------------------------------------------- */

enum { DEP_ELEMENTS = 1024 };

enum { DEP_RING = 8 };

typedef struct dep_cubert {
  cubert_client *producer, *consumer;
  geometry g;
  /* x: ring[next % ring_size], rotated every round; b and z: add_buffers[1], [2] */
  cubert_handle *ring[DEP_RING];
  int ring_size, next;
  cubert_handle *fill_buffers[1], *add_buffers[3];
  uint64_t fill_info[2], add_info[1];
} dep_cubert;

static void dep_round(cubert_client *producer, cubert_client *consumer, dep_cubert *d) {
  cubert_handle *x = d->ring[d->next++ % d->ring_size];
  d->fill_buffers[0] = d->add_buffers[0] = x;
  const cubert_kernel_args fill_args = {d->fill_buffers, 1, d->fill_info, 2};
  const cubert_kernel_args add_args = {d->add_buffers, 3, d->add_info, 1};
  BENCH_CHECK(
      cubert_client_launch(producer, &cubert_kernel_fill_u32, d->g.count, d->g.dim, &fill_args));
  BENCH_CHECK(
      cubert_client_launch(consumer, &cubert_kernel_add_f32, d->g.count, d->g.dim, &add_args));
  BENCH_CHECK(cubert_client_sync(consumer));
}

/* Two streams: the fill on P, the add on C (which waits for P), sync C. */
static double block_dep_two(void *user, int ops) {
  dep_cubert *d = user;
  uint64_t t0 = bench_now_ns();
  for (int i = 0; i < ops; ++i) dep_round(d->producer, d->consumer, d);
  return bench_seconds_since(t0);
}

/* One stream: both on C, with buffers of C's own. */
static double block_dep_one(void *user, int ops) {
  dep_cubert *d = user;
  uint64_t t0 = bench_now_ns();
  for (int i = 0; i < ops; ++i) dep_round(d->consumer, d->consumer, d);
  return bench_seconds_since(t0);
}

#if BENCH_HAVE_OPENCL
typedef struct dep_raw {
  cl_command_queue q1, q2;
  cl_kernel fill, add;
  bench_ocl_geometry g;
} dep_raw;

static double block_raw_two(void *user, int ops) {
  dep_raw *r = user;
  uint64_t t0 = bench_now_ns();
  for (int i = 0; i < ops; ++i) {
    cl_event marker = NULL;
    if (bench_ocl_enqueue(r->q1, r->fill, &r->g, NULL) != CL_SUCCESS ||
        clEnqueueMarkerWithWaitList(r->q1, 0, NULL, &marker) != CL_SUCCESS ||
        clFlush(r->q1) != CL_SUCCESS ||
        clEnqueueBarrierWithWaitList(r->q2, 1, &marker, NULL) != CL_SUCCESS ||
        bench_ocl_enqueue(r->q2, r->add, &r->g, NULL) != CL_SUCCESS ||
        clFinish(r->q2) != CL_SUCCESS) {
      fprintf(stderr, "raw two-queue round failed\n");
      return -1;
    }
    clReleaseEvent(marker);
  }
  return bench_seconds_since(t0);
}

static double block_raw_one(void *user, int ops) {
  dep_raw *r = user;
  uint64_t t0 = bench_now_ns();
  for (int i = 0; i < ops; ++i) {
    if (bench_ocl_enqueue(r->q1, r->fill, &r->g, NULL) != CL_SUCCESS ||
        bench_ocl_enqueue(r->q1, r->add, &r->g, NULL) != CL_SUCCESS ||
        clFinish(r->q1) != CL_SUCCESS) {
      fprintf(stderr, "raw one-queue round failed\n");
      return -1;
    }
  }
  return bench_seconds_since(t0);
}
#endif

static void section_dependencies(bench_run *run) {
  const config *cfg = &run->cfg;
  progress("1/3 cross-stream dependency overhead");
  const uint64_t n = DEP_ELEMENTS;
  cubert_client *producer = view(run, STREAM_PRODUCER), *consumer = view(run, STREAM_CONSUMER);
  /* Two sets of buffers: x on P for the two-stream rounds; x1 on C for the one-stream rounds;
     b and z (b1, z1) on C. Memory is per stream, so each buffer lives where it is produced. */
  dep_cubert two, one, ring;
  memset(&two, 0, sizeof(two));
  two.producer = producer;
  two.consumer = consumer;
  two.g = geometry_for(consumer, n);
  two.fill_info[0] = n;
  two.fill_info[1] = cubert_kernel_info_f32(1.0f);
  two.add_info[0] = n;
  one = two;
  cubert_handle *x, *b, *z, *x1, *b1, *z1;
  BENCH_CHECK(cubert_client_empty(producer, n * 4, &x));
  BENCH_CHECK(cubert_client_empty(consumer, n * 4, &b));
  BENCH_CHECK(cubert_client_empty(consumer, n * 4, &z));
  BENCH_CHECK(cubert_client_empty(consumer, n * 4, &x1));
  BENCH_CHECK(cubert_client_empty(consumer, n * 4, &b1));
  BENCH_CHECK(cubert_client_empty(consumer, n * 4, &z1));
  fill(consumer, b, n, 2.0f);
  fill(consumer, b1, n, 2.0f);
  BENCH_CHECK(cubert_client_sync(consumer));
  two.ring[0] = x;
  two.ring_size = 1;
  two.add_buffers[1] = b;
  two.add_buffers[2] = z;
  one.ring[0] = x1;
  one.ring_size = 1;
  one.add_buffers[1] = b1;
  one.add_buffers[2] = z1;
  /* Informative: the producer cycles through DEP_RING buffers, so the write-after-read wait
     of P for C comes once per DEP_RING rounds (P's wait covers every earlier use by C) and a
     round costs about one cross-stream wait, as the raw pattern does. */
  ring = two;
  ring.ring_size = DEP_RING;
  for (int i = 0; i < DEP_RING; ++i) {
    if (i) BENCH_CHECK(cubert_client_empty(producer, n * 4, &ring.ring[i]));
  }

  bench_block_fn fns[5] = {block_dep_two, block_dep_one, block_dep_two, NULL, NULL};
  void *users[5] = {&two, &one, &ring, NULL, NULL};
  size_t variants = 3;
#if BENCH_HAVE_OPENCL
  dep_raw raw;
  cl_program programs[2];
  cl_mem mems[6];
  if (run->have_ocl) {
    raw.q1 = bench_ocl_queue(&run->ocl, 0);
    raw.q2 = bench_ocl_queue(&run->ocl, 0);
    raw.fill = bench_ocl_build_raw(&run->ocl, "raw_fill_u32", &programs[0]);
    raw.add = bench_ocl_build_raw(&run->ocl, "raw_add_f32", &programs[1]);
    raw.g = bench_ocl_geometry_of(two.g.count, two.g.dim);
    for (int i = 0; i < 3; ++i) mems[i] = bench_ocl_buffer(&run->ocl, n * 4);
    mems[3] = bench_ocl_info(&run->ocl, two.fill_info, 2);
    mems[4] = bench_ocl_info(&run->ocl, two.add_info, 1);
    const float two_f = 2.0f;
    BENCH_CL(clEnqueueFillBuffer(raw.q1, mems[1], &two_f, 4, 0, n * 4, 0, NULL, NULL));
    BENCH_CL(clFinish(raw.q1));
    const cl_mem fill_args[2] = {mems[0], mems[3]};
    const cl_mem add_args[4] = {mems[0], mems[1], mems[2], mems[4]};
    bench_ocl_args(raw.fill, fill_args, 2);
    bench_ocl_args(raw.add, add_args, 4);
    fns[3] = block_raw_two;
    fns[4] = block_raw_one;
    users[3] = users[4] = &raw;
    variants = 5;
  }
#endif
  /* Every variant runs the same number of rounds per block, sized on the two-stream one. */
  int ops = bench_calibrate_ops(block_dep_two, &two, cfg->block_seconds, 20, 20000);
  const size_t blocks = (size_t)cfg->dep_blocks;
  double *t[5], *d_cubert = calloc(blocks, sizeof(double)), *d_raw = calloc(blocks, sizeof(double));
  double *d_ring = calloc(blocks, sizeof(double));
  for (size_t v = 0; v < 5; ++v) t[v] = calloc(blocks, sizeof(double));
  if (bench_interleave(fns, users, variants, 2, (int)blocks, ops, t) != 0) exit(1);
  for (size_t k = 0; k < blocks; ++k) {
    d_cubert[k] = t[0][k] - t[1][k];
    d_ring[k] = t[2][k] - t[1][k];
    d_raw[k] = t[3][k] - t[4][k];
  }
  expect_f32(consumer, z, n, 3.0f, "two-stream add_f32");
  expect_f32(consumer, z1, n, 3.0f, "one-stream add_f32");
#if BENCH_HAVE_OPENCL
  if (run->have_ocl) {
    float got = 0;
    BENCH_CL(clEnqueueReadBuffer(raw.q2, mems[2], CL_TRUE, (n - 1) * 4, 4, &got, 0, NULL, NULL));
    if (got != 3.0f) {
      fprintf(stderr, "raw add_f32: last element %g, expected 3\n", (double)got);
      exit(1);
    }
  }
#endif

  bench_stats dc = bench_stats_scaled(d_cubert, blocks, 1e6);
  bench_stats c2 = bench_stats_scaled(t[0], blocks, 1e6);
  bench_stats c1 = bench_stats_scaled(t[1], blocks, 1e6);
  bench_stats dg = bench_stats_scaled(d_ring, blocks, 1e6);
  const char *what =
      "1. cross-stream dependency overhead per round: two streams \u2212 one "
      "(paired per block)";
  char ring_what[200];
  snprintf(ring_what, sizeof(ring_what),
           "1. the same overhead with the producer cycling through %d buffers (~1 wait per round)",
           DEP_RING);
  if (variants == 5) {
    bench_stats dr = bench_stats_scaled(d_raw, blocks, 1e6);
    bench_stats r2 = bench_stats_scaled(t[3], blocks, 1e6);
    bench_stats r1 = bench_stats_scaled(t[4], blocks, 1e6);
    bench_text ratio = bench_textf("cubert \u2212 raw = %+.2f \u00b5s", dc.median - dr.median);
    bench_row(what, "\u00b5s", dc,
              "raw: marker on q1 + flush, barrier on q2 (two queues \u2212 one)", dr, ratio.s,
              "\u2264 raw + 2 \u00b5s", bench_verdict(dc.median <= dr.median + 2.0));
    bench_row(ring_what, "\u00b5s", dg, "raw: two queues \u2212 one", dr,
              bench_textf("cubert \u2212 raw = %+.2f \u00b5s", dg.median - dr.median).s,
              "informative", "");
    bench_row("1. round on two streams: fill on P, add on C, sync C", "\u00b5s", c2,
              "raw: two queues", r2, bench_textf("%.3f\u00d7", c2.median / r2.median).s,
              "informative", "");
    bench_row("1. round on one stream: fill, add, sync", "\u00b5s", c1, "raw: one queue", r1,
              bench_textf("%.3f\u00d7", c1.median / r1.median).s, "informative", "");
  } else {
    bench_row(what, "\u00b5s", dc, "", no_stats, "", "\u2264 2 \u00b5s",
              bench_verdict(dc.median <= 2.0));
    bench_row(ring_what, "\u00b5s", dg, "", no_stats, "", "informative", "");
    bench_row("1. round on two streams: fill on P, add on C, sync C", "\u00b5s", c2, "", no_stats,
              "", "informative", "");
    bench_row("1. round on one stream: fill, add, sync", "\u00b5s", c1, "", no_stats, "",
              "informative", "");
  }
  bench_note(&run->notes,
             "1: %zu blocks of %d rounds per variant after 2 warm-up blocks, interleaved (order "
             "reversed every other block); %d-element buffers, cube dim 256. In the two-stream "
             "rounds x is written on P and read on C, so every round makes C wait for P; and "
             "because C used x last, the next round's fill on P waits for C too (cubert keys "
             "waits on a buffer's last use, write-after-read included), i.e. two cross-stream "
             "waits per round where the raw pattern has one (its host knows q2 finished).",
             blocks, ops, DEP_ELEMENTS);
  for (size_t v = 0; v < 5; ++v) free(t[v]);
  free(d_cubert);
  free(d_raw);
  free(d_ring);
#if BENCH_HAVE_OPENCL
  if (run->have_ocl) {
    for (int i = 0; i < 5; ++i) clReleaseMemObject(mems[i]);
    clReleaseKernel(raw.fill);
    clReleaseKernel(raw.add);
    clReleaseProgram(programs[0]);
    clReleaseProgram(programs[1]);
    clReleaseCommandQueue(raw.q1);
    clReleaseCommandQueue(raw.q2);
  }
#endif
  cubert_handle *all[6] = {x, b, z, x1, b1, z1};
  for (int i = 0; i < 6; ++i) cubert_handle_release(all[i]);
  for (int i = 1; i < DEP_RING; ++i) cubert_handle_release(ring.ring[i]);
  cubert_client_release(producer);
  cubert_client_release(consumer);
}

/* ---- 2. transfer / kernel overlap ---------------------------------------------------------- */

typedef struct overlap_cubert {
  cubert_client *transfer, *compute; /* the same view for the serial variant */
  cubert_handle *src;                /* read to the host */
  void *dst;
  size_t bytes;
  cubert_handle *saxpy_buffers[2];
  uint64_t saxpy_info[2];
  geometry g;
  int launches; /* K */
} overlap_cubert;

/* The read on `transfer`, then K saxpy launches on `compute`, then wait for both. */
static double overlap_once(const overlap_cubert *o) {
  const cubert_kernel_args args = {o->saxpy_buffers, 2, o->saxpy_info, 2};
  uint64_t t0 = bench_now_ns();
  cubert_future *f = NULL;
  BENCH_CHECK(cubert_client_read_async(o->transfer, o->src, o->dst, o->bytes, &f));
  for (int i = 0; i < o->launches; ++i)
    BENCH_CHECK(
        cubert_client_launch(o->compute, &cubert_kernel_saxpy_f32, o->g.count, o->g.dim, &args));
  BENCH_CHECK(cubert_client_flush(o->compute));
  BENCH_CHECK(cubert_future_wait(f));
  cubert_future_release(f);
  BENCH_CHECK(cubert_client_sync(o->compute));
  return bench_seconds_since(t0);
}

static double block_overlap(void *user, int ops) {
  double total = 0;
  for (int i = 0; i < ops; ++i) total += overlap_once(user);
  return total;
}

#if BENCH_HAVE_OPENCL
typedef struct overlap_raw {
  cl_command_queue transfer, compute; /* the same queue for the serial variant */
  cl_mem src;
  void *dst;
  size_t bytes;
  cl_kernel saxpy;
  bench_ocl_geometry g;
  int launches;
} overlap_raw;

static double block_overlap_raw(void *user, int ops) {
  overlap_raw *r = user;
  uint64_t t0 = bench_now_ns();
  for (int k = 0; k < ops; ++k) {
    cl_int err =
        clEnqueueReadBuffer(r->transfer, r->src, CL_FALSE, 0, r->bytes, r->dst, 0, NULL, NULL);
    if (err == CL_SUCCESS) err = clFlush(r->transfer);
    for (int i = 0; i < r->launches && err == CL_SUCCESS; ++i)
      err = bench_ocl_enqueue(r->compute, r->saxpy, &r->g, NULL);
    if (err == CL_SUCCESS) err = clFlush(r->compute);
    if (err == CL_SUCCESS) err = clFinish(r->transfer);
    if (err == CL_SUCCESS) err = clFinish(r->compute);
    if (err != CL_SUCCESS) {
      fprintf(stderr, "raw overlap round failed: %d\n", (int)err);
      return -1;
    }
  }
  return bench_seconds_since(t0);
}
#endif

static double median_of(double (*fn)(void *), void *user, int reps) {
  double samples[16];
  if (reps > 16) reps = 16;
  for (int i = 0; i < reps; ++i) samples[i] = fn(user);
  return bench_stats_of(samples, (size_t)reps).median;
}

static double time_read_only(void *user) {
  overlap_cubert o = *(overlap_cubert *)user;
  o.launches = 0;
  return overlap_once(&o);
}

static double time_one_saxpy(void *user) {
  const overlap_cubert *o = user;
  const cubert_kernel_args args = {o->saxpy_buffers, 2, o->saxpy_info, 2};
  uint64_t t0 = bench_now_ns();
  BENCH_CHECK(
      cubert_client_launch(o->compute, &cubert_kernel_saxpy_f32, o->g.count, o->g.dim, &args));
  BENCH_CHECK(cubert_client_sync(o->compute));
  return bench_seconds_since(t0);
}

static void section_overlap(bench_run *run) {
  const config *cfg = &run->cfg;
  progress("2/3 transfer / kernel overlap");
  const size_t bytes = (size_t)cfg->transfer_bytes;
  const uint64_t n = bytes / 4;
  cubert_client *ta = view(run, STREAM_TRANSFER), *cb = view(run, STREAM_COMPUTE);
  /* The source of the parallel variant lives on A, that of the serial one on B: neither
     variant then waits for the other stream's last use of its buffer. */
  cubert_handle *src_a, *src_b, *x, *y;
  BENCH_CHECK(cubert_client_empty(ta, bytes, &src_a));
  BENCH_CHECK(cubert_client_empty(cb, bytes, &src_b));
  BENCH_CHECK(cubert_client_empty(cb, bytes, &x));
  BENCH_CHECK(cubert_client_empty(cb, bytes, &y));
  fill(ta, src_a, n, 5.0f);
  fill(cb, src_b, n, 5.0f);
  fill(cb, x, n, 1.0f);
  fill(cb, y, n, 0.0f);
  BENCH_CHECK(cubert_client_sync(ta));
  BENCH_CHECK(cubert_client_sync(cb));

  /* The destination: pinned memory where the device has memory of its own (DMA engines copy
     asynchronously only from page-locked memory), plain touched malloc otherwise. */
  void *pageable = malloc(bytes);
  if (!pageable) {
    fprintf(stderr, "malloc of %zu bytes failed\n", bytes);
    exit(1);
  }
  memset(pageable, 0, bytes);
  void *dst = pageable;
  int pinned = 0;
#if BENCH_HAVE_OPENCL
  bench_ocl_pinned pin;
  memset(&pin, 0, sizeof(pin));
  if (run->have_ocl && !run->host_unified) {
    pin = bench_ocl_pinned_alloc(&run->ocl, bytes);
    dst = pin.ptr;
    pinned = 1;
  }
#endif

  overlap_cubert par = {
      ta, cb, src_a, dst, bytes, {x, y}, {n, cubert_kernel_info_f32(1e-6f)}, geometry_for(cb, n),
      0};
  overlap_cubert ser = par;
  ser.transfer = cb;
  ser.src = src_b;
  /* K: as many saxpy launches as fit in one read (medians of 3 after a warm-up). */
  time_read_only(&par);
  time_one_saxpy(&par);
  double t_read = median_of(time_read_only, &par, 3);
  double t_saxpy = median_of(time_one_saxpy, &par, 3);
  int k = (int)(t_read / t_saxpy + 0.5);
  if (k < 1) k = 1;
  if (k > 5000) k = 5000;
  par.launches = ser.launches = k;
  overlap_cubert par_pageable = par, ser_pageable = ser;
  par_pageable.dst = ser_pageable.dst = pageable;

  bench_block_fn fns[6];
  void *users[6];
  size_t variants = 0;
  fns[variants] = block_overlap, users[variants++] = &par;
  fns[variants] = block_overlap, users[variants++] = &ser;
#if BENCH_HAVE_OPENCL
  overlap_raw rpar, rser;
  cl_program program = NULL;
  cl_mem rmems[4] = {NULL, NULL, NULL, NULL};
  size_t raw_at = 0;
  if (run->have_ocl) {
    rpar.transfer = bench_ocl_queue(&run->ocl, 0);
    rpar.compute = bench_ocl_queue(&run->ocl, 0);
    rpar.saxpy = bench_ocl_build_raw(&run->ocl, "raw_saxpy_f32", &program);
    for (int i = 0; i < 3; ++i) rmems[i] = bench_ocl_buffer(&run->ocl, bytes);
    rmems[3] = bench_ocl_info(&run->ocl, par.saxpy_info, 2);
    const float values[3] = {5.0f, 1.0f, 0.0f};
    for (int i = 0; i < 3; ++i)
      BENCH_CL(
          clEnqueueFillBuffer(rpar.transfer, rmems[i], &values[i], 4, 0, bytes, 0, NULL, NULL));
    BENCH_CL(clFinish(rpar.transfer));
    const cl_mem args[3] = {rmems[1], rmems[2], rmems[3]};
    bench_ocl_args(rpar.saxpy, args, 3);
    rpar.src = rmems[0];
    rpar.dst = dst;
    rpar.bytes = bytes;
    rpar.g = bench_ocl_geometry_of(par.g.count, par.g.dim);
    rpar.launches = k;
    rser = rpar;
    rser.compute = rser.transfer;
    raw_at = variants;
    fns[variants] = block_overlap_raw, users[variants++] = &rpar;
    fns[variants] = block_overlap_raw, users[variants++] = &rser;
  }
#endif
  size_t pageable_at = variants;
  if (pinned) {
    fns[variants] = block_overlap, users[variants++] = &par_pageable;
    fns[variants] = block_overlap, users[variants++] = &ser_pageable;
  }

  const size_t reps = (size_t)cfg->overlap_reps;
  double *t[6];
  for (size_t v = 0; v < 6; ++v) t[v] = calloc(reps, sizeof(double));
  if (bench_interleave(fns, users, variants, 1, (int)reps, 1, t) != 0) exit(1);

  /* The read really delivered the data (5.0f everywhere) and the kernels ran. */
  const float *got = dst;
  if (got[0] != 5.0f || got[n - 1] != 5.0f || ((const float *)pageable)[n / 2] != 5.0f) {
    fprintf(stderr, "overlap: the host copy holds %g, expected 5\n", (double)got[0]);
    exit(1);
  }
  float y0 = 0;
  BENCH_CHECK(cubert_client_read_range(cb, y, 0, &y0, 4));
  if (!(y0 > 0.0f)) {
    fprintf(stderr, "overlap: saxpy left y[0] = %g\n", (double)y0);
    exit(1);
  }

  const int gated = !run->host_unified;
  bench_stats sp = bench_stats_scaled(t[0], reps, 1e3);
  bench_stats ss = bench_stats_scaled(t[1], reps, 1e3);
  double speedup = ss.median / sp.median;
  char what[320];
  snprintf(what, sizeof(what),
           "2. %zu MiB read_async on stream A (%s destination) + %d saxpy_f32 on stream B: two "
           "streams",
           bytes >> 20, pinned ? "pinned" : "malloc'd", k);
  bench_row(what, "ms", sp, "same work on one stream", ss,
            bench_textf("serial / parallel = %.2f\u00d7", speedup).s,
            gated ? "\u2265 1.5\u00d7" : "informative (host-unified device)",
            gated ? bench_verdict(speedup >= 1.5) : "");
#if BENCH_HAVE_OPENCL
  if (run->have_ocl) {
    bench_stats rp = bench_stats_scaled(t[raw_at], reps, 1e3);
    bench_stats rs = bench_stats_scaled(t[raw_at + 1], reps, 1e3);
    bench_row(
        "2. peer: raw OpenCL, non-blocking clEnqueueReadBuffer on q1 + the same K kernels on q2",
        "ms", rp, "raw: all on one queue", rs,
        bench_textf("serial / parallel = %.2f\u00d7", rs.median / rp.median).s, "informative", "");
  }
#endif
  if (pinned) {
    bench_stats pp = bench_stats_scaled(t[pageable_at], reps, 1e3);
    bench_stats ps = bench_stats_scaled(t[pageable_at + 1], reps, 1e3);
    bench_row("2. cubert, the same with a malloc'd (pageable) destination: two streams", "ms", pp,
              "one stream", ps,
              bench_textf("serial / parallel = %.2f\u00d7", ps.median / pp.median).s, "informative",
              "");
  }
  bench_note(&run->notes,
             "2: the read alone took %s ms and one saxpy_f32 launch + sync %s ms (medians of 3), "
             "so K = %d launches; %zu interleaved repetitions of every variant after 1 warm-up "
             "round. Wall time from the read_async call until both the future and the compute "
             "stream's sync returned.",
             bench_fmt(t_read * 1e3).s, bench_fmt(t_saxpy * 1e3).s, k, reps);
  for (size_t v = 0; v < 6; ++v) free(t[v]);
#if BENCH_HAVE_OPENCL
  if (run->have_ocl) {
    for (int i = 0; i < 4; ++i) clReleaseMemObject(rmems[i]);
    clReleaseKernel(rpar.saxpy);
    clReleaseProgram(program);
    clReleaseCommandQueue(rpar.transfer);
    clReleaseCommandQueue(rpar.compute);
  }
  if (pinned) bench_ocl_pinned_free(&pin);
#endif
  free(pageable);
  cubert_handle *all[4] = {src_a, src_b, x, y};
  for (int i = 0; i < 4; ++i) cubert_handle_release(all[i]);
  BENCH_CHECK(cubert_client_memory_cleanup(ta));
  cubert_client_release(ta);
  cubert_client_release(cb);
}

/* ---- 3. profiling -------------------------------------------------------------------------- */

/* The same ops inside one open profile region (opened and closed around the block; both
   are in the block's time, spread over its ops). */
static double block_noop_profiled(void *user, int ops) {
  cubert_client *client = user;
  uint64_t t0 = bench_now_ns();
  cubert_profile_token token;
  BENCH_CHECK(cubert_client_profile_start(client, &token));
  bench_block_noop(client, ops);
  cubert_profile_duration d;
  BENCH_CHECK(cubert_client_profile_end(client, token, &d));
  return bench_seconds_since(t0);
}

typedef struct add_launch {
  cubert_handle *buffers[3];
  uint64_t info[1];
  geometry g;
} add_launch;

static cubert_status launch_add(cubert_client *client, void *user) {
  const add_launch *a = user;
  const cubert_kernel_args args = {(cubert_handle *const *)a->buffers, 3, a->info, 1};
  return cubert_client_launch(client, &cubert_kernel_add_f32, a->g.count, a->g.dim, &args);
}

static void section_profiling(bench_run *run) {
  const config *cfg = &run->cfg;
  progress("3/3 profiling");
  cubert_client *never = view(run, STREAM_NEVER_PROFILED), *once = view(run, STREAM_PROFILED);

  /* (a) what having profiled costs the default path afterwards */
  int ops = bench_calibrate_ops(bench_block_noop, never, cfg->block_seconds, 20, 20000);
  const size_t blocks = (size_t)cfg->profile_blocks;
  double *t[5], *diff_aa = calloc(blocks, sizeof(double)), *diff = calloc(blocks, sizeof(double));
  for (int v = 0; v < 5; ++v) t[v] = calloc(blocks, sizeof(double));
  bench_block_fn aa_fns[2] = {bench_block_noop, bench_block_noop};
  void *aa_users[2] = {never, once};
  if (bench_interleave(aa_fns, aa_users, 2, 2, (int)blocks, ops, t) != 0) exit(1);
  {
    cubert_profile_token token;
    cubert_profile_duration d;
    BENCH_CHECK(cubert_client_profile_start(once, &token));
    bench_block_noop(once, 1);
    BENCH_CHECK(cubert_client_profile_end(once, token, &d));
  }
  bench_block_fn fns[3] = {bench_block_noop, bench_block_noop, block_noop_profiled};
  void *users[3] = {never, once, once};
  if (bench_interleave(fns, users, 3, 1, (int)blocks, ops, t + 2) != 0) exit(1);
  for (size_t b = 0; b < blocks; ++b) {
    diff_aa[b] = t[1][b] - t[0][b];
    diff[b] = t[3][b] - t[2][b];
  }
  bench_stats never_s = bench_stats_scaled(t[2], blocks, 1e6);
  bench_stats once_s = bench_stats_scaled(t[3], blocks, 1e6);
  bench_stats inside_s = bench_stats_scaled(t[4], blocks, 1e6);
  bench_stats d_s = bench_stats_scaled(diff, blocks, 1e6);
  bench_stats aa_s = bench_stats_scaled(diff_aa, blocks, 1e6);
  double allowed = 0.02 * never_s.median > 0.2 ? 0.02 * never_s.median : 0.2;
  bench_text target =
      bench_textf("|\u0394| \u2264 %s \u00b5s (max of 0.2 \u00b5s, 2%%)", bench_fmt(allowed).s);
  bench_row("3a. launch + sync, `noop`, on a stream after a profile was opened and closed",
            "\u00b5s/op", once_s, "a stream never profiled", never_s,
            bench_textf("\u0394 of medians %+.3f \u00b5s", once_s.median - never_s.median).s, "",
            "");
  bench_row("3a. difference (profiled once \u2212 never), paired per block", "\u00b5s/op", d_s, "",
            no_stats, "", target.s, bench_verdict(fabs(d_s.median) <= allowed));
  bench_row("3a. A/A: the same two streams before any profile (second \u2212 first), paired",
            "\u00b5s/op", aa_s, "", no_stats, "noise floor", "informative", "");
  bench_row("3a. launch + sync inside an open profile region", "\u00b5s/op", inside_s,
            "a stream never profiled", never_s,
            bench_textf("%+.2f \u00b5s", inside_s.median - never_s.median).s, "informative", "");
  bench_note(&run->notes,
             "3a: two views of one client pinned to streams %d and %d; %zu blocks of %d ops per "
             "variant, A/A first (2 warm-up blocks), then one profile opened and closed on the "
             "second stream, then the three variants interleaved (1 warm-up block).",
             STREAM_NEVER_PROFILED, STREAM_PROFILED, blocks, ops);
  for (int v = 0; v < 5; ++v) free(t[v]);
  free(diff);
  free(diff_aa);

  /* (b) device-timed duration of one launch against raw event profiling */
  uint64_t n = cfg->elements;
  add_launch add;
  for (int i = 0; i < 3; ++i)
    BENCH_CHECK(cubert_client_empty(never, (size_t)(n * 4), &add.buffers[i]));
  add.info[0] = n;
  add.g = geometry_for(never, n);
  fill(never, add.buffers[0], n, 1.0f);
  fill(never, add.buffers[1], n, 2.0f);
  BENCH_CHECK(cubert_client_sync(never));
  const size_t reps = (size_t)cfg->profile_reps;
  double *cub = calloc(reps, sizeof(double)), *peer = calloc(reps, sizeof(double));
  cubert_timing_method method = CUBERT_TIMING_SYSTEM;
  const char *peer_name = "host clock: launch + sync";
#if BENCH_HAVE_OPENCL
  cl_command_queue pq = NULL;
  cl_kernel rk = NULL;
  cl_program program = NULL;
  cl_mem rm[4] = {NULL, NULL, NULL, NULL};
  bench_ocl_geometry rg;
  if (run->have_ocl) {
    peer_name = "raw CL_PROFILING_COMMAND_END \u2212 START, same kernel and NDRange";
    pq = bench_ocl_queue(&run->ocl, CL_QUEUE_PROFILING_ENABLE);
    rk = bench_ocl_build_raw(&run->ocl, "raw_add_f32", &program);
    for (int i = 0; i < 3; ++i) rm[i] = bench_ocl_buffer(&run->ocl, (size_t)(n * 4));
    rm[3] = bench_ocl_info(&run->ocl, add.info, 1);
    const float values[3] = {1.0f, 2.0f, 0.0f};
    for (int i = 0; i < 3; ++i)
      BENCH_CL(clEnqueueFillBuffer(pq, rm[i], &values[i], 4, 0, (size_t)(n * 4), 0, NULL, NULL));
    BENCH_CL(clFinish(pq));
    bench_ocl_args(rk, rm, 4);
    rg = bench_ocl_geometry_of(add.g.count, add.g.dim);
  }
#endif
  for (int r = -2; r < (int)reps; ++r) {
    for (int k = 0; k < 2; ++k) {
      int which = (r & 1) ? 1 - k : k; /* alternate the order */
      double seconds = 0;
      if (which == 0) {
        cubert_profile_duration d;
        BENCH_CHECK(cubert_client_profile(never, launch_add, &add, &d));
        seconds = (double)d.duration_ns * 1e-9;
        method = d.method;
      } else {
#if BENCH_HAVE_OPENCL
        if (run->have_ocl) {
          cl_event ev;
          cl_ulong start = 0, end = 0;
          BENCH_CL(bench_ocl_enqueue(pq, rk, &rg, &ev));
          BENCH_CL(clWaitForEvents(1, &ev));
          BENCH_CL(
              clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof(start), &start, NULL));
          BENCH_CL(clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof(end), &end, NULL));
          clReleaseEvent(ev);
          seconds = (double)(end - start) * 1e-9;
        }
#endif
        if (!run->have_ocl) {
          uint64_t t0 = bench_now_ns();
          BENCH_CHECK(launch_add(never, &add));
          BENCH_CHECK(cubert_client_sync(never));
          seconds = bench_seconds_since(t0);
        }
      }
      if (r >= 0) (which == 0 ? cub : peer)[r] = seconds;
    }
  }
  expect_f32(never, add.buffers[2], n, 3.0f, "profiled add_f32");
  bench_stats cs = bench_stats_scaled(cub, reps, 1e3);
  bench_stats ps = bench_stats_scaled(peer, reps, 1e3);
  double ratio = cs.median / ps.median;
  char what[256];
  snprintf(what, sizeof(what),
           "3b. cubert_client_profile around one add_f32 launch, %llu floats (%s timing)",
           (unsigned long long)n, method == CUBERT_TIMING_DEVICE ? "device" : "system");
  bench_row(what, "ms", cs, peer_name, ps, bench_textf("%.3f\u00d7", ratio).s,
            run->have_ocl ? "within 5% of raw" : "informative",
            run->have_ocl ? bench_verdict(fabs(ratio - 1.0) <= 0.05) : "");
  bench_note(&run->notes,
             "3b: %zu repetitions of each after 2 warm-up rounds, order alternating; %s", reps,
             run->have_ocl ? "the raw queue has CL_QUEUE_PROFILING_ENABLE and its own buffers in "
                             "cubert's context."
                           : "no raw OpenCL on this device: the peer is the host-clock time of "
                             "launch + sync (informative).");
#if BENCH_HAVE_OPENCL
  if (run->have_ocl) {
    for (int i = 0; i < 4; ++i) clReleaseMemObject(rm[i]);
    clReleaseKernel(rk);
    clReleaseProgram(program);
    clReleaseCommandQueue(pq);
  }
#endif
  free(cub);
  free(peer);
  for (int i = 0; i < 3; ++i) cubert_handle_release(add.buffers[i]);
  BENCH_CHECK(cubert_client_memory_cleanup(never));
  cubert_client_release(never);
  cubert_client_release(once);
}

/* ---- main -------------------------------------------------------------------------------- */

static int usage(const char *argv0) {
  fprintf(stderr,
          "usage: %s [--device=SELECTOR] [--quick] [--only=123] [--transfer-mib=MIB] "
          "[--n=ELEMENTS]\n",
          argv0);
  return 2;
}

int main(int argc, char **argv) {
  bench_run run;
  memset(&run, 0, sizeof(run));
  run.cfg = config_default();
  run.selector = "opencl";
  const char *only = "123";
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--quick") == 0) {
      run.cfg.dep_blocks = 5;
      run.cfg.block_seconds = 0.002;
      run.cfg.transfer_bytes = 16ull << 20;
      run.cfg.overlap_reps = 2;
      run.cfg.profile_blocks = 4;
      run.cfg.elements = 1ull << 20;
      run.cfg.profile_reps = 3;
    } else if (strncmp(argv[i], "--device=", 9) == 0) {
      run.selector = argv[i] + 9;
    } else if (strncmp(argv[i], "--only=", 7) == 0) {
      only = argv[i] + 7;
    } else if (strncmp(argv[i], "--transfer-mib=", 15) == 0) {
      run.cfg.transfer_bytes = strtoull(argv[i] + 15, NULL, 10) << 20;
    } else if (strncmp(argv[i], "--n=", 4) == 0) {
      run.cfg.elements = strtoull(argv[i] + 4, NULL, 10);
    } else {
      return usage(argv[0]);
    }
  }
  if (run.cfg.transfer_bytes < (1u << 20)) run.cfg.transfer_bytes = 1u << 20;
  if (run.cfg.elements < 1024) run.cfg.elements = 1024;
  if (run.cfg.elements > (1ull << 30)) run.cfg.elements = 1ull << 30;

  BENCH_CHECK(cubert_client_create(run.selector, &run.client));
  run.props = cubert_client_properties(run.client);
  run.is_cpu_server = strcmp(run.props->backend, "cpu") == 0;
  run.host_unified = 1;
#if BENCH_HAVE_OPENCL
  run.have_ocl = bench_ocl_of(run.client, &run.ocl);
  if (run.have_ocl) run.host_unified = bench_ocl_host_unified(&run.ocl);
#endif

  printf("# bench_streams\n\n");
  bench_print_env(stdout);
  bench_print_device(stdout, run.props);
  printf("- cubert %s, selector \"%s\"; host-unified memory: %s; raw OpenCL peers: %s\n\n",
         CUBERT_VERSION_STRING, run.selector, run.host_unified ? "yes" : "no",
         run.have_ocl ? "yes, in cubert's own cl_context (backends/opencl/api.h)"
                      : "none (not an OpenCL device)");
  bench_compare_header(stdout);

  if (strchr(only, '1')) section_dependencies(&run);
  if (strchr(only, '2')) section_overlap(&run);
  if (strchr(only, '3')) section_profiling(&run);

  bench_notes_print(stdout, &run.notes);
  cubert_client_release(run.client);
  return 0;
}
