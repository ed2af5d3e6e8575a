/* cubert — the backends a client can open (backend_list.c): those compiled into the library
   (cubert_backends(), generated at build time) followed by those the program registered
   (cubert_backend_register). The selector registry and the device listing look backends up
   here; nothing else names one. */
#ifndef CUBERT_BACKEND_LIST_H
#define CUBERT_BACKEND_LIST_H

#include <stddef.h>

#include "cubert/backend.h"

/* Most backends a program may register. */
#define CUBERT_MAX_REGISTERED_BACKENDS 16

/* Every backend, built-in ones first, into out[0..capacity); returns how many there are. */
size_t cubert_backend_all(const cubert_backend **out, size_t capacity);
/* The backend named by the `len` bytes at `name`, or NULL. */
const cubert_backend *cubert_backend_find(const char *name, size_t len);
/* "cpu, opencl, ..." : every backend's name, for errors (truncated to `capacity`). */
void cubert_backend_names(char *out, size_t capacity);

#endif /* CUBERT_BACKEND_LIST_H */
