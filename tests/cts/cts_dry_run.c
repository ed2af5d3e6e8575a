/* Dry run (cubecl dry_run, newer than the seed files; cubert_client_set_dry_run): a launch is
   checked as a real one (the same errors) and compiled, and runs nothing; reads give zeros;
   autotune still measures (the reference's RealRun: "autotune inside dry run still measures",
   cubecl-architecture.md integration test 41); leaving dry run, everything works as before. The
   OpenCL disk cache that a dry run writes is checked in tests/unit/opencl_dry_run.c. */
#include <time.h>
#include <unistd.h>

#include "cts.h"

TestSuite(dry_run, .init = cts_setup, .fini = cts_teardown);

/* Definitions from the kernel files in tests/kernels (cubert_add_kernels, bare names). */
extern const cubert_kernel_def shifted_write, uses_function_pointer;

enum { N = 64 };

/* A second view of the device under test (cts_client's instance), in dry run. */
static cubert_client *dry_client(void) {
  cubert_client *c = NULL;
  ASSERT_OK(cubert_client_create(cts_device(), &c));
  cr_assert_eq(cubert_client_dry_run(c), 0, "a client starts out of dry run");
  ASSERT_OK(cubert_client_set_dry_run(c, 1));
  cr_assert_eq(cubert_client_dry_run(c), 1);
  return c;
}

static cubert_status fill(cubert_client *c, cubert_handle *h, uint64_t n, uint32_t value,
                          cubert_cube_count count, cubert_cube_dim dim) {
  uint64_t info[2] = {n, value};
  cubert_kernel_args args = {&h, 1, info, 2};
  return cubert_client_launch(c, &cubert_kernel_fill_u32, count, dim, &args);
}

static cubert_handle *nines(void) {
  uint32_t v[N];
  for (int i = 0; i < N; ++i) v[i] = 9;
  return cts_buffer(v, sizeof v);
}

static void expect_all(cubert_handle *h, uint32_t value, const char *when) {
  uint32_t v[N];
  cts_read(h, v, sizeof v);
  for (int i = 0; i < N; ++i) cr_assert_eq(v[i], value, "%s: element %d is %u", when, i, v[i]);
}

/* Reference test 41: the launch is skipped (the output stays [9, ...]); the same launch outside
   dry run computes. */
Test(dry_run, launch_leaves_the_output_untouched_and_a_real_launch_then_computes) {
  cubert_client *dry = dry_client();
  cubert_handle *h = nines();
  cubert_cube_count count = cts_cubes(N, 16);
  ASSERT_OK(fill(dry, h, N, 42, count, cubert_cube_dim_new_3d(16, 1, 1)));
  ASSERT_OK(cubert_client_launch_unchecked(dry, &cubert_kernel_fill_u32, count,
                                           cubert_cube_dim_new_3d(16, 1, 1),
                                           &(cubert_kernel_args){&h, 1, (uint64_t[]){N, 43}, 2}));
  ASSERT_OK(cubert_client_flush(dry));
  ASSERT_OK(cubert_client_sync(dry));
  ASSERT_OK(cubert_client_sync_all(dry));
  cr_assert_eq(cubert_client_dry_run(cts_client), 0, "other views of the device are not affected");
  expect_all(h, 9, "after dry-run launches");
  /* Leaving dry run: the same client computes. */
  ASSERT_OK(cubert_client_set_dry_run(dry, 0));
  cr_assert_eq(cubert_client_dry_run(dry), 0);
  ASSERT_OK(fill(dry, h, N, 42, count, cubert_cube_dim_new_3d(16, 1, 1)));
  expect_all(h, 42, "after the real launch");
  cubert_handle_release(h);
  cubert_client_release(dry);
}

/* Writes and new buffers proceed in dry run; reads check their arguments as usual and give
   zeros, at once, synchronous and asynchronous alike. */
Test(dry_run, writes_proceed_and_reads_give_zeros) {
  cubert_client *dry = dry_client();
  cubert_handle *h = NULL;
  uint32_t seven[N];
  for (int i = 0; i < N; ++i) seven[i] = 7;
  ASSERT_OK(cubert_client_create_buffer(dry, seven, sizeof seven, &h));
  uint32_t v[N];
  memset(v, 0xab, sizeof v);
  ASSERT_OK(cubert_client_read(dry, h, v, sizeof v));
  for (int i = 0; i < N; ++i) cr_assert_eq(v[i], 0u, "read in dry run: element %d is %u", i, v[i]);
  memset(v, 0xab, sizeof v);
  ASSERT_OK(cubert_client_read_range(dry, h, 8, v, 16));
  cr_assert_eq(v[0], 0u);
  cr_assert_eq(v[3], 0u);
  cr_assert_eq(v[4], 0xababababu, "nothing past the range is written");
  memset(v, 0xab, sizeof v);
  cubert_future *f = NULL;
  ASSERT_OK(cubert_client_read_async(dry, h, v, sizeof v, &f));
  int ready = 0;
  ASSERT_OK(cubert_future_poll(f, &ready));
  cr_assert_eq(ready, 1, "a dry-run read is complete at once");
  ASSERT_OK(cubert_future_wait(f));
  cubert_future_release(f);
  for (int i = 0; i < N; ++i) cr_assert_eq(v[i], 0u);
  /* The same argument errors as a real read. */
  ASSERT_CODE(cubert_client_read(dry, h, v, sizeof v + 4), CUBERT_CODE_INVALID_ARGUMENT, NULL);
  ASSERT_CODE(cubert_client_read(dry, h, NULL, 4), CUBERT_CODE_INVALID_ARGUMENT, "dst is NULL");
  ASSERT_CODE(cubert_client_read_async(dry, h, v, sizeof v + 4, &f), CUBERT_CODE_INVALID_ARGUMENT,
              NULL);
  /* A write in dry run is real: a real read sees it. */
  uint32_t five[2] = {5, 5};
  ASSERT_OK(cubert_client_write(dry, h, 0, five, sizeof five));
  cts_read(h, v, sizeof v);
  cr_assert_eq(v[0], 5u);
  cr_assert_eq(v[1], 5u);
  cr_assert_eq(v[2], 7u);
  cubert_handle_release(h);
  cubert_client_release(dry);
}

/* Runs `launch_fn` on a real view and on a dry-run view and asserts the same error (code and
   first line of the message) from both. */
typedef cubert_status (*launch_fn)(cubert_client *c, cubert_handle *h);

static void expect_same_error(launch_fn fn, cubert_handle *h, cubert_code code, const char *what) {
  cubert_client *dry = dry_client();
  cubert_status real = fn(cts_client, h);
  cubert_status dried = fn(dry, h);
  cr_assert_not_null(real, "%s: the real launch succeeded", what);
  cr_assert_not_null(dried, "%s: the dry-run launch succeeded (real: %s)", what,
                     cubert_status_message(real));
  cr_assert_eq(cubert_status_code(real), code, "%s: real launch: %s", what,
               cubert_status_message(real));
  cr_assert_eq(cubert_status_code(dried), code, "%s: dry-run launch: %s", what,
               cubert_status_message(dried));
  /* The first line: a build log may name the driver's temporary file, another at each build. */
  const char *a = cubert_status_message(dried), *b = cubert_status_message(real);
  const size_t n = strcspn(a, "\n");
  cr_assert(n == strcspn(b, "\n") && strncmp(a, b, n) == 0, "%s:\n  dry run: %s\n  real:    %s",
            what, a, b);
  cubert_status_free(real);
  cubert_status_free(dried);
  cubert_client_release(dry);
}

static cubert_status zero_dim(cubert_client *c, cubert_handle *h) {
  return fill(c, h, N, 1, cubert_cube_count_new_3d(1, 1, 1), cubert_cube_dim_new_3d(0, 1, 1));
}
static cubert_status oversized_dim(cubert_client *c, cubert_handle *h) {
  const cubert_hardware_properties *hw = &cubert_client_properties(c)->hardware;
  return fill(c, h, N, 1, cubert_cube_count_new_3d(1, 1, 1),
              cubert_cube_dim_new_3d(hw->max_cube_dim[0] + 1, 1, 1));
}
static cubert_status oversized_count(cubert_client *c, cubert_handle *h) {
  const cubert_hardware_properties *hw = &cubert_client_properties(c)->hardware;
  return fill(c, h, N, 1, cubert_cube_count_new_3d(1, hw->max_cube_count[1] + 1, 1),
              cubert_cube_dim_new_3d(1, 1, 1));
}
static cubert_status released_handle(cubert_client *c, cubert_handle *h) {
  (void)h;
  cubert_handle *gone = NULL;
  cubert_status s = cubert_client_empty(c, 16, &gone);
  if (s) return s;
  cubert_handle_release(gone);
  return fill(c, gone, 4, 1, cubert_cube_count_new_3d(1, 1, 1), cubert_cube_dim_new_3d(4, 1, 1));
}
static cubert_status null_buffers(cubert_client *c, cubert_handle *h) {
  (void)h;
  cubert_kernel_args args = {NULL, 1, NULL, 0};
  return cubert_client_launch(c, &cubert_kernel_fill_u32, cubert_cube_count_new_3d(1, 1, 1),
                              cubert_cube_dim_new_3d(1, 1, 1), &args);
}
static cubert_status bad_mode(cubert_client *c, cubert_handle *h) {
  uint64_t info[2] = {N, 1};
  cubert_kernel_args args = {&h, 1, info, 2};
  return cubert_client_launch_mode(c, &cubert_kernel_fill_u32, cubert_cube_count_new_3d(1, 1, 1),
                                   cubert_cube_dim_new_3d(1, 1, 1), &args,
                                   (cubert_execution_mode)7);
}
/* A kernel-language kernel's declared signature: float elements, one buffer. */
static cubert_status wrong_signature(cubert_client *c, cubert_handle *h) {
  cubert_handle *b[2] = {h, h};
  const uint64_t info[2] = {2, 0};
  cubert_kernel_args args = {b, 2, info, 2};
  return cubert_client_launch(c, &shifted_write, cubert_cube_count_new_3d(1, 1, 1),
                              cubert_cube_dim_new_3d(2, 1, 1), &args);
}

Test(dry_run, invalid_launches_fail_as_real_ones) {
  cubert_handle *h = nines();
  expect_same_error(zero_dim, h, CUBERT_CODE_INVALID_ARGUMENT, "zero cube dim");
  expect_same_error(oversized_dim, h, CUBERT_CODE_CUBE_DIM, "cube dim over the limit");
  const cubert_hardware_properties *hw = &cubert_client_properties(cts_client)->hardware;
  if (hw->max_cube_count[1] < UINT32_MAX)
    expect_same_error(oversized_count, h, CUBERT_CODE_TOO_MANY_RESOURCES, "cube count");
  expect_same_error(released_handle, h, CUBERT_CODE_NOT_FOUND, "released handle");
  expect_same_error(null_buffers, h, CUBERT_CODE_INVALID_ARGUMENT, "NULL buffers");
  expect_same_error(bad_mode, h, CUBERT_CODE_INVALID_ARGUMENT, "mode out of the enum");
  expect_same_error(wrong_signature, h, CUBERT_CODE_INVALID_ARGUMENT, "declared signature");
  expect_all(h, 9, "after the failed launches");
  cubert_handle_release(h);
}

/* OpenCL: the dry-run launch builds the program, so a build error is the launch's error, with
   the build log naming the kernel file and line, as at a real launch. */
static cubert_status bad_opencl(cubert_client *c, cubert_handle *h) {
  const uint64_t info[1] = {4};
  cubert_kernel_args args = {&h, 1, info, 1};
  return cubert_client_launch(c, &uses_function_pointer, cubert_cube_count_new_3d(1, 1, 1),
                              cubert_cube_dim_new_3d(4, 1, 1), &args);
}

Test(dry_run, compile_errors_are_the_launch_errors) {
  if (!cts_is_opencl()) cr_skip_test("the CPU server compiles nothing at launch");
  cubert_handle *h = nines();
  expect_same_error(bad_opencl, h, CUBERT_CODE_COMPILATION, "OpenCL build error");
  cubert_client *dry = dry_client();
  cubert_status s = bad_opencl(dry, h);
  cr_assert_not_null(s);
  const char *log = cubert_status_build_log(s);
  cr_assert(log && strstr(log, "bad_opencl.cube.c:11:"), "the log names file and line: %s",
            log ? log : "(none)");
  cubert_status_free(s);
  cubert_client_release(dry);
  cubert_handle_release(h);
}

/* The mode belongs to the view: a view pinned to a stream starts in its parent's mode; a
   released client cannot be switched. */
Test(dry_run, stream_views_inherit_the_mode) {
  cubert_client *dry = dry_client();
  cubert_client *view = NULL;
  ASSERT_OK(cubert_client_with_stream(dry, 3, &view));
  cr_assert_eq(cubert_client_dry_run(view), 1);
  cubert_handle *h = nines();
  ASSERT_OK(fill(view, h, N, 42, cts_cubes(N, 16), cubert_cube_dim_new_3d(16, 1, 1)));
  ASSERT_OK(cubert_client_sync(view));
  expect_all(h, 9, "after a dry-run launch on a stream view");
  ASSERT_OK(cubert_client_set_dry_run(view, 0));
  cr_assert_eq(cubert_client_dry_run(dry), 1, "switching a view leaves its parent as it was");
  cubert_client_release(view);
  cubert_client_release(dry);
  ASSERT_CODE(cubert_client_set_dry_run(dry, 1), CUBERT_CODE_NOT_FOUND, NULL);
  ASSERT_CODE(cubert_client_set_dry_run(NULL, 1), CUBERT_CODE_INVALID_ARGUMENT, NULL);
  cr_assert_eq(cubert_client_dry_run(dry), 0);
  cr_assert_eq(cubert_client_dry_run(NULL), 0);
  cubert_handle_release(h);
}

/* Autotune in dry run measures for real, as the reference's (its test 41: "autotune inside dry
   run still measures"), and caches the decision; the winner's own launch is dry. The measured
   runs write a scratch copy of out (cubert_tune_execute), so the caller's buffer is left as
   it was; each candidate reads back what it wrote, which a dry run would give as zeros. */
typedef struct tune_args {
  cubert_handle *out;
  int calls[2];
  uint32_t seen[2]; /* out[0] as candidate i last read it nonzero after its fill */
} tune_args;

static cubert_status candidate(cubert_client *c, const void *a, int i) {
  tune_args *t = (tune_args *)a;
  t->calls[i]++;
  const uint32_t dim = i ? 32 : 16;
  CUBERT_RETURN_IF_ERROR(
      fill(c, t->out, N, 100u + (uint32_t)i, cts_cubes(N, dim), cubert_cube_dim_new_3d(dim, 1, 1)));
  uint32_t got = 0;
  CUBERT_RETURN_IF_ERROR(cubert_client_read_range(c, t->out, 0, &got, sizeof got));
  if (got) t->seen[i] = got; /* the winner's dry launch reads zeros */
  return NULL;
}
static cubert_status candidate0(cubert_client *c, const void *a) {
  return candidate(c, a, 0);
}
static cubert_status candidate1(cubert_client *c, const void *a) {
  return candidate(c, a, 1);
}
static const cubert_tune_candidate kCandidates[] = {
    {"fill16", candidate0, NULL, 0},
    {"fill32", candidate1, NULL, 0},
};
static const cubert_tune_set kSet = {"cts.dry_run.fill", kCandidates, 2, 0, NULL};

Test(dry_run, autotune_measures_and_the_winner_launch_is_dry) {
  cubert_client *dry = dry_client();
  tune_args a = {nines(), {0, 0}, {0, 0}};
  /* A key of its own per run, so that no disk cache entry of an earlier run answers it. */
  cubert_tune_key key = {0};
  ASSERT_OK(cubert_tune_key_add(&key, (uint64_t)time(NULL) * 1000003u ^ (uint64_t)getpid()));
  cubert_tune_stats before, after;
  ASSERT_OK(cubert_tune_stats_get(dry, &before));
  ASSERT_OK(cubert_tune_execute(dry, &kSet, &key, &a));
  ASSERT_OK(cubert_tune_stats_get(dry, &after));
  cr_assert_eq(after.tunings, before.tunings + 1, "the key was tuned");
  cr_assert_eq(after.candidates_measured, before.candidates_measured + 2);
  cr_assert(a.calls[0] >= 2 && a.calls[1] >= 2, "both measured: %d, %d", a.calls[0], a.calls[1]);
  cr_assert(a.seen[0] == 100 && a.seen[1] == 101, "the measurements ran: %u, %u", a.seen[0],
            a.seen[1]);
  expect_all(a.out, 9, "after tuning in dry run (measured on a scratch copy, dry winner)");
  /* The decision is cached: the next call launches its winner, in dry run, and measures
     nothing. */
  uint32_t reset[N];
  for (int i = 0; i < N; ++i) reset[i] = 9;
  ASSERT_OK(cubert_client_write(cts_client, a.out, 0, reset, sizeof reset));
  const int calls = a.calls[0] + a.calls[1];
  ASSERT_OK(cubert_tune_execute(dry, &kSet, &key, &a));
  ASSERT_OK(cubert_tune_stats_get(dry, &before));
  cr_assert_eq(before.tunings, after.tunings, "not tuned again");
  cr_assert_eq(before.memory_hits, after.memory_hits + 1);
  cr_assert_eq(a.calls[0] + a.calls[1], calls + 1, "the winner alone was launched");
  expect_all(a.out, 9, "after the winner's dry-run launch");
  /* Out of dry run the winner computes. */
  ASSERT_OK(cubert_tune_execute(cts_client, &kSet, &key, &a));
  uint32_t v[N];
  cts_read(a.out, v, sizeof v);
  cr_assert(v[0] == 100 || v[0] == 101, "the winner ran: %u", v[0]);
  cubert_handle_release(a.out);
  cubert_client_release(dry);
}

/* Writes the host mirror `mirror` of a handle as write_tensor writes `src` into `desc`'s region
   (row-major over the shape). */
static void mirror_write(uint32_t *mirror, const cubert_copy_desc *desc, const uint32_t *src) {
  uint64_t n = 1;
  for (uint32_t d = 0; d < desc->rank; ++d) n *= desc->shape[d];
  for (uint64_t k = 0; k < n; ++k) {
    uint64_t rest = k, at = desc->offset;
    for (uint32_t d = desc->rank; d-- > 0;) {
      at += rest % desc->shape[d] * desc->strides[d];
      rest /= desc->shape[d];
    }
    mirror[at] = src[k];
  }
}

/* Writes through strided, permuted and pitched views land in dry run as outside it (issue 35:
   they returned OK and never landed once the copy kernel's tuning was cached). A real write of
   each view first caches the tuning of its copy; then two dry-run writes of new values, each
   checked through a real read of the whole buffer. */
Test(dry_run, strided_and_permuted_writes_land) {
  enum { WORDS = 1024 };
  const cubert_copy_desc views[] = {
      {.rank = 1, .shape = {20}, .strides = {3}, .elem_size = 4, .offset = 1},
      {.rank = 1, .shape = {100}, .strides = {3}, .elem_size = 4, .offset = 5},
      {.rank = 2, .shape = {8, 12}, .strides = {1, 8}, .elem_size = 4, .offset = 2},
      {.rank = 2, .shape = {4, 64}, .strides = {1, 4}, .elem_size = 4},
      {.rank = 2, .shape = {3, 70}, .strides = {80, 1}, .elem_size = 4, .offset = 7},
      {.rank = 3, .shape = {2, 5, 6}, .strides = {1, 12, 2}, .elem_size = 4, .offset = 3},
  };
  cubert_client *dry = dry_client();
  static uint32_t mirror[WORDS], src[WORDS], got[WORDS];
  for (int i = 0; i < WORDS; ++i) mirror[i] = 0xC0000000u + (uint32_t)i;
  cubert_handle *h = cts_buffer(mirror, sizeof mirror);
  for (size_t v = 0; v < sizeof views / sizeof views[0]; ++v) {
    cubert_copy_desc desc = views[v];
    desc.handle = h;
    size_t n = 1;
    for (uint32_t d = 0; d < desc.rank; ++d) n *= desc.shape[d];
    for (int round = 0; round < 3; ++round) {
      for (size_t k = 0; k < n; ++k) src[k] = (uint32_t)((v + 1) * 100000 + round * 1000 + k);
      ASSERT_OK(cubert_client_write_tensor(round ? dry : cts_client, &desc, src, n * 4));
      mirror_write(mirror, &desc, src);
      cts_read(h, got, sizeof got);
      for (int i = 0; i < WORDS; ++i)
        cr_assert_eq(got[i], mirror[i], "view %zu, %s write %d: word %d is %u, expected %u", v,
                     round ? "dry-run" : "real", round, i, got[i], mirror[i]);
    }
  }
  cubert_handle_release(h);
  cubert_client_release(dry);
}

/* to_client between two device instances copies in dry run as outside it: its reads of the
   source are part of the copy, not reads of the caller's (issue 35's audit; they gave zeros
   where the copy reads through the host). */
Test(dry_run, to_client_between_instances_copies) {
  cubert_client *dry = dry_client();
  cubert_client *other = NULL;
  ASSERT_OK(cubert_client_create(cts_private_device(), &other));
  ASSERT_OK(cubert_client_set_dry_run(other, 1));
  uint32_t v[N], got[N];
  for (int i = 0; i < N; ++i) v[i] = 5000u + (uint32_t)i * 7u;
  cubert_handle *src = NULL, *copy = NULL;
  ASSERT_OK(cubert_client_create_buffer(dry, v, sizeof v, &src));
  ASSERT_OK(cubert_client_to_client(dry, src, other, &copy));
  ASSERT_OK(cubert_client_set_dry_run(other, 0));
  ASSERT_OK(cubert_client_read(other, copy, got, sizeof got));
  for (int i = 0; i < N; ++i) cr_assert_eq(got[i], v[i], "element %d is %u", i, got[i]);
  cubert_handle_release(copy);
  cubert_handle_release(src);
  cubert_client_release(other);
  cubert_client_release(dry);
}
