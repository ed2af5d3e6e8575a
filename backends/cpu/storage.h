/* cubert CPU server — the vtable's storage methods (storage.c): pages of host
   memory. */
#ifndef CUBERT_CPU_STORAGE_H
#define CUBERT_CPU_STORAGE_H

#include <stdint.h>

#include "cubert/server.h"

cubert_status cubert_cpu_storage_alloc(cubert_server *server, uint64_t size, cubert_storage *out);
void cubert_cpu_storage_free(cubert_server *server, cubert_storage *storage);

#endif /* CUBERT_CPU_STORAGE_H */
