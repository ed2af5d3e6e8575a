/* cubert — device registry (core-internal). */
#ifndef CUBERT_REGISTRY_H
#define CUBERT_REGISTRY_H

#include <stddef.h>

#include "cubert/backend.h"
#include "cubert/server.h"

/* A selector after resolution: which device of which backend, and whether the caller asked for
   a private instance ("!private"). Two selectors naming the same device ("cpu", "cpu:0", NULL
   with $CUBERT_DEVICE unset) resolve to equal (backend, index). */
typedef struct cubert_device_key {
  const cubert_backend *backend;
  size_t index;       /* the device's index in the backend's list (cubert-info) */
  int shareable;      /* 0: the backend cannot resolve specs, every open is its own instance */
  int private_;       /* "!private": never shared */
  char selector[256]; /* the selector as given (after NULL -> $CUBERT_DEVICE -> "cpu") */
} cubert_device_key;

/* Resolves `selector` (NULL or "": $CUBERT_DEVICE, else "cpu"; an optional "!private" suffix,
   alone meaning the default device) without opening the device. NOT_FOUND for an unknown
   backend name, listing the built-in ones; the backend's own errors for an unknown device spec;
   INVALID_ARGUMENT for empty parts and unknown options. */
cubert_status cubert_registry_resolve(const char *selector, cubert_device_key *out);
/* Opens the device `key` names as a new server. */
cubert_status cubert_registry_open(const cubert_device_key *key, cubert_server **out_server);

#endif
