/* Helpers of the MPI test programs (plain C: Criterion cannot host MPI ranks). Each program is
   run by ctest under mpiexec (cmake/CubertMPI.cmake) and takes the device selector as argv[1]. */
#ifndef CUBERT_TEST_MPI_COMMON_H
#define CUBERT_TEST_MPI_COMMON_H

#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cubert/comm.h"
#include "cubert/cubert.h"
#include "cubert/mpi.h"

static int t_rank, t_size, t_failures;
static const char *t_device = "cpu";

static void t_fail(const char *file, int line, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char text[1024];
  vsnprintf(text, sizeof text, fmt, ap);
  va_end(ap);
  fprintf(stderr, "rank %d/%d on %s: FAIL %s:%d: %s\n", t_rank, t_size, t_device, file, line, text);
  ++t_failures;
}
#define T_CHECK(cond, ...)                                \
  do {                                                    \
    if (!(cond)) t_fail(__FILE__, __LINE__, __VA_ARGS__); \
  } while (0)
/* A call that must succeed. */
#define T_OK(call)                                                                      \
  do {                                                                                  \
    cubert_status t_s_ = (call);                                                        \
    if (t_s_) t_fail(__FILE__, __LINE__, "%s: %s", #call, cubert_status_message(t_s_)); \
    cubert_status_free(t_s_);                                                           \
  } while (0)
/* A call that must fail with `code` and a message containing `text`. */
#define T_ERR(call, code, text)                                                                 \
  do {                                                                                          \
    cubert_status t_s_ = (call);                                                                \
    if (!t_s_)                                                                                  \
      t_fail(__FILE__, __LINE__, "%s succeeded, expected %s", #call, cubert_code_name(code));   \
    else if (!cubert_status_has_code(t_s_, code) || !strstr(cubert_status_message(t_s_), text)) \
      t_fail(__FILE__, __LINE__, "%s: expected %s with \"%s\", got %s: %s", #call,              \
             cubert_code_name(code), text, cubert_code_name(cubert_status_code(t_s_)),          \
             cubert_status_message(t_s_));                                                      \
    cubert_status_free(t_s_);                                                                   \
  } while (0)

/* MPI_Init_thread with MPI_THREAD_MULTIPLE, the rank and size, argv[1] as the device, and a
   client on it. Exits 77 on every rank (skipped) when a rank cannot open the device. */
static cubert_client *t_init(int *argc, char ***argv) {
  int provided = 0;
  MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &t_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &t_size);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  if (*argc > 1) t_device = (*argv)[1];
  cubert_client *client = NULL;
  cubert_status s = cubert_client_create(t_device, &client);
  int ok = s == NULL, all_ok = 0;
  MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (!all_ok) {
    if (t_rank == 0 || s)
      printf("rank %d: device \"%s\" unavailable: %s (skipped)\n", t_rank, t_device,
             s ? cubert_status_message(s) : "on another rank");
    cubert_status_free(s);
    cubert_client_release(client);
    MPI_Finalize();
    exit(77);
  }
  return client;
}

/* Sums the failures of every rank; prints the verdict on rank 0; finalizes; the exit status. */
static int t_finish(const char *program) {
  int total = 0;
  MPI_Allreduce(&t_failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (t_rank == 0) {
    if (total)
      printf("%s: %d ranks on \"%s\": %d FAILED checks\n", program, t_size, t_device, total);
    else
      printf("%s: %d ranks on \"%s\": all checks passed\n", program, t_size, t_device);
  }
  MPI_Finalize();
  return total ? 1 : 0;
}

#endif /* CUBERT_TEST_MPI_COMMON_H */
