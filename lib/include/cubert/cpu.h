/** @file
   cubert — CPU server interop: the host memory behind a handle of a client on the CPU server,
   so that a program can read and write cubert's buffers in place, without a copy.

   Ordering rules:
   1. cubert_cpu_handle_ptr returns only after every command that used the handle finished: it
      makes the calling stream (cubert/stream.h) wait for the last command of any other stream
      that used the handle, then waits for all of the calling stream's work (as
      cubert_client_sync), so no cubert command is then reading or writing the bytes.
   2. Between that return and the next cubert call (from any thread) that uses the handle, the
      caller may read and write the bytes freely. Writes made before that cubert call are seen
      by it and by all cubert work after it, on any stream (the handle counts as used by the
      calling stream; another thread submitting the call must be ordered after the writes by
      the program, e.g. through a mutex or a thread join).
   3. Once a cubert call that uses the handle (a launch, write, read, copy, ...) was made, the
      bytes may change or be read by queued work at any time: call cubert_cpu_handle_ptr again
      (it waits again) before touching them.
   4. The pointer stays valid while the handle (or any view of it) lives; it must not be freed.

   Thread safety: callable from any thread (it takes the device lock). */
#ifndef CUBERT_CPU_H
#define CUBERT_CPU_H

#include <stddef.h>

#include "cubert/client.h"
#include "cubert/export.h"
#include "cubert/handle.h"
#include "cubert/status.h"

CUBERT_EXTERN_C_BEGIN

/** *out_ptr = the host address of the handle's first byte and *out_size (may be NULL) its size
   in bytes, after the waits of rule 1. A handle of size 0 gives a valid, non-dereferenceable
   pointer. Errors: INVALID_ARGUMENT for a NULL client, handle or out_ptr, and for a client of
   another server ("client is on the 'opencl' server (device '...'), not 'cpu'"); NOT_FOUND for
   a released client or handle, or a handle of another device instance; SERVER_UNHEALTHY with
   the calling stream's asynchronous errors (the pointer is then not returned: the bytes may
   hold the output of work that did not run). */
CUBERT_API cubert_status cubert_cpu_handle_ptr(cubert_client *client, cubert_handle *handle,
                                               void **out_ptr, size_t *out_size);

CUBERT_EXTERN_C_END

#endif /* CUBERT_CPU_H */
