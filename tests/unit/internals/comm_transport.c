/* A communicator over a transport that fails at one chunk (comm/transport.h, the engine's
   internal transport interface): the error surfaces at the next sync of every member. */
#include <stdlib.h>

#include "comm/engine.h"
#include "comm/inproc.h"
#include "comm/transport.h"
#include "cts.h"
#include "cubert/comm.h"

TestSuite(comm_transport, .init = cts_setup, .fini = cts_teardown, .timeout = 600);

/* ---- an error inside the queued work ----------------------------------------------------- */

/* The in-process transport, failing at chunk `fail_at` of every collective. */
typedef struct failing_transport {
  cubert_comm_transport base;
  cubert_comm_transport *inner;
  size_t fail_at;
} failing_transport;

static cubert_status failing_combine(cubert_comm_transport *t, const cubert_comm_chunk *c,
                                     size_t part, size_t parts) {
  failing_transport *f = (failing_transport *)t;
  if (c->index == f->fail_at && part == parts - 1)
    return cubert_status_make(CUBERT_CODE_EXECUTION, "injected transport failure at chunk %zu",
                              c->index);
  return f->inner->vtable->combine(f->inner, c, part, parts);
}

static void failing_destroy(cubert_comm_transport *t) {
  failing_transport *f = (failing_transport *)t;
  f->inner->vtable->destroy(f->inner);
  free(f);
}

static const cubert_comm_transport_vtable failing_vtable = {
    .name = "failing", .combine = failing_combine, .destroy = failing_destroy};

Test(comm_transport, queued_error_surfaces_at_next_sync) {
  setenv("CUBERT_COMM_CHUNK_BYTES", "4096", 1);
  /* A private CPU instance: on the device under test's own instance (cts_cpu), both members
     would be one stream of one device, whose queue reports the failure once, not per member. */
  cubert_client *cpu = NULL;
  ASSERT_OK(cubert_client_create("cpu!private", &cpu));
  cubert_client *clients[2] = {cpu, cts_client};
  failing_transport *f = calloc(1, sizeof *f);
  f->inner = cubert_comm_inproc_create(2);
  f->base = *f->inner;
  f->base.vtable = &failing_vtable;
  f->fail_at = 3;
  cubert_comm *comm = NULL;
  ASSERT_OK(cubert_comm_create_with_transport(clients, 2, &f->base, &comm));
  unsetenv("CUBERT_COMM_CHUNK_BYTES");
  size_t count = 100000;
  cubert_handle *src[2], *dst[2];
  for (size_t i = 0; i < 2; ++i) {
    ASSERT_OK(cubert_client_empty(clients[i], count * 4, &src[i]));
    ASSERT_OK(cubert_client_empty(clients[i], count * 4, &dst[i]));
  }
  ASSERT_OK(cubert_comm_all_reduce(comm, src, dst, count, CUBERT_DTYPE_F32, CUBERT_REDUCE_SUM));
  float got[16];
  /* the read behind the collective reports the failure, on every member, once */
  for (size_t i = 0; i < 2; ++i) {
    ASSERT_CODE(cubert_client_read(clients[i], dst[i], got, sizeof got),
                CUBERT_CODE_SERVER_UNHEALTHY, "injected transport failure at chunk 3");
    ASSERT_OK(cubert_client_sync(clients[i]));
  }
  /* a collective that ends before the failing chunk works; so do the clients and handles */
  ASSERT_OK(cubert_comm_all_reduce(comm, src, dst, 10, CUBERT_DTYPE_F32, CUBERT_REDUCE_SUM));
  for (size_t i = 0; i < 2; ++i) ASSERT_OK(cubert_client_sync(clients[i]));
  /* again, then a sync (not a read) sees it */
  ASSERT_OK(cubert_comm_all_reduce(comm, src, dst, count, CUBERT_DTYPE_F32, CUBERT_REDUCE_MAX));
  for (size_t i = 0; i < 2; ++i)
    ASSERT_CODE(cubert_client_sync(clients[i]), CUBERT_CODE_SERVER_UNHEALTHY, "injected");
  cubert_comm_release(comm);
  for (size_t i = 0; i < 2; ++i) {
    cubert_handle_release(src[i]);
    cubert_handle_release(dst[i]);
  }
  cubert_client_release(cpu);
}
