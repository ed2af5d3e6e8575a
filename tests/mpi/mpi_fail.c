/* A deliberately failing rank: the others must get an error, not hang.
     mpiexec -n <ranks> mpi_fail <device> skip   (CUBERT_MPI_TIMEOUT_MS small, e.g. 3000)
       the last rank fails its part: it makes no collective call (as a rank whose own work
       returned an error) and waits at a barrier of MPI_COMM_WORLD. Every other rank's
       all_reduce must fail, on its stream, within the timeout, naming a peer rank (at least
       one survivor, a direct partner of the failing rank, names it); they print the error and
       all exit 0 when every check held.
     mpiexec -n <ranks> mpi_fail <device> exit
       the last rank exits (status 3) without MPI_Finalize while the others are in an
       all_reduce: the launcher ends the job with a non-zero status instead of hanging (ctest
       expects the failure). */
#include <unistd.h>

#include "mpi_common.h"

int main(int argc, char **argv) {
  cubert_client *c = t_init(&argc, &argv);
  const char *mode = argc > 2 ? argv[2] : "skip";
  int failing = t_rank == t_size - 1, named_failing = 0;
  cubert_comm *comm = NULL;
  T_OK(cubert_comm_create_mpi(MPI_COMM_WORLD, c, &comm));
  size_t n = 4099;
  cubert_handle *h = NULL;
  T_OK(cubert_client_empty(c, n * 4, &h));
  if (failing) {
    if (strcmp(mode, "exit") == 0) {
      fprintf(stderr, "rank %d: exiting early on purpose (status 3, no MPI_Finalize)\n", t_rank);
      _exit(3);
    }
    fprintf(stderr, "rank %d: failing on purpose: skipping the all_reduce\n", t_rank);
  } else {
    double t0 = MPI_Wtime();
    /* the call queues the work; the error comes from the stream's next sync */
    cubert_status s = cubert_comm_all_reduce(comm, &h, &h, n, CUBERT_DTYPE_F32, CUBERT_REDUCE_SUM);
    if (!s) s = cubert_client_sync(c);
    double secs = MPI_Wtime() - t0;
    const char *msg = s ? cubert_status_message(s) : "";
    if (s) printf("rank %d: error after %.1f s, as expected: %s\n", t_rank, secs, msg);
    T_CHECK(s != NULL, "the all_reduce succeeded without the failing rank");
    T_CHECK(!s || (strstr(msg, " did not ") && strstr(msg, "CUBERT_MPI_TIMEOUT_MS")),
            "unexpected error: %s", msg);
    char peer[32];
    snprintf(peer, sizeof peer, "rank %d did not", t_size - 1);
    named_failing = s && strstr(msg, peer);
    cubert_status_free(s);
  }
  /* a survivor that waited on the failing rank directly names it (the others name the peer
     they waited for, itself stuck) */
  int any = 0;
  MPI_Allreduce(&named_failing, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (strcmp(mode, "skip") == 0 && t_rank == 0)
    T_CHECK(any, "no survivor named rank %d", t_size - 1);
  cubert_handle_release(h);
  cubert_comm_release(comm);
  cubert_client_release(c);
  return t_finish("mpi_fail");
}
