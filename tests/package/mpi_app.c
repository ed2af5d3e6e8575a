/* The package test's MPI program (built when the installed cubert has the MPI component):
   all_reduce of a small f32 buffer over the ranks of MPI_COMM_WORLD on the device argv[1].
   tests/package/run.sh runs it under mpiexec -n 2. */
#include <mpi.h>
#include <stdio.h>

#include "cubert/cubert.h"
#include "cubert/mpi.h"

#define CHECK(call)                                                  \
  do {                                                               \
    cubert_status s_ = (call);                                       \
    if (s_) {                                                        \
      fprintf(stderr, "%s: %s\n", #call, cubert_status_message(s_)); \
      cubert_status_free(s_);                                        \
      MPI_Abort(MPI_COMM_WORLD, 1);                                  \
    }                                                                \
  } while (0)

int main(int argc, char **argv) {
  int provided = 0, rank = 0, size = 1;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  cubert_client *client = NULL;
  CHECK(cubert_client_create(argc > 1 ? argv[1] : "cpu", &client));
  cubert_comm *comm = NULL;
  CHECK(cubert_comm_create_mpi(MPI_COMM_WORLD, client, &comm));
  float data[5] = {1, 2, 3, 4, (float)rank}, out[5];
  cubert_handle *h = NULL;
  CHECK(cubert_client_create_buffer(client, data, sizeof data, &h));
  CHECK(cubert_comm_all_reduce(comm, &h, &h, 5, CUBERT_DTYPE_F32, CUBERT_REDUCE_SUM));
  CHECK(cubert_client_read(client, h, out, sizeof out));
  int bad = 0;
  for (int i = 0; i < 4; ++i) bad |= out[i] != (float)((i + 1) * size);
  bad |= out[4] != (float)(size * (size - 1) / 2);
  if (rank == 0) printf("pkg_mpi: all_reduce over %d ranks: %s\n", size, bad ? "WRONG" : "ok");
  cubert_handle_release(h);
  cubert_comm_release(comm);
  cubert_client_release(client);
  MPI_Finalize();
  return bad;
}
