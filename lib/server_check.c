/* cubert — checking that a server implements the required contract (cubert/server.h). */
#include <stddef.h>

#include "cubert/server.h"

cubert_status cubert_server_vtable_check(const cubert_server_vtable *v, const char *who) {
  if (!v)
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                              "backend \"%s\": its server has no vtable", who);
  /* Every required entry, in declaration order. */
  const struct {
    const char *name;
    int set;
  } entries[] = {
      {"destroy", v->destroy != NULL},
      {"storage_alloc", v->storage_alloc != NULL},
      {"storage_free", v->storage_free != NULL},
      {"slice_cache_release", v->slice_cache_release != NULL},
      {"stream_create", v->stream_create != NULL},
      {"stream_destroy", v->stream_destroy != NULL},
      {"launch", v->launch != NULL},
      {"read", v->read != NULL},
      {"write", v->write != NULL},
      {"flush", v->flush != NULL},
      {"sync", v->sync != NULL},
      {"event_record", v->event_record != NULL},
      {"event_wait", v->event_wait != NULL},
      {"event_sync", v->event_sync != NULL},
      {"event_done", v->event_done != NULL},
      {"event_release", v->event_release != NULL},
  };
  for (size_t i = 0; i < sizeof entries / sizeof *entries; ++i)
    if (!entries[i].set)
      return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                                "backend \"%s\": its server's vtable has no %s, which every "
                                "server must implement (cubert/server.h)",
                                who, entries[i].name);
  if (v->kernel_form != CUBERT_KERNEL_FORM_OPENCL && v->kernel_form != CUBERT_KERNEL_FORM_CPU)
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                              "backend \"%s\": its server's kernel_form is %d, not a "
                              "cubert_kernel_form",
                              who, (int)v->kernel_form);
  return NULL;
}
