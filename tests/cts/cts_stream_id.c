/* Stream identity (cubert/stream.h): the calling thread's id (cubert_stream_id_current), the
   id a client sends the calling thread's work to (cubert_client_stream), and views pinned to an
   id (cubert_client_with_stream). */
#include <pthread.h>

#include "cts.h"

TestSuite(stream_id, .init = cts_setup, .fini = cts_teardown);

/* What a thread sees: its id twice, and the stream of cts_client and of a pinned view. */
typedef struct thread_ids {
  cubert_client *pinned;
  cubert_stream_id first, again, client, view;
} thread_ids;

static void *read_ids(void *arg) {
  thread_ids *ids = arg;
  ids->first = cubert_stream_id_current();
  ids->again = cubert_stream_id_current();
  ids->client = cubert_client_stream(cts_client);
  ids->view = cubert_client_stream(ids->pinned);
  return NULL;
}

/* 64 units of `c` fill `h` with `value` on c's stream. */
static void fill(cubert_client *c, cubert_handle *h, uint32_t value) {
  uint64_t info[2] = {64, value};
  cubert_kernel_args args = {&h, 1, info, 2};
  ASSERT_OK(cubert_client_launch(c, &cubert_kernel_fill_u32, cubert_cube_count_new_3d(4, 1, 1),
                                 cubert_cube_dim_new_3d(16, 1, 1), &args));
}

/* The main thread keeps one id whatever views it submits through; a pinned view sends work to
   its id from any thread; each new thread takes a new, later id of the process-wide counter. */
Test(stream_id, a_thread_keeps_its_id_and_each_new_thread_gets_a_new_one) {
  const cubert_stream_id main_id = cubert_stream_id_current();
  cr_assert_eq(cubert_stream_id_current(), main_id, "the same id on a second call");
  cr_assert_eq(cubert_client_stream(cts_client), main_id, "an unpinned client: the thread's id");
  /* Switching to a pinned view changes where the view's work goes, not the thread's id. */
  const cubert_stream_id pinned_id = main_id + 1000;
  cubert_client *pinned = NULL;
  ASSERT_OK(cubert_client_with_stream(cts_client, pinned_id, &pinned));
  cr_assert_eq(cubert_client_stream(pinned), pinned_id);
  cubert_handle *h = NULL;
  ASSERT_OK(cubert_client_empty(pinned, 64 * 4, &h));
  fill(pinned, h, 3);
  ASSERT_OK(cubert_client_sync(pinned));
  cr_assert_eq(cubert_stream_id_current(), main_id, "submitting through a pinned view");
  cr_assert_eq(cubert_client_stream(cts_client), main_id);
  fill(cts_client, h, 4); /* ordered after the pinned stream's fill (cross-stream order) */
  uint32_t back[64];
  cts_read(h, back, sizeof back);
  for (int i = 0; i < 64; ++i) cr_assert_eq(back[i], 4u, "element %d", i);
  /* New threads: each a new id, later than main's, the same on every call of that thread; the
     pinned view keeps its id there too. */
  thread_ids ids[2] = {{.pinned = pinned}, {.pinned = pinned}};
  for (int t = 0; t < 2; ++t) {
    pthread_t thread;
    cr_assert_eq(pthread_create(&thread, NULL, read_ids, &ids[t]), 0);
    pthread_join(thread, NULL);
    cr_assert_gt(ids[t].first, main_id, "thread %d: ids come from one counter", t);
    cr_assert_eq(ids[t].again, ids[t].first, "thread %d keeps its id", t);
    cr_assert_eq(ids[t].client, ids[t].first, "thread %d: cts_client's stream is its own", t);
    cr_assert_eq(ids[t].view, pinned_id, "thread %d: the pinned view's id", t);
  }
  cr_assert_gt(ids[1].first, ids[0].first, "the second thread has an id of its own");
  cr_assert_eq(cubert_stream_id_current(), main_id, "the main thread's id after the threads");
  cubert_handle_release(h);
  cubert_client_release(pinned);
  cr_assert_eq(cubert_client_stream(pinned), 0, "a released view has no stream (0)");
}
