/* bench_to_client — cubert_client_to_client between devices (issue 14), beside the physical
   peer measured in the same run.

   For each ordered pair (src, dst): a src buffer of --mib MiB is copied to dst with
   cubert_client_to_client, then dst is synced (the copy's last writes are queued on dst's
   stream); GB/s = bytes / time of that pair of calls, median and min–max over --reps
   repetitions after one warm-up. The copy's handle is released outside the timed region.

   Peers (raw, same devices and contexts, same run, interleaved with cubert rep by rep):
   - two OpenCL devices: the staged copy peak: 8 MiB chunks through 4 pinned host buffers
     (CL_MEM_ALLOC_HOST_PTR in the source's context): clEnqueueReadBuffer (non-blocking) of
     the next chunks into pinned memory while chunk k's clEnqueueWriteBuffer (non-blocking)
     from it runs, clFinish on dst at the end. The read and write legs alone (whole buffer,
     pinned) are printed as notes: a perfectly overlapped pipeline runs at the slower of them.
   - one OpenCL instance (same device): clEnqueueCopyBuffer in its context; an OpenCL device and
     a private instance of it are two contexts: the staged peer above.
   - CPU server and an OpenCL device: clEnqueueWriteBuffer / clEnqueueReadBuffer of the whole
     buffer from / into pinned memory (host-unified devices: malloc'd memory).
   - two CPU instances: memcpy of the buffer (huge pages).

   Usage: bench_to_client [--mib=MIB] [--reps=N] [--copy-threads=N] [SRC,DST ...]
     --copy-threads: threads of the OpenCL servers' staging copies (default: half the CPUs,
              at most 8), to measure the pageable <-> pinned copies of a GPU <-> CPU-server
              transfer at other widths.
     SRC,DST  device selectors (cubert_client_create), e.g. opencl:0,opencl:1 (both directions
              are measured). Default: every pair of the devices this machine has, and each
              device with itself (one instance) and with a private instance of itself. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_ocl.h"
#include "bench_util.h"
#include "cubert/backend.h"
#include "cubert/server.h"

#define CHUNK (8u << 20)
#define SLOTS 4

typedef struct run {
  size_t bytes;
  int reps;
  size_t copy_threads; /* 0: the server's default */
  bench_notes notes;
} run;

static int is_opencl(cubert_client *c) {
  return strcmp(cubert_client_properties(c)->backend, "opencl") == 0;
}

static double time_to_client(cubert_client *src, cubert_handle *h, cubert_client *dst) {
  cubert_handle *out = NULL;
  uint64_t t0 = bench_now_ns();
  BENCH_CHECK(cubert_client_to_client(src, h, dst, &out));
  BENCH_CHECK(cubert_client_sync(dst));
  double s = bench_seconds_since(t0);
  cubert_handle_release(out);
  return s;
}

/* ---- raw peers ------------------------------------------------------------------------------- */

typedef struct peer {
  const char *name;
  double (*fn)(struct peer *p);
#if BENCH_HAVE_OPENCL
  bench_ocl src_ocl, dst_ocl;
  cl_command_queue src_q, dst_q;
  cl_mem src_mem, dst_mem;
  bench_ocl_pinned pinned[SLOTS];
  bench_ocl_pinned whole; /* pinned (or malloc'd, on host-unified devices) whole buffer */
  void *host;
#endif
  void *a, *b;
  size_t bytes;
} peer;

static double peer_memcpy(peer *p) {
  uint64_t t0 = bench_now_ns();
  memcpy(p->b, p->a, p->bytes);
  return bench_seconds_since(t0);
}

#if BENCH_HAVE_OPENCL
static double peer_staged(peer *p) {
  size_t chunks = (p->bytes + CHUNK - 1) / CHUNK;
  cl_event reads[SLOTS] = {0}, writes[SLOTS] = {0};
  uint64_t t0 = bench_now_ns();
  size_t issued = 0;
  for (size_t k = 0; k < chunks; ++k) {
    for (; issued < chunks && issued < k + SLOTS; ++issued) {
      int s = (int)(issued % SLOTS);
      if (writes[s]) {
        BENCH_CL(clWaitForEvents(1, &writes[s]));
        clReleaseEvent(writes[s]);
        writes[s] = NULL;
      }
      size_t off = issued * CHUNK, n = p->bytes - off < CHUNK ? p->bytes - off : CHUNK;
      BENCH_CL(clEnqueueReadBuffer(p->src_q, p->src_mem, CL_FALSE, off, n, p->pinned[s].ptr, 0,
                                   NULL, &reads[s]));
      clFlush(p->src_q);
    }
    int s = (int)(k % SLOTS);
    BENCH_CL(clWaitForEvents(1, &reads[s]));
    clReleaseEvent(reads[s]);
    reads[s] = NULL;
    size_t off = k * CHUNK, n = p->bytes - off < CHUNK ? p->bytes - off : CHUNK;
    BENCH_CL(clEnqueueWriteBuffer(p->dst_q, p->dst_mem, CL_FALSE, off, n, p->pinned[s].ptr, 0, NULL,
                                  &writes[s]));
    clFlush(p->dst_q);
  }
  BENCH_CL(clFinish(p->dst_q));
  double t = bench_seconds_since(t0);
  for (int s = 0; s < SLOTS; ++s)
    if (writes[s]) clReleaseEvent(writes[s]);
  return t;
}

static double peer_read_leg(peer *p) {
  uint64_t t0 = bench_now_ns();
  BENCH_CL(clEnqueueReadBuffer(p->src_q, p->src_mem, CL_TRUE, 0, p->bytes, p->host, 0, NULL, NULL));
  return bench_seconds_since(t0);
}

static double peer_write_leg(peer *p) {
  uint64_t t0 = bench_now_ns();
  BENCH_CL(
      clEnqueueWriteBuffer(p->dst_q, p->dst_mem, CL_TRUE, 0, p->bytes, p->host, 0, NULL, NULL));
  return bench_seconds_since(t0);
}

static double peer_copy_buffer(peer *p) {
  uint64_t t0 = bench_now_ns();
  BENCH_CL(clEnqueueCopyBuffer(p->src_q, p->src_mem, p->dst_mem, 0, 0, p->bytes, 0, NULL, NULL));
  BENCH_CL(clFinish(p->src_q));
  return bench_seconds_since(t0);
}

static cl_mem device_buffer(const bench_ocl *o, cl_command_queue q, size_t bytes) {
  cl_int err = CL_SUCCESS;
  cl_mem m = clCreateBuffer(o->context, CL_MEM_READ_WRITE, bytes, NULL, &err);
  BENCH_CL(err);
  cl_uint zero = 0;
  BENCH_CL(clEnqueueFillBuffer(q, m, &zero, sizeof zero, 0, bytes, 0, NULL, NULL));
  BENCH_CL(clFinish(q));
  return m;
}

/* Host memory for a leg on `o`: pinned unless the device is host-unified. */
static void *leg_host(peer *p, const bench_ocl *o) {
  if (bench_ocl_host_unified(o)) return p->a;
  p->whole = bench_ocl_pinned_alloc(o, p->bytes);
  return p->whole.ptr;
}

/* backends/opencl/staging.h's hook (the bench links the static library): the threads of the
   OpenCL server's staging copies, for --copy-threads. */
void cubert_ocl_server_set_copy_threads(cubert_server *server, size_t threads);

static cubert_status set_copy_threads(cubert_client *c, void *threads) {
  if (is_opencl(c))
    cubert_ocl_server_set_copy_threads(cubert_client_device(c)->server, *(size_t *)threads);
  return NULL;
}
#endif

static void peer_setup(peer *p, cubert_client *src, cubert_client *dst, size_t bytes) {
  memset(p, 0, sizeof(*p));
  p->bytes = bytes;
  p->a = bench_huge_alloc(bytes);
  p->b = bench_huge_alloc(bytes);
  memset(p->a, 1, bytes);
  memset(p->b, 2, bytes);
  p->name = "memcpy";
  p->fn = peer_memcpy;
#if BENCH_HAVE_OPENCL
  int so = is_opencl(src) && bench_ocl_of(src, &p->src_ocl);
  int dso = is_opencl(dst) && bench_ocl_of(dst, &p->dst_ocl);
  if (so) p->src_q = bench_ocl_queue(&p->src_ocl, 0);
  if (dso) p->dst_q = bench_ocl_queue(&p->dst_ocl, 0);
  if (so) p->src_mem = device_buffer(&p->src_ocl, p->src_q, bytes);
  if (dso) p->dst_mem = device_buffer(&p->dst_ocl, p->dst_q, bytes);
  if (so && dso && p->src_ocl.context == p->dst_ocl.context) {
    p->name = "clEnqueueCopyBuffer";
    p->fn = peer_copy_buffer;
  } else if (so && dso) {
    p->name = "raw staged copy (pinned, 8 MiB chunks)";
    p->fn = peer_staged;
    for (int s = 0; s < SLOTS; ++s) p->pinned[s] = bench_ocl_pinned_alloc(&p->src_ocl, CHUNK);
    p->host = leg_host(p, &p->src_ocl);
  } else if (so) {
    p->name = "clEnqueueReadBuffer";
    p->fn = peer_read_leg;
    p->host = leg_host(p, &p->src_ocl);
  } else if (dso) {
    p->name = "clEnqueueWriteBuffer";
    p->fn = peer_write_leg;
    p->host = leg_host(p, &p->dst_ocl);
  }
#else
  (void)src;
  (void)dst;
#endif
}

static void peer_teardown(peer *p) {
#if BENCH_HAVE_OPENCL
  for (int s = 0; s < SLOTS; ++s) bench_ocl_pinned_free(&p->pinned[s]);
  bench_ocl_pinned_free(&p->whole);
  if (p->src_mem) clReleaseMemObject(p->src_mem);
  if (p->dst_mem) clReleaseMemObject(p->dst_mem);
  if (p->src_q) clReleaseCommandQueue(p->src_q);
  if (p->dst_q) clReleaseCommandQueue(p->dst_q);
#endif
  bench_huge_free(p->a, p->bytes);
  bench_huge_free(p->b, p->bytes);
}

/* ---- one pair ------------------------------------------------------------------------------- */

static void measure(run *r, const char *src_sel, const char *dst_sel) {
  cubert_client *src = NULL, *dst = NULL;
  BENCH_CHECK(cubert_client_create(src_sel, &src));
  BENCH_CHECK(cubert_client_create(dst_sel, &dst));
#if BENCH_HAVE_OPENCL
  if (r->copy_threads) {
    BENCH_CHECK(cubert_client_exclusive(src, set_copy_threads, &r->copy_threads));
    BENCH_CHECK(cubert_client_exclusive(dst, set_copy_threads, &r->copy_threads));
  }
#endif
  cubert_handle *h = NULL;
  BENCH_CHECK(cubert_client_empty(src, r->bytes, &h));
  uint64_t info[2] = {r->bytes / 4, 3};
  cubert_kernel_args args = {&h, 1, info, 2};
  const cubert_device_properties *sp = cubert_client_properties(src);
  uint32_t dim = sp->hardware.max_units_per_cube < 256 ? sp->hardware.max_units_per_cube : 256;
  cubert_cube_count_selection cc;
  BENCH_CHECK(cubert_cube_count_select(src, (uint32_t)((r->bytes / 4 + dim - 1) / dim), &cc));
  BENCH_CHECK(cubert_client_launch(src, &cubert_kernel_fill_u32, cc.cube_count,
                                   cubert_cube_dim_new_3d(dim, 1, 1), &args));
  BENCH_CHECK(cubert_client_sync(src));
  peer p;
  peer_setup(&p, src, dst, r->bytes);
  double *mine = calloc((size_t)r->reps, sizeof(double));
  double *theirs = calloc((size_t)r->reps, sizeof(double));
  time_to_client(src, h, dst); /* warm-up: staging, programs, pools */
  p.fn(&p);
  for (int i = 0; i < r->reps; ++i) {
    mine[i] = time_to_client(src, h, dst);
    theirs[i] = p.fn(&p);
  }
  /* check the copy once */
  cubert_handle *out = NULL;
  BENCH_CHECK(cubert_client_to_client(src, h, dst, &out));
  uint32_t last = 0;
  BENCH_CHECK(cubert_client_read_range(dst, out, r->bytes - 4, &last, 4));
  if (last != 3) {
    fprintf(stderr, "%s -> %s: the copy holds %u, expected 3\n", src_sel, dst_sel, last);
    exit(1);
  }
  cubert_handle_release(out);
  double gb = (double)r->bytes * 1e-9;
  bench_stats m = bench_stats_rate(bench_stats_of(mine, (size_t)r->reps), gb);
  bench_stats t = bench_stats_rate(bench_stats_of(theirs, (size_t)r->reps), gb);
  char what[400];
  snprintf(what, sizeof what, "to_client %.63s (%.100s) -> %.63s (%.100s)", src_sel, sp->name,
           dst_sel, cubert_client_properties(dst)->name);
  bench_text ratio = bench_textf("%.2f", m.median / t.median);
  bench_row(what, "GB/s", m, p.name, t, ratio.s, ">= 0.80",
            bench_verdict(m.median >= 0.8 * t.median));
#if BENCH_HAVE_OPENCL
  if (p.fn == peer_staged) {
    double rl[5], wl[5];
    for (int i = 0; i < 5; ++i) {
      rl[i] = peer_read_leg(&p);
      wl[i] = peer_write_leg(&p);
    }
    bench_stats rs = bench_stats_rate(bench_stats_of(rl, 5), gb);
    bench_stats ws = bench_stats_rate(bench_stats_of(wl, 5), gb);
    bench_note(&r->notes,
               "%s -> %s: raw legs alone, whole buffer through pinned memory: read %s GB/s "
               "(%s), write %s GB/s (%s)",
               src_sel, dst_sel, bench_fmt(rs.median).s, bench_fmt_range(rs).s,
               bench_fmt(ws.median).s, bench_fmt_range(ws).s);
  }
#endif
  free(mine);
  free(theirs);
  peer_teardown(&p);
  cubert_handle_release(h);
  cubert_client_release(src);
  cubert_client_release(dst);
}

int main(int argc, char **argv) {
  run r = {.bytes = 256u << 20, .reps = 7};
  char pairs[64][2][64];
  int npairs = 0;
  for (int i = 1; i < argc; ++i) {
    if (strncmp(argv[i], "--mib=", 6) == 0) {
      r.bytes = (size_t)(atof(argv[i] + 6) * (1 << 20));
      r.bytes &= ~(size_t)3;
    } else if (strncmp(argv[i], "--reps=", 7) == 0) {
      r.reps = atoi(argv[i] + 7);
    } else if (strncmp(argv[i], "--copy-threads=", 15) == 0) {
      r.copy_threads = (size_t)atoi(argv[i] + 15);
    } else if (strchr(argv[i], ',') && npairs < 32) {
      const char *comma = strchr(argv[i], ',');
      snprintf(pairs[npairs][0], 64, "%.*s", (int)(comma - argv[i]), argv[i]);
      snprintf(pairs[npairs][1], 64, "%.63s", comma + 1);
      ++npairs;
    } else {
      fprintf(stderr, "usage: %s [--mib=MIB] [--reps=N] [--copy-threads=N] [SRC,DST ...]\n",
              argv[0]);
      return 2;
    }
  }
  if (r.reps < 1 || r.bytes < 4) {
    fprintf(stderr, "--reps must be >= 1 and --mib at least 4 bytes\n");
    return 2;
  }
  if (npairs == 0) { /* every device of this machine */
    char devices[16][64];
    int n = 0;
    const cubert_backend *const *b = cubert_backends();
    for (size_t i = 0; b[i]; ++i) {
      cubert_device_info infos[16];
      size_t count = 0;
      cubert_status s = b[i]->enumerate(infos, 16, &count);
      cubert_status_free(s);
      for (size_t k = 0; !s && k < count && k < 16 && n < 16; ++k)
        if (infos[k].available) snprintf(devices[n++], 64, "%s:%zu", b[i]->name, k);
    }
    for (int i = 0; i < n; ++i)
      for (int j = i; j < n && npairs < 30; ++j) {
        snprintf(pairs[npairs][0], 64, "%.63s", devices[i]);
        snprintf(pairs[npairs][1], 64, "%.63s", devices[j]);
        ++npairs;
        if (i == j) { /* and to a private instance of the same device */
          snprintf(pairs[npairs][0], 64, "%.63s", devices[i]);
          snprintf(pairs[npairs][1], 64, "%.50s!private", devices[j]);
          ++npairs;
        }
      }
  }
  printf("# to_client: %.0f MiB, %d repetitions\n\n", (double)r.bytes / (1 << 20), r.reps);
  bench_print_env(stdout);
  printf("\n");
  bench_compare_header(stdout);
  for (int i = 0; i < npairs; ++i) {
    measure(&r, pairs[i][0], pairs[i][1]);
    if (strcmp(pairs[i][0], pairs[i][1]) != 0) measure(&r, pairs[i][1], pairs[i][0]);
  }
  bench_note(&r.notes,
             "GB/s = bytes / time of to_client + sync of the destination; the peer runs rep by rep "
             "between cubert's, on the same devices");
  bench_notes_print(stdout, &r.notes);
  return 0;
}
