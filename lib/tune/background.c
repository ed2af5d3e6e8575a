/* cubert — autotune's background worker (background.h).

   One mutex guards the queue and the worker's state; `work` wakes the worker, `idle` wakes
   waiters (cubert_tune_background_wait) and a second stopper. Jobs run without the lock: a job
   launches, syncs and writes the disk cache, and a caller pushing a job must never wait for
   that. Why one thread and not one per job: the measurements share the device and its compiler
   with the callers; one at a time keeps the samples of a job from timing another job's work. */
#include "tune/background.h"

#include <pthread.h>
#include <stdlib.h>
#ifdef __linux__
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

#include "client.h"

typedef struct job_node {
  struct job_node *next;
  void *job;
  cubert_tune_job_run_fn run;
  cubert_tune_job_drop_fn drop;
} job_node;

struct cubert_tune_background {
  pthread_mutex_t lock; /* everything below */
  pthread_cond_t work;  /* a job was queued, or cancel was set */
  pthread_cond_t idle;  /* a job ended, or the worker stopped */
  job_node *head, *tail;
  int running;  /* the thread exists (started, not yet joined) */
  int stopping; /* a stop is joining the thread */
  int busy;     /* the worker runs a job */
  atomic_int cancel;
  pthread_t thread;
  cubert_client *view; /* the worker's client, held while running */
};

static _Thread_local int on_worker;

int cubert_tune_background_on_worker(void) {
  return on_worker;
}

cubert_tune_background *cubert_tune_background_create(void) {
  cubert_tune_background *bg = calloc(1, sizeof(*bg));
  if (!bg) return NULL;
  pthread_mutex_init(&bg->lock, NULL);
  pthread_cond_init(&bg->work, NULL);
  pthread_cond_init(&bg->idle, NULL);
  atomic_init(&bg->cancel, 0);
  return bg;
}

void cubert_tune_background_destroy(cubert_tune_background *bg) {
  if (!bg) return;
  cubert_tune_background_stop(bg);
  pthread_cond_destroy(&bg->idle);
  pthread_cond_destroy(&bg->work);
  pthread_mutex_destroy(&bg->lock);
  free(bg);
}

/* The worker's scheduling weight: nice 10, about a tenth of a nice-0 thread's, so on a machine
   whose cores are all busy the caller's own work (its compiles and kernels on PoCL) runs first
   and the measurements take what is left; on idle cores it changes nothing. Linux applies
   setpriority to the calling thread alone; elsewhere it is a no-op or fails, which is harmless
   (the worker then runs at the caller's priority). */
static void lower_priority(void) {
#ifdef __linux__
  (void)setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), 10);
#endif
}

static void *worker_main(void *arg) {
  cubert_tune_background *bg = arg;
  on_worker = 1;
  lower_priority();
  pthread_mutex_lock(&bg->lock);
  for (;;) {
    while (!bg->head && !atomic_load(&bg->cancel)) pthread_cond_wait(&bg->work, &bg->lock);
    if (atomic_load(&bg->cancel)) break;
    job_node *n = bg->head;
    bg->head = n->next;
    if (!bg->head) bg->tail = NULL;
    bg->busy = 1;
    pthread_mutex_unlock(&bg->lock);
    n->run(n->job, bg->view, &bg->cancel);
    free(n);
    pthread_mutex_lock(&bg->lock);
    bg->busy = 0;
    pthread_cond_broadcast(&bg->idle);
  }
  pthread_mutex_unlock(&bg->lock);
  return NULL;
}

/* Starts the thread with a view of `client`; lock held. */
static cubert_status start(cubert_tune_background *bg, cubert_client *client) {
  CUBERT_RETURN_IF_ERROR(cubert_client_worker_view(client, &bg->view));
  atomic_store(&bg->cancel, 0);
  if (pthread_create(&bg->thread, NULL, worker_main, bg) != 0) {
    cubert_client_release(bg->view);
    bg->view = NULL;
    return cubert_status_make(CUBERT_CODE_UNAVAILABLE,
                              "the autotune background thread could not be created (thread "
                              "limit reached); tune synchronously with "
                              "CUBERT_AUTOTUNE_BACKGROUND=off");
  }
  bg->running = 1;
  return NULL;
}

cubert_status cubert_tune_background_push(cubert_tune_background *bg, cubert_client *client,
                                          void *job, cubert_tune_job_run_fn run,
                                          cubert_tune_job_drop_fn drop) {
  job_node *n = malloc(sizeof(*n));
  if (!n) return cubert_status_make(CUBERT_CODE_OUT_OF_MEMORY, "host allocation failed");
  *n = (job_node){NULL, job, run, drop};
  pthread_mutex_lock(&bg->lock);
  cubert_status s = NULL;
  if (bg->stopping)
    s = cubert_status_make(CUBERT_CODE_UNAVAILABLE,
                           "the device's last client is being released; nothing is tuned in the "
                           "background meanwhile");
  else if (!bg->running)
    s = start(bg, client);
  if (!s) {
    if (bg->tail)
      bg->tail->next = n;
    else
      bg->head = n;
    bg->tail = n;
    pthread_cond_signal(&bg->work);
  }
  pthread_mutex_unlock(&bg->lock);
  if (s) free(n);
  return s;
}

void cubert_tune_background_wait(cubert_tune_background *bg) {
  if (!bg || on_worker) return;
  pthread_mutex_lock(&bg->lock);
  while (bg->running && (bg->head || bg->busy)) pthread_cond_wait(&bg->idle, &bg->lock);
  pthread_mutex_unlock(&bg->lock);
}

void cubert_tune_background_stop(cubert_tune_background *bg) {
  if (!bg) return;
  pthread_mutex_lock(&bg->lock);
  if (!bg->running || on_worker) {
    if (bg->running) atomic_store(&bg->cancel, 1);
    pthread_mutex_unlock(&bg->lock);
    return;
  }
  if (bg->stopping) { /* another thread joins: wait for it */
    while (bg->running) pthread_cond_wait(&bg->idle, &bg->lock);
    pthread_mutex_unlock(&bg->lock);
    return;
  }
  bg->stopping = 1;
  atomic_store(&bg->cancel, 1);
  pthread_cond_broadcast(&bg->work);
  pthread_mutex_unlock(&bg->lock);
  pthread_join(bg->thread, NULL);
  pthread_mutex_lock(&bg->lock);
  job_node *queued = bg->head;
  cubert_client *view = bg->view;
  bg->head = bg->tail = NULL;
  bg->view = NULL;
  bg->running = bg->stopping = 0;
  atomic_store(&bg->cancel, 0);
  pthread_cond_broadcast(&bg->idle);
  pthread_mutex_unlock(&bg->lock);
  while (queued) {
    job_node *next = queued->next;
    queued->drop(queued->job);
    free(queued);
    queued = next;
  }
  cubert_client_release(view);
}
