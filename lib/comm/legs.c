/* cubert — a member's legs: bytes between its device buffers and host staging memory.

   Host-addressable memory (the CPU server's pages) is copied directly by the member thread: the
   job waited for the caller's earlier work first (member.c), and the caller's stream stays
   behind its gate until the job is done, so nothing else of that stream touches the bytes.
   Device memory goes through the member's two private server streams: reads are started
   asynchronously (read_async) on the out stream, writes (write_async) on the in stream.

   No device lock: a user thread may hold the device lock while it waits in a sync for a stream
   that is behind one of our gates (the core syncs under the lock), so the member thread must be
   able to finish the job without it. It only ever touches its own two streams (each used by
   this one thread), events, and slices it holds references on; the servers keep such
   per-stream state apart from what the lock guards (server.h, "gates"). The staging slots are
   allocated at creation, under the lock. Device memory is read with read_async and written
   with write_async, which hand the host memory to the driver as it is (never through the
   OpenCL server's shared staging buffer, which needs the lock); the fallback `write` is only
   for a server without write_async, whose writes must then not need the lock either. */
#include "comm/legs.h"

#include <stdlib.h>
#include <string.h>

#include "base/status.h"
#include "cubert/server/pinned.h"
#include "cubert/server/transfers.h"
#include "stream/errors.h"

cubert_status cubert_comm_leg_read(comm_member *m, const cubert_binding *b, uint64_t offset,
                                   void *host, uint64_t size, comm_copy *out) {
  out->event = NULL;
  if (size == 0) return NULL;
  const void *at = cubert_comm_host_at(b, offset);
  if (at) {
    if (at != host) memcpy(host, at, size);
    return NULL;
  }
  cubert_binding sub = {b->slice, b->offset + offset, size};
  cubert_server *server = m->server;
  if (server->transfers)
    return server->transfers->read_async(server, m->out_stream, &sub, host, size, &out->event);
  return server->vtable->read(server, m->out_stream, &sub, host, size);
}

cubert_status cubert_comm_leg_wait(comm_member *m, comm_copy *c) {
  if (!c->event) return NULL;
  cubert_server *server = m->server;
  cubert_status s = server->vtable->event_sync(server, c->event);
  server->vtable->event_release(server, c->event);
  c->event = NULL;
  return s;
}

cubert_status cubert_comm_leg_write(comm_member *m, const cubert_binding *b, uint64_t offset,
                                    const void *host, uint64_t size, comm_copy *out) {
  out->event = NULL;
  if (size == 0) return NULL;
  void *at = cubert_comm_host_at(b, offset);
  if (at) {
    if (at != host) memcpy(at, host, size);
    return NULL;
  }
  cubert_binding sub = {b->slice, b->offset + offset, size};
  cubert_server *server = m->server;
  if (server->transfers)
    return server->transfers->write_async(server, m->in_stream, &sub, host, size, &out->event);
  cubert_status s = server->vtable->write(server, m->in_stream, &sub, host, size);
  if (!s) s = server->vtable->flush(server, m->in_stream);
  return s;
}

cubert_status cubert_comm_leg_drain(comm_member *m) {
  cubert_server *server = m->server;
  cubert_status s = NULL;
  cubert_server_stream *streams[3] = {m->out_stream, m->in_stream, m->combine_stream};
  for (int i = 0; i < 3; ++i) {
    if (!streams[i]) continue;
    cubert_event *event = NULL;
    cubert_status e = server->vtable->event_record(server, streams[i], &event);
    if (!e) {
      e = server->vtable->event_sync(server, event);
      server->vtable->event_release(server, event);
    }
    if (!s)
      s = e;
    else
      cubert_status_free(e);
  }
  cubert_status queued[3] = {
      cubert_stream_errors_take(m->out_errors), cubert_stream_errors_take(m->in_errors),
      m->combine_errors ? cubert_stream_errors_take(m->combine_errors) : NULL};
  for (int i = 0; i < 3; ++i) {
    if (!queued[i]) continue;
    if (!s)
      s = queued[i];
    else
      cubert_status_free(queued[i]);
  }
  return s;
}

/* Device lock held (creation and release). */
cubert_status cubert_comm_leg_buffers(comm_member *m, size_t bytes) {
  if (bytes <= m->buf_bytes) return NULL;
  cubert_comm_leg_buffers_free(m);
  bytes = (bytes + 63) & ~(size_t)63;
  cubert_server *server = m->server;
  cubert_status s = NULL;
  m->pinned = server->pinned != NULL;
  for (int i = 0; i < CUBERT_COMM_DEPTH && !s; ++i) {
    void **slots[2] = {&m->in_buf[i], &m->out_buf[i]};
    for (int k = 0; k < 2 && !s; ++k) {
      if (m->pinned) {
        s = server->pinned->host_alloc(server, bytes, slots[k]);
      } else if (!(*slots[k] = aligned_alloc(64, bytes))) {
        s = cubert_status_set_size(
            cubert_status_make(CUBERT_CODE_OUT_OF_MEMORY,
                               "host allocation of a %zu-byte staging buffer failed", bytes),
            bytes);
      }
    }
  }
  if (s) {
    cubert_comm_leg_buffers_free(m);
    return s;
  }
  m->buf_bytes = bytes;
  return NULL;
}

void cubert_comm_leg_buffers_free(comm_member *m) {
  cubert_server *server = m->server;
  for (int i = 0; i < CUBERT_COMM_DEPTH; ++i) {
    void **slots[2] = {&m->in_buf[i], &m->out_buf[i]};
    for (int k = 0; k < 2; ++k) {
      if (!*slots[k]) continue;
      if (m->pinned)
        server->pinned->host_free(server, *slots[k]);
      else
        free(*slots[k]);
      *slots[k] = NULL;
    }
  }
  m->buf_bytes = 0;
}
