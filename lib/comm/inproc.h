/* cubert — the in-process transport (inproc.c): every member of the communicator is a local
   client, and the member threads combine each chunk's host copies directly. */
#ifndef CUBERT_COMM_INPROC_H
#define CUBERT_COMM_INPROC_H

#include <stddef.h>

#include "comm/transport.h"

/* The in-process transport (inproc.c): `size` local members. NULL when out of memory. */
cubert_comm_transport *cubert_comm_inproc_create(size_t size);

#endif /* CUBERT_COMM_INPROC_H */
