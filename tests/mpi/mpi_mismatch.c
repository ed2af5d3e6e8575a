/* Ranks that disagree (issue 22, item 3): every rank must fail with an error naming the
   mismatch, soon (well inside CUBERT_MPI_TIMEOUT_MS, which the test sets to 60 s), and no
   receive may write past its buffer.
     mpiexec -n <ranks> mpi_mismatch <device> <case>
   cases:
     short_recv  rank 2k sends 100,000 floats to rank 2k+1, which receives 50,000 into a view
                 at the start of a larger handle: the floats after the view keep their values
                 (Open MPI 4.1.4 wrote past a short receive buffer);
     count       all_reduce of 4,096 floats, 2,050 on the last rank, each into a view of a
                 larger handle: the rest of the handle keeps its values;
     dtype       all_reduce f32, i32 on the last rank;
     op          all_reduce SUM, MAX on the last rank;
     kind        all_reduce, all_gather on the last rank;
     skip        the last rank skips the first of two all_reduces (4,096 then 1,024 floats):
                 its second call meets the others' first one. (A skipped call exactly like
                 the next one cannot be told from the next one skipped: then the ranks that
                 make the last call fail by CUBERT_MPI_TIMEOUT_MS, tested by mpi_fail.)
   Each rank prints its error; the program exits 0 when every check held. */
#include "mpi_common.h"

#define GUARD 4096 /* floats after the receive view */
#define SENTINEL 12345.0f

static int failing_rank(void) {
  return t_size - 1;
}

/* A handle of n + GUARD floats: the first n = `value`, the guard SENTINEL; *view = the first
   n floats. */
static cubert_handle *guarded(cubert_client *c, size_t n, float value, cubert_handle **view) {
  float *host = malloc((n + GUARD) * sizeof(float));
  for (size_t i = 0; i < n + GUARD; ++i) host[i] = i < n ? value : SENTINEL;
  cubert_handle *h = NULL;
  T_OK(cubert_client_create_buffer(c, host, (n + GUARD) * sizeof(float), &h));
  free(host);
  T_OK(cubert_handle_view(h, 0, n * sizeof(float), view));
  return h;
}

/* The guard after the first n floats of h still holds SENTINEL. */
static void check_guard(cubert_client *c, cubert_handle *h, size_t n) {
  float *host = calloc(n + GUARD, sizeof(float));
  cubert_status s = cubert_client_read(c, h, host, (n + GUARD) * sizeof(float));
  if (s) {
    /* the stream's error came back first: read again */
    cubert_status_free(s);
    s = cubert_client_read(c, h, host, (n + GUARD) * sizeof(float));
  }
  T_CHECK(!s, "read of the guarded handle failed: %s", s ? cubert_status_message(s) : "");
  cubert_status_free(s);
  size_t bad = 0, first = 0;
  for (size_t i = n; i < n + GUARD; ++i)
    if (host[i] != SENTINEL && bad++ == 0) first = i;
  T_CHECK(bad == 0, "%zu floats past the %zu-float receive were overwritten (first at %zu: %g)",
          bad, n, first, bad ? (double)host[first] : 0.0);
  free(host);
}

/* The stream's error after the call: present, and its message contains `text`. */
static void expect_error(cubert_client *c, cubert_status s, const char *text, double t0) {
  if (!s) s = cubert_client_sync(c);
  double secs = MPI_Wtime() - t0;
  const char *msg = s ? cubert_status_message(s) : "";
  if (s) printf("rank %d: error after %.1f s, as expected: %s\n", t_rank, secs, msg);
  T_CHECK(s != NULL, "the mismatched call succeeded");
  T_CHECK(!s || strstr(msg, text), "the error does not say \"%s\": %s", text, msg);
  /* detected from the headers, not by the 60 s timeout */
  T_CHECK(secs < 30.0, "the error took %.1f s", secs);
  T_CHECK(!s || !strstr(msg, "CUBERT_MPI_TIMEOUT_MS"), "a timeout instead of a mismatch: %s", msg);
  cubert_status_free(s);
}

static void short_recv(cubert_client *c, cubert_comm *comm) {
  const size_t sent = 100000, room = 50000;
  int peer = t_rank ^ 1;
  if (peer >= t_size) return; /* an odd rank count: the last rank has no partner */
  double t0 = MPI_Wtime();
  if (t_rank % 2 == 0) {
    cubert_handle *view = NULL, *h = guarded(c, sent, 1.0f, &view);
    expect_error(c, cubert_comm_send(comm, view, sent, CUBERT_DTYPE_F32, (size_t)peer, 7),
                 "send and recv must agree", t0);
    cubert_handle_release(view);
    cubert_handle_release(h);
  } else {
    cubert_handle *view = NULL, *h = guarded(c, room, 0.0f, &view);
    expect_error(c, cubert_comm_recv(comm, view, room, CUBERT_DTYPE_F32, (size_t)peer, 7),
                 "send and recv must agree", t0);
    check_guard(c, h, room);
    cubert_handle_release(view);
    cubert_handle_release(h);
  }
}

static void all_reduce_case(cubert_client *c, cubert_comm *comm, const char *which) {
  int odd = t_rank == failing_rank();
  size_t n = strcmp(which, "count") == 0 && odd ? 2050 : 4096;
  /* all_gather writes size pieces of n; the others write n (2,050 floats: 8,200 bytes) */
  int gather = strcmp(which, "kind") == 0 && odd;
  size_t room = gather ? n * (size_t)t_size : n;
  cubert_handle *view = NULL, *h = guarded(c, room, 1.0f, &view);
  cubert_dtype dtype = strcmp(which, "dtype") == 0 && odd ? CUBERT_DTYPE_I32 : CUBERT_DTYPE_F32;
  cubert_reduce_op op = strcmp(which, "op") == 0 && odd ? CUBERT_REDUCE_MAX : CUBERT_REDUCE_SUM;
  double t0 = MPI_Wtime();
  cubert_status s = NULL;
  if (gather) {
    cubert_handle *src = NULL, *unused = guarded(c, n, 2.0f, &src);
    s = cubert_comm_all_gather(comm, &src, &view, n, dtype);
    cubert_handle_release(src);
    cubert_handle_release(unused);
  } else if (strcmp(which, "skip") == 0) {
    /* calls 0 (4,096 floats) and 1 (1,024): the last rank's call 1 meets the others' call 0 */
    if (!odd) s = cubert_comm_all_reduce(comm, &view, &view, n, dtype, op);
    if (!s) s = cubert_comm_all_reduce(comm, &view, &view, 1024, dtype, op);
  } else {
    s = cubert_comm_all_reduce(comm, &view, &view, n, dtype, op);
  }
  expect_error(c, s, "mismatched collective calls", t0);
  check_guard(c, h, room);
  cubert_handle_release(view);
  cubert_handle_release(h);
}

int main(int argc, char **argv) {
  cubert_client *c = t_init(&argc, &argv);
  const char *which = argc > 2 ? argv[2] : "count";
  cubert_comm *comm = NULL;
  T_OK(cubert_comm_create_mpi(MPI_COMM_WORLD, c, &comm));
  if (strcmp(which, "short_recv") == 0)
    short_recv(c, comm);
  else
    all_reduce_case(c, comm, which);
  cubert_comm_release(comm);
  cubert_client_release(c);
  return t_finish("mpi_mismatch");
}
