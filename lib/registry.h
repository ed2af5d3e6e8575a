/* cubert — device registry (core-internal). */
#ifndef CUBERT_REGISTRY_H
#define CUBERT_REGISTRY_H

#include "cubert/server.h"

/* Opens the device named by `selector` (NULL or "": $CUBERT_DEVICE, else "cpu").
   NOT_FOUND for an unknown backend name, listing the built-in ones; the backend's own errors
   for an unknown device spec. */
cubert_status cubert_registry_open(const char *selector, const cubert_backend **out_backend,
                                   cubert_server **out_server);

#endif
