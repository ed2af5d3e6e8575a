/* cubert base — thread teams (thread_team.c). */
#ifndef CUBERT_BASE_THREAD_TEAM_H
#define CUBERT_BASE_THREAD_TEAM_H

#include <stddef.h>

#include "cubert/export.h"

CUBERT_EXTERN_C_BEGIN

/** Thread teams (thread_team.c): `size` members, the calling thread being member 0 and size - 1
   threads kept waiting for work. run calls fn(arg, index, count) once on every member at once
   (count = the team's size, index in [0, count)) and returns when all calls returned; one
   owner thread calls run at a time. A team whose threads could not all start is smaller
   (size reports it); NULL from create (no memory) still works in run and size, as a team of
   one. For work split across a few CPUs: the OpenCL server's staging copies, the
   communicators' host reductions. */
typedef struct cubert_thread_team cubert_thread_team;
/** A team of `size` members (the caller and size - 1 threads), or NULL without memory. */
cubert_thread_team *cubert_thread_team_create(size_t size);
/** Members the team has (1 for NULL). */
size_t cubert_thread_team_size(const cubert_thread_team *team);
/** Calls fn(arg, index, count) on every member at once; returns when all returned. */
void cubert_thread_team_run(cubert_thread_team *team,
                            void (*fn)(void *arg, size_t index, size_t count), void *arg);
/** Stops and joins the team's threads and frees it. Accepts NULL. */
void cubert_thread_team_destroy(cubert_thread_team *team);
/** CPUs this process may run on (sched_getaffinity), at least 1. */
size_t cubert_thread_team_cpus(void);

CUBERT_EXTERN_C_END

#endif /* CUBERT_BASE_THREAD_TEAM_H */
