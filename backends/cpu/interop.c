/* cubert CPU server — the public interop header cubert/cpu.h: host pointers behind handles.
   The core resolves the handle on the calling stream (server.h "interop"); the wait for the
   stream is what makes the bytes quiet (rule 1 of the header). */
#include "cubert/server/interop.h"

#include "cpu/server.h"
#include "cubert/cpu.h"

cubert_status cubert_cpu_handle_ptr(cubert_client *client, cubert_handle *handle, void **out_ptr,
                                    size_t *out_size) {
  if (!out_ptr)
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                              "cubert_cpu_handle_ptr: out_ptr is NULL");
  *out_ptr = NULL;
  if (out_size) *out_size = 0;
  cubert_interop io;
  CUBERT_RETURN_IF_ERROR(
      cubert_interop_begin(client, &cubert_cpu_backend, "cubert_cpu_handle_ptr", &io));
  cubert_binding b;
  cubert_status s = cubert_interop_handle(&io, handle, "handle", &b);
  if (!s) s = cubert_interop_sync(&io);
  if (!s) {
    *out_ptr = (char *)b.slice->page->host_ptr + b.offset;
    if (out_size) *out_size = (size_t)b.size;
    /* The caller may fill the bytes where the kernel sanitizer cannot see it: they count as
       written. */
    cubert_cpu_undefined_remove(&cubert_cpu_device_of(io.server)->undefined, (uintptr_t)*out_ptr,
                                b.size);
  }
  return cubert_interop_end(&io, s);
}
