/* cubert CPU server — what kernel-language code reports in validate mode: out-of-range buffer
   elements and info words (cubert/cube.h's accessors), misplaced barriers. The first report of
   a launch becomes its error on the stream, in the core's format (lib/kernel_check.c), so the
   CPU server and the OpenCL server word a violation alike. Reports come from any worker at any
   time; the launch's `failed` flag keeps one. */
#include "cpu/checks.h"

#include "cpu/san_symbols.h"
#include "cpu/server.h"
#include "cubert/server/violation.h"

/* `pc`: the return address into the kernel's code of an access report (NULL: none), whose
   file:line the report names where the code carries line tables (a sanitize copy always does:
   san_symbols.h); looked up only for the launch's first report. */
static void report(const cubert_cpu_ctx *ctx, cubert_kernel_violation *v, uint64_t unit_id,
                   const void *pc) {
  const cubert_cpu_call *call = ctx ? ctx->priv_ : NULL;
  if (!call || !call->job) return;
  cubert_cpu_job *job = call->job;
  if (atomic_exchange_explicit(&job->failed, 1, memory_order_relaxed)) return;
  char at[256];
  const cubert_kernel_signature *sig = job->kernel->signature;
  if (pc && cubert_cpu_san_symbols_where(pc, sig ? sig->file : NULL, at, sizeof at)) v->what = at;
  if (unit_id != UINT64_MAX) {
    cubert_cpu_cube_pos(ctx, unit_id, v->cube);
    cubert_cpu_unit_pos(ctx, unit_id, v->unit);
    v->has_unit = 1;
  }
  cubert_stream_errors_push_for(job->stream->errors, job->submitter,
                                cubert_kernel_violation_status(job->kernel, v));
}

void cubert_cpu_report_access(const cubert_cpu_ctx *ctx, uint32_t buffer, uint64_t unit_id,
                              uint64_t index, uint64_t length) {
  cubert_kernel_violation v = {
      .kind = buffer == CUBERT_CPU_ACCESS_INFO ? CUBERT_VIOLATION_INFO : CUBERT_VIOLATION_BUFFER,
      .buffer = buffer,
      .index = index,
      .length = length,
  };
  report(ctx, &v, unit_id, __builtin_return_address(0));
}

void cubert_cpu_report_info_limit(const cubert_cpu_ctx *ctx, uint64_t unit_id, uint32_t word,
                                  uint64_t value, uint64_t limit) {
  cubert_kernel_violation v = {
      .kind = CUBERT_VIOLATION_INFO_LIMIT,
      .buffer = word,
      .index = value,
      .length = limit,
  };
  report(ctx, &v, unit_id, NULL);
}

void cubert_cpu_report_barrier(const cubert_cpu_ctx *ctx, uint32_t line, const char *what) {
  cubert_kernel_violation v = {.kind = CUBERT_VIOLATION_BARRIER, .line = line, .what = what};
  report(ctx, &v, ctx ? ctx->unit_begin : UINT64_MAX, NULL);
}

void cubert_cpu_report_sanitizer(const cubert_cpu_ctx *ctx, uint64_t unit_id, const char *what) {
  cubert_kernel_violation v = {.kind = CUBERT_VIOLATION_SANITIZER, .what = what};
  report(ctx, &v, unit_id, NULL);
}
