/* A gate that holds the calling stream's queue on either server, so that a test can observe
   work queued behind it while it is pending: on the CPU server a kernel that spins until the
   gate opens (or 30 s passed, so a broken test fails instead of hanging); on OpenCL a barrier
   on a user event (cubert/opencl.h). The test must not wait on the stream before opening it. */
#ifndef CTS_GATE_H
#define CTS_GATE_H

#include <sched.h>
#include <stdatomic.h>
#include <time.h>

#include "cts.h"
#ifdef CUBERT_WITH_OPENCL
#include <cubert/opencl.h>
#endif

typedef struct cts_gate {
  cubert_handle *scratch; /* the CPU kernel's argument */
#ifdef CUBERT_WITH_OPENCL
  cl_event event;
#endif
} cts_gate;

static atomic_int cts_gate_open_flag;

static inline double cts_gate_now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void cts_gate_spin(const cubert_cpu_ctx *ctx) {
  if (ctx->unit_begin != 0) return;
  double start = cts_gate_now_s();
  while (!atomic_load(&cts_gate_open_flag) && cts_gate_now_s() - start < 30.0) sched_yield();
}

static inline void cts_gate_close(cts_gate *g) {
  memset(g, 0, sizeof(*g));
  atomic_store(&cts_gate_open_flag, 0);
  if (cts_is_cpu()) {
    static const cubert_kernel_def spin = {.name = "cts_gate_spin", .cpu = cts_gate_spin};
    ASSERT_OK(cubert_client_empty(cts_client, 4, &g->scratch));
    cubert_kernel_args args = {&g->scratch, 1, NULL, 0};
    ASSERT_OK(cubert_client_launch(cts_client, &spin, cubert_cube_count_new_3d(1, 1, 1),
                                   cubert_cube_dim_new_3d(1, 1, 1), &args));
    return;
  }
#ifdef CUBERT_WITH_OPENCL
  cl_context ctx = NULL;
  cl_command_queue q = NULL;
  ASSERT_OK(cubert_opencl_context(cts_client, &ctx, NULL));
  ASSERT_OK(cubert_opencl_queue(cts_client, &q));
  cl_int err = CL_SUCCESS;
  g->event = clCreateUserEvent(ctx, &err);
  cr_assert_eq(err, CL_SUCCESS);
  cr_assert_eq(clEnqueueBarrierWithWaitList(q, 1, &g->event, NULL), CL_SUCCESS);
#endif
}

static inline void cts_gate_open(cts_gate *g) {
  atomic_store(&cts_gate_open_flag, 1);
  cubert_handle_release(g->scratch);
#ifdef CUBERT_WITH_OPENCL
  if (g->event) {
    cr_assert_eq(clSetUserEventStatus(g->event, CL_COMPLETE), CL_SUCCESS);
    clReleaseEvent(g->event);
  }
#endif
  memset(g, 0, sizeof(*g));
}

#endif /* CTS_GATE_H */
