/* Client-level behaviour: exclusive access, profiling, tensors, memory usage across threads,
   streams. */
#include <pthread.h>
#include <unistd.h>

#include "cts.h"

TestSuite(client, .init = cts_setup, .fini = cts_teardown);

static cubert_status nested(cubert_client *c, void *user) {
  int *depth = user;
  if (++*depth < 3) return cubert_client_exclusive(c, nested, user);
  uint32_t v = 11, back = 0;
  cubert_handle *h = NULL;
  CUBERT_RETURN_IF_ERROR(cubert_client_create_buffer(c, &v, 4, &h));
  cubert_status s = cubert_client_read(c, h, &back, 4);
  cubert_handle_release(h);
  if (!s && back != 11) s = cubert_status_make(CUBERT_CODE_GENERIC, "read back %u", back);
  return s;
}

Test(client, exclusive_is_reentrant) {
  int depth = 0;
  ASSERT_OK(cubert_client_exclusive(cts_client, nested, &depth));
  cr_assert_eq(depth, 3);
}

static cubert_status fill_kernel(cubert_client *c, void *user) {
  cubert_handle *h = user;
  uint64_t info[2] = {1u << 16, 1};
  cubert_kernel_args args = {&h, 1, info, 2};
  return cubert_client_launch(c, &cubert_kernel_fill_u32, cubert_cube_count_new_3d(256, 1, 1),
                              cubert_cube_dim_new_3d(256, 1, 1), &args);
}

static cubert_status failing(cubert_client *c, void *user) {
  return cubert_client_read(c, user, NULL, 1u << 30);
}

Test(client, profile_measures_and_reports_errors) {
  cubert_handle *h = NULL;
  ASSERT_OK(cubert_client_empty(cts_client, 4u << 16, &h));
  cubert_profile_duration d = {0};
  ASSERT_OK(cubert_client_profile(cts_client, fill_kernel, h, &d));
  cr_assert_gt(d.duration_ns, 0);
  cr_assert_eq(d.method, cubert_client_properties(cts_client)->timing_method);
  cubert_status s = cubert_client_profile(cts_client, failing, h, &d);
  cr_assert_eq(cubert_status_code(s), CUBERT_CODE_PROFILE_FAILED, "%s", cubert_status_message(s));
  cr_assert_eq(cubert_status_kind(s), CUBERT_KIND_PROFILE);
  cr_assert_eq(cubert_status_code(cubert_status_cause(s)), CUBERT_CODE_INVALID_ARGUMENT);
  cubert_status_free(s);
  /* tokens nest and overlap; an unknown token is NOT_REGISTERED */
  cubert_profile_token a, b;
  ASSERT_OK(cubert_client_profile_start(cts_client, &a));
  ASSERT_OK(cubert_client_profile_start(cts_client, &b));
  ASSERT_OK(fill_kernel(cts_client, h));
  ASSERT_OK(cubert_client_profile_end(cts_client, a, &d));
  ASSERT_OK(cubert_client_profile_end(cts_client, b, &d));
  ASSERT_CODE(cubert_client_profile_end(cts_client, a, &d), CUBERT_CODE_NOT_REGISTERED, NULL);
  cubert_handle_release(h);
}

Test(client, tensors_share_one_allocation_at_aligned_offsets) {
  const cubert_device_properties *p = cubert_client_properties(cts_client);
  cubert_layout_desc descs[2] = {
      {.strategy = CUBERT_LAYOUT_CONTIGUOUS, .rank = 2, .shape = {3, 5}, .elem_size = 4},
      {.strategy = CUBERT_LAYOUT_OPTIMIZED, .rank = 2, .shape = {7, 9}, .elem_size = 4},
  };
  float a[15], b[63];
  for (int i = 0; i < 15; ++i) a[i] = (float)i;
  for (int i = 0; i < 63; ++i) b[i] = 100.0f + i;
  const void *data[2] = {a, b};
  cubert_tensor t[2];
  cubert_memory_usage before, after;
  ASSERT_OK(cubert_client_memory_usage(cts_client, &before));
  ASSERT_OK(cubert_client_create_tensors(cts_client, data, descs, 2, t));
  ASSERT_OK(cubert_client_memory_usage(cts_client, &after));
  cr_assert_eq(after.number_allocs - before.number_allocs, 1, "one allocation for both tensors");
  cr_assert_eq(t[0].strides[0], 5);
  cr_assert_eq(t[0].strides[1], 1);
  cr_assert_geq(t[1].strides[0], 9);
  float back[63];
  cts_read(t[0].handle, back, sizeof a);
  cr_assert_arr_eq(back, a, sizeof a);
  cubert_copy_desc d = {.handle = t[1].handle, .rank = 2, .shape = {7, 9}, .elem_size = 4};
  d.strides[0] = t[1].strides[0];
  d.strides[1] = t[1].strides[1];
  ASSERT_OK(cubert_client_read_tensor(cts_client, &d, back, sizeof b));
  cr_assert_arr_eq(back, b, sizeof b);
  (void)p;
  cubert_tensor_release(&t[0]);
  cubert_tensor_release(&t[1]);
  cr_assert_null(t[0].handle);
}

/* cubert_client_retain: each retained reference keeps the client usable after its creator's
   release, until the last release; after that every call on it is NOT_FOUND and retain and
   release change nothing. */
Test(client, a_retained_client_outlives_its_creators_release) {
  cubert_client *c = NULL;
  ASSERT_OK(cubert_client_create(cts_private_device(), &c));
  cr_assert_null(cubert_client_retain(NULL), "retain accepts NULL and returns it");
  cr_assert_eq(cubert_client_retain(c), c, "retain returns its argument");
  cr_assert_eq(cubert_client_retain(c), c);
  cubert_client_release(c); /* the creator's reference: two retained ones are left */
  for (uint32_t round = 1; round <= 2; ++round) {
    cr_assert_not_null(cubert_client_properties(c), "round %u: the client was released", round);
    cubert_handle *h = NULL;
    ASSERT_OK(cubert_client_empty(c, 64 * 4, &h));
    uint64_t info[2] = {64, 100 + round};
    cubert_kernel_args args = {&h, 1, info, 2};
    ASSERT_OK(cubert_client_launch(c, &cubert_kernel_fill_u32, cubert_cube_count_new_3d(4, 1, 1),
                                   cubert_cube_dim_new_3d(16, 1, 1), &args));
    uint32_t back[64];
    ASSERT_OK(cubert_client_read(c, h, back, sizeof back));
    for (int i = 0; i < 64; ++i)
      cr_assert_eq(back[i], 100 + round, "round %u element %d", round, i);
    cubert_handle_release(h);
    cubert_client_release(c); /* round 2: the last reference */
  }
  cr_assert_null(cubert_client_properties(c), "the last release ended the client");
  cubert_handle *h = NULL;
  ASSERT_CODE(cubert_client_empty(c, 16, &h), CUBERT_CODE_NOT_FOUND, NULL);
  cr_assert_null(h);
  cr_assert_eq(cubert_client_retain(c), c, "retain of a released client returns it...");
  cr_assert_null(cubert_client_properties(c), "...and does not bring it back");
  cubert_client_release(c); /* a released client: no effect */
}

/* cubert_client_empty_tensors: one allocation holds every tensor, each laid out as
   cubert_layout_plan lays it out for the device (pitched on GPUs, contiguous elsewhere), at
   offsets that do not overlap; on error no tensor is left allocated. */
Test(client, empty_tensors_share_one_allocation_laid_out_by_the_plan) {
  const cubert_device_properties *p = cubert_client_properties(cts_client);
  const uint64_t alignment = p->memory.alignment ? p->memory.alignment : 1;
  const uint64_t pitch_align = p->type == CUBERT_DEVICE_TYPE_OPENCL_GPU ? alignment : 0;
  enum { COUNT = 4 };
  const cubert_layout_desc descs[COUNT] = {
      {.strategy = CUBERT_LAYOUT_CONTIGUOUS, .rank = 2, .shape = {3, 5}, .dtype = CUBERT_DTYPE_F32},
      {.strategy = CUBERT_LAYOUT_OPTIMIZED, .rank = 2, .shape = {7, 9}, .elem_size = 4},
      {.strategy = CUBERT_LAYOUT_CONTIGUOUS, .rank = 0, .dtype = CUBERT_DTYPE_I32},
      {.strategy = CUBERT_LAYOUT_CONTIGUOUS, .rank = 3, .shape = {2, 3, 4}, .elem_size = 2},
  };
  cubert_layout plan[COUNT];
  uint64_t total = 0;
  ASSERT_OK(cubert_layout_plan(descs, COUNT, pitch_align, alignment, plan, &total));
  cubert_memory_usage before, after;
  ASSERT_OK(cubert_client_memory_usage(cts_client, &before));
  cubert_tensor t[COUNT];
  memset(t, 0xA5, sizeof t);
  ASSERT_OK(cubert_client_empty_tensors(cts_client, descs, COUNT, t));
  ASSERT_OK(cubert_client_memory_usage(cts_client, &after));
  cr_assert_eq(after.number_allocs - before.number_allocs, 1, "one allocation for all four");
  cr_assert_eq(after.bytes_in_use - before.bytes_in_use, total, "the plan's total bytes");
  const uint64_t elem_sizes[COUNT] = {4, 4, 4, 2};
  const cubert_dtype dtypes[COUNT] = {CUBERT_DTYPE_F32, CUBERT_DTYPE_NONE, CUBERT_DTYPE_I32,
                                      CUBERT_DTYPE_NONE};
  for (int i = 0; i < COUNT; ++i) {
    cr_assert_not_null(t[i].handle, "tensor %d", i);
    cr_assert_eq(t[i].rank, descs[i].rank, "tensor %d", i);
    cr_assert_arr_eq(t[i].shape, descs[i].shape, sizeof t[i].shape, "tensor %d", i);
    cr_assert_arr_eq(t[i].strides, plan[i].strides, sizeof t[i].strides, "tensor %d", i);
    cr_assert_eq(t[i].elem_size, elem_sizes[i], "tensor %d", i);
    cr_assert_eq(t[i].dtype, dtypes[i], "tensor %d", i);
    cr_assert_eq(t[i].offset, 0, "tensor %d", i);
    cr_assert_eq(cubert_handle_size(t[i].handle), plan[i].size, "tensor %d", i);
    cr_assert_eq(cubert_handle_can_mut(t[i].handle), 0, "tensor %d shares its memory", i);
  }
  cr_assert_eq(t[0].strides[0], 5);
  cr_assert_eq(t[3].strides[0], 12);
  cr_assert_eq(t[3].strides[1], 4);
  /* Apart: a pattern written to each whole tensor reads back intact from every one. */
  uint8_t pattern[COUNT][4096];
  for (int i = 0; i < COUNT; ++i) {
    memset(pattern[i], 0x10 + i, sizeof pattern[i]);
    ASSERT_OK(cubert_client_write(cts_client, t[i].handle, 0, pattern[i], plan[i].size));
  }
  for (int i = 0; i < COUNT; ++i) {
    uint8_t back[4096];
    cts_read(t[i].handle, back, plan[i].size);
    cr_assert_arr_eq(back, pattern[i], plan[i].size, "tensor %d overlaps another", i);
  }
  for (int i = 0; i < COUNT; ++i) cubert_tensor_release(&t[i]);
  ASSERT_OK(cubert_client_memory_usage(cts_client, &after));
  cr_assert_eq(after.number_allocs, before.number_allocs, "the release freed the allocation");
  /* Errors leave nothing allocated and every tensor cleared. */
  cubert_layout_desc bad[2] = {descs[0], descs[1]};
  bad[1].rank = CUBERT_MAX_RANK + 1;
  ASSERT_CODE(cubert_client_empty_tensors(cts_client, bad, 2, t), CUBERT_CODE_INVALID_ARGUMENT,
              "descs[1].rank is 9, maximum is 8");
  bad[1] = (cubert_layout_desc){.rank = 2, .shape = {1ull << 40, 1ull << 20}, .elem_size = 4};
  ASSERT_CODE(cubert_client_empty_tensors(cts_client, bad, 2, t), CUBERT_CODE_BUFFER_TOO_BIG, NULL);
  ASSERT_CODE(cubert_client_empty_tensors(cts_client, descs, 0, t), CUBERT_CODE_INVALID_ARGUMENT,
              "count (0)");
  ASSERT_CODE(cubert_client_empty_tensors(cts_client, NULL, 1, t), CUBERT_CODE_INVALID_ARGUMENT,
              "descs");
  for (int i = 0; i < 2; ++i) cr_assert_null(t[i].handle, "tensor %d after an error", i);
  ASSERT_OK(cubert_client_memory_usage(cts_client, &after));
  cr_assert_eq(after.number_allocs, before.number_allocs);
  cr_assert_eq(after.bytes_in_use, before.bytes_in_use);
}

typedef struct {
  int index;
  cubert_handle *handles[8];
} alloc_job;

static void *alloc_thread(void *arg) {
  alloc_job *job = arg;
  for (int i = 0; i < 8; ++i) {
    cubert_status s =
        cubert_client_empty(cts_client, 4096 * (size_t)(job->index + 1), &job->handles[i]);
    if (s) {
      cubert_status_free(s);
      job->handles[i] = NULL;
    }
  }
  return NULL;
}

Test(client, memory_usage_counts_every_thread) {
  pthread_t threads[4];
  alloc_job jobs[4];
  for (int t = 0; t < 4; ++t) {
    jobs[t].index = t;
    pthread_create(&threads[t], NULL, alloc_thread, &jobs[t]);
  }
  for (int t = 0; t < 4; ++t) pthread_join(threads[t], NULL);
  cubert_memory_usage u;
  ASSERT_OK(cubert_client_memory_usage(cts_client, &u));
  cr_assert_eq(u.number_allocs, 32);
  cr_assert_eq(u.bytes_in_use, 8 * 4096 * (1 + 2 + 3 + 4));
  for (int t = 0; t < 4; ++t)
    for (int i = 0; i < 8; ++i) {
      cr_assert_not_null(jobs[t].handles[i]);
      cubert_handle_release(jobs[t].handles[i]);
    }
  ASSERT_OK(cubert_client_memory_cleanup(cts_client));
  ASSERT_OK(cubert_client_memory_usage(cts_client, &u));
  cr_assert_eq(u.bytes_in_use, 0);
  cr_assert_eq(u.bytes_reserved, 0);
}

/* Producer on one stream, consumer on another, no user synchronisation in between. */
Test(client, cross_stream_use_sees_complete_data) {
  cubert_client *producer = NULL, *consumer = NULL;
  ASSERT_OK(cubert_client_with_stream(cts_client, 1001, &producer));
  ASSERT_OK(cubert_client_with_stream(cts_client, 1002, &consumer));
  cr_assert_neq(cubert_client_stream(producer), cubert_client_stream(consumer));
  const uint64_t n = 1u << 20;
  for (int round = 0; round < 5; ++round) {
    cubert_handle *a = NULL, *b = NULL, *out = NULL;
    ASSERT_OK(cubert_client_empty(producer, n * 4, &a));
    ASSERT_OK(cubert_client_empty(producer, n * 4, &b));
    uint64_t fa[2] = {n, cubert_kernel_info_f32((float)round)},
             fb[2] = {n, cubert_kernel_info_f32(2.0f)};
    cubert_kernel_args aa = {&a, 1, fa, 2}, ab = {&b, 1, fb, 2};
    cubert_cube_count cc = cts_cubes(n, cts_dim());
    cubert_cube_dim cd = cubert_cube_dim_new_3d(cts_dim(), 1, 1);
    ASSERT_OK(cubert_client_launch(producer, &cubert_kernel_fill_u32, cc, cd, &aa));
    ASSERT_OK(cubert_client_launch(producer, &cubert_kernel_fill_u32, cc, cd, &ab));
    ASSERT_OK(cubert_client_empty(consumer, n * 4, &out));
    cubert_handle *bufs[3] = {a, b, out};
    uint64_t info[1] = {n};
    cubert_kernel_args args = {bufs, 3, info, 1};
    ASSERT_OK(cubert_client_launch(consumer, &cubert_kernel_mul_f32, cc, cd, &args));
    float *v = malloc(n * 4);
    ASSERT_OK(cubert_client_read(consumer, out, v, n * 4));
    for (uint64_t i = 0; i < n; ++i)
      cr_assert_eq(v[i], 2.0f * round, "round %d element %llu", round, (unsigned long long)i);
    free(v);
    cubert_handle_release(a);
    cubert_handle_release(b);
    cubert_handle_release(out);
  }
  cubert_client_release(producer);
  cubert_client_release(consumer);
}
