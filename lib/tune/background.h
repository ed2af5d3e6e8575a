/* cubert — autotune's background worker (background.c): one thread per device that measures
   the keys whose first call ran a provisional candidate (tuner.c), off the callers' streams.

   The worker runs jobs one at a time, in the order they were pushed, on a client view of its own
   (an unpinned view, so its thread's own stream; not counted among the device's user clients).
   The view holds a device reference for as long as the worker lives; the worker is started by
   the first push and stopped when the device's last user client is released
   (cubert_tune_background_stop, called by client.c), so that no measurement outlives the
   clients and a later process exit never races a compile. A stopped worker starts again at the
   next push. */
#ifndef CUBERT_TUNE_BACKGROUND_H
#define CUBERT_TUNE_BACKGROUND_H

#include <stdatomic.h>

#include "cubert/client.h"

typedef struct cubert_tune_background cubert_tune_background;

/* Runs one job on the worker's `client`; `cancel` becomes nonzero when the worker is stopped
   (the job should then give up at its next step). Owns `job`: frees it before returning. */
typedef void (*cubert_tune_job_run_fn)(void *job, cubert_client *client, const atomic_int *cancel);
/* Disposes of a job that will never run (the worker was stopped before it): owns `job`. */
typedef void (*cubert_tune_job_drop_fn)(void *job);

/* A stopped worker with an empty queue; NULL when out of memory. */
cubert_tune_background *cubert_tune_background_create(void);
/* Stops the worker (as cubert_tune_background_stop) and frees everything. NULL is a no-op. */
void cubert_tune_background_destroy(cubert_tune_background *bg);

/* Queues `job` (run later by `run`, or given to `drop`), starting the worker with a view of
   `client` when it is not running. On error the job is not queued (the caller still owns it):
   OUT_OF_MEMORY, the view's or the thread's creation failure, or UNAVAILABLE while the worker is
   being stopped. Thread-safe. */
cubert_status cubert_tune_background_push(cubert_tune_background *bg, cubert_client *client,
                                          void *job, cubert_tune_job_run_fn run,
                                          cubert_tune_job_drop_fn drop);
/* Blocks until the queue is empty and no job runs (or the worker stopped). Thread-safe; must not
   be called from the worker itself (a job waiting for itself): returns at once there. */
void cubert_tune_background_wait(cubert_tune_background *bg);
/* Cancels the running job, drops the queued ones, joins the worker and releases its view. Returns
   once the thread has ended: within one step of the running job (a candidate's warm-up or
   sample). A no-op when the worker is not running; from the worker itself, only cancels. */
void cubert_tune_background_stop(cubert_tune_background *bg);
/* Whether the calling thread is a background worker (its tunings run synchronously there). */
int cubert_tune_background_on_worker(void);

#endif /* CUBERT_TUNE_BACKGROUND_H */
