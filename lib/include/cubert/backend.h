/** @file
   cubert — backends and their devices: the backends built into the library, listing and
   counting devices without opening them, and registering a backend built outside the library
   (cubert_backend_register). A backend opens servers (cubert/server.h). */
#ifndef CUBERT_BACKEND_H
#define CUBERT_BACKEND_H

#include <stddef.h>
#include <stdio.h>

#include "cubert/device.h"
#include "cubert/export.h"
#include "cubert/status.h"

typedef struct cubert_server cubert_server; /**< A device's server (cubert/server.h). */

CUBERT_EXTERN_C_BEGIN

/** One device a backend can open, as listed by cubert-info. */
typedef struct cubert_device_info {
  char selector[64];                   /**< e.g. "cpu", "opencl:1" */
  int available;                       /**< 0: listed with `reason` */
  char reason[256];                    /**< why the device is not available */
  cubert_device_properties properties; /**< its properties (as far as known) */
} cubert_device_info;

/** A backend: lists and opens the devices of one kind (the CPU server, OpenCL). */
typedef struct cubert_backend {
  const char *name; /**< selector prefix: "cpu", "opencl" */
  /** Lists devices into out[0..capacity), sets *out_count to the total number (which may exceed
     capacity). Zero devices is not an error; `out` may be NULL when capacity is 0
     (a count-only query). */
  cubert_status (*enumerate)(cubert_device_info *out, size_t capacity, size_t *out_count);
  /** Opens the device named by `spec` (the selector after "name:", or "" for the bare name).
     NOT_FOUND naming the valid choices for an unknown spec. */
  cubert_status (*create)(const char *spec, cubert_server **out);
  /** The index (in enumerate's list) of the device `spec` names, without opening it: clients
     of one device share one instance (lib/device_registry.c), and "opencl", "opencl:0" and
     "opencl:gpu" may name the same one. create(the index in decimal) must open that device.
     Errors as create. May be NULL: every client then opens its own instance. */
  cubert_status (*resolve)(const char *spec, size_t *out_index);
  /** Prints backend-specific details of device `index` (topology, caches, ...). May be NULL. */
  void (*describe)(size_t index, FILE *out);
} cubert_backend;

/** The backends compiled into this library, NULL-terminated (generated at build time); the
   ones a program registers (cubert_backend_register) come after them in the lists of
   cubert_devices_list. */
CUBERT_API const cubert_backend *const *cubert_backends(void);

/** Lists the devices of backend `backend` ("cpu", "opencl"; NULL: of every backend, in the
   order of cubert_backends(), the reference's enumerate_all_devices) into out[0..capacity),
   and sets *out_count to their total number, which may exceed capacity (the reference's
   device_count). Every device a backend enumerates is listed, unavailable ones too
   (available 0, with the reason); out[i].selector opens device i with cubert_client_create.
   Each listed device's properties.properties_hash is filled, equal to the one a client of the
   device reports. Does not open the devices; thread-safe. Errors: INVALID_ARGUMENT for a NULL
   out_count, or a NULL out with capacity > 0; NOT_FOUND for a backend not built into the
   library or registered (naming the ones there are); a backend's enumeration failure as it returns
   it. */
CUBERT_API cubert_status cubert_devices_list(const char *backend, cubert_device_info *out,
                                             size_t capacity, size_t *out_count);
/** The number of devices cubert_devices_list would list for `backend` (NULL: all backends).
   Errors as cubert_devices_list. */
CUBERT_API cubert_status cubert_devices_count(const char *backend, size_t *out_count);

/** Registers `backend`, built outside the library (a program's own server, written against
   cubert/server.h), after the backends built in: cubert_client_create("name") and
   ("name:spec") then open its devices, and cubert_devices_list lists them (the reference's
   ComputeClient::init with a server of the caller's). `backend` must stay valid for the rest
   of the process; there is no unregistering. Every server its create returns is checked
   (cubert_server_vtable_check) before a client uses it. Thread-safe. Errors, all
   INVALID_ARGUMENT naming the field: a NULL backend; a name that is empty, longer than 15
   characters or holds anything but a-z, 0-9 and _; no enumerate or create; a name a backend
   has already; more than 16 registrations. */
CUBERT_API cubert_status cubert_backend_register(const cubert_backend *backend);

CUBERT_EXTERN_C_END

#endif /* CUBERT_BACKEND_H */
