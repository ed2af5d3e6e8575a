/* cubert — a thread team (base/thread_team.h): a few threads kept for one owner, which runs a
   function on all of them at once and waits. The OpenCL server's staging copies (each chunk's
   memcpy split over the team) and the communicators' host reductions (each member thread's part of
   a chunk split over its team) use one; the owner's own thread is member 0, so a team of one has no
   threads and runs the function inline. */
#include "base/thread_team.h"

#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>

struct cubert_thread_team {
  pthread_mutex_t mu;
  pthread_cond_t work, done;
  pthread_t *threads;
  size_t size;    /* members, the owner included */
  size_t started; /* threads running (size - 1 unless a pthread_create failed) */
  size_t next_index;
  uint64_t generation;
  size_t remaining;
  int stop;
  void (*fn)(void *arg, size_t index, size_t count);
  void *arg;
};

static void *team_main(void *p) {
  cubert_thread_team *t = p;
  pthread_mutex_lock(&t->mu);
  size_t index = ++t->next_index; /* 1..started */
  /* A job posted before this thread first ran must still be seen: start from generation 0. */
  uint64_t seen = 0;
  for (;;) {
    while (!t->stop && t->generation == seen) pthread_cond_wait(&t->work, &t->mu);
    if (t->stop) break;
    seen = t->generation;
    void (*fn)(void *, size_t, size_t) = t->fn;
    void *arg = t->arg;
    size_t count = t->started + 1;
    pthread_mutex_unlock(&t->mu);
    fn(arg, index, count);
    pthread_mutex_lock(&t->mu);
    if (--t->remaining == 0) pthread_cond_signal(&t->done);
  }
  pthread_mutex_unlock(&t->mu);
  return NULL;
}

size_t cubert_thread_team_cpus(void) {
  cpu_set_t set;
  int cpus = sched_getaffinity(0, sizeof(set), &set) == 0 ? CPU_COUNT(&set) : 1;
  return cpus > 0 ? (size_t)cpus : 1;
}

cubert_thread_team *cubert_thread_team_create(size_t size) {
  cubert_thread_team *t = calloc(1, sizeof *t);
  if (!t) return NULL;
  if (size > 1 && !(t->threads = calloc(size - 1, sizeof *t->threads))) {
    free(t);
    return NULL;
  }
  pthread_mutex_init(&t->mu, NULL);
  pthread_cond_init(&t->work, NULL);
  pthread_cond_init(&t->done, NULL);
  t->size = size ? size : 1;
  /* A thread that cannot start only makes the team smaller. */
  for (size_t i = 0; i + 1 < t->size; ++i) {
    if (pthread_create(&t->threads[i], NULL, team_main, t) != 0) break;
    t->started++;
  }
  return t;
}

size_t cubert_thread_team_size(const cubert_thread_team *t) {
  return t ? t->started + 1 : 1;
}

void cubert_thread_team_run(cubert_thread_team *t,
                            void (*fn)(void *arg, size_t index, size_t count), void *arg) {
  if (!t || t->started == 0) {
    fn(arg, 0, 1);
    return;
  }
  pthread_mutex_lock(&t->mu);
  t->fn = fn;
  t->arg = arg;
  t->remaining = t->started;
  t->generation++;
  pthread_cond_broadcast(&t->work);
  pthread_mutex_unlock(&t->mu);
  fn(arg, 0, t->started + 1);
  pthread_mutex_lock(&t->mu);
  while (t->remaining) pthread_cond_wait(&t->done, &t->mu);
  pthread_mutex_unlock(&t->mu);
}

void cubert_thread_team_destroy(cubert_thread_team *t) {
  if (!t) return;
  pthread_mutex_lock(&t->mu);
  t->stop = 1;
  pthread_cond_broadcast(&t->work);
  pthread_mutex_unlock(&t->mu);
  for (size_t i = 0; i < t->started; ++i) pthread_join(t->threads[i], NULL);
  pthread_mutex_destroy(&t->mu);
  pthread_cond_destroy(&t->work);
  pthread_cond_destroy(&t->done);
  free(t->threads);
  free(t);
}
