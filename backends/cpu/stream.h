/* cubert CPU server — the vtable's stream methods (stream.c): streams, launches,
   reads, writes and copies queued as records, flush and sync. */
#ifndef CUBERT_CPU_STREAM_H
#define CUBERT_CPU_STREAM_H

#include <stdint.h>

#include "cubert/server.h"

cubert_status cubert_cpu_stream_create(cubert_server *server, cubert_stream_errors *errors,
                                       cubert_server_stream **out);
void cubert_cpu_stream_destroy(cubert_server *server, cubert_server_stream *stream);
cubert_status cubert_cpu_launch(cubert_server *server, cubert_server_stream *stream,
                                const cubert_launch *launch);
cubert_status cubert_cpu_read(cubert_server *server, cubert_server_stream *stream,
                              const cubert_binding *src, void *dst, uint64_t size);
cubert_status cubert_cpu_write(cubert_server *server, cubert_server_stream *stream,
                               const cubert_binding *dst, const void *src, uint64_t size);
cubert_status cubert_cpu_flush(cubert_server *server, cubert_server_stream *stream);
cubert_status cubert_cpu_sync(cubert_server *server, cubert_server_stream *stream);

cubert_status cubert_cpu_read_async(cubert_server *server, cubert_server_stream *stream,
                                    const cubert_binding *src, void *dst, uint64_t size,
                                    cubert_event **out_event);
cubert_status cubert_cpu_write_async(cubert_server *server, cubert_server_stream *stream,
                                     const cubert_binding *dst, const void *src, uint64_t size,
                                     cubert_event **out_event);
cubert_status cubert_cpu_copy(cubert_server *server, cubert_server_stream *stream,
                              const cubert_binding *src, const cubert_binding *dst);

#endif /* CUBERT_CPU_STREAM_H */
