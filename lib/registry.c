/* cubert — the device registry: resolves a selector ("cpu", "opencl:1", "cpu!private", ...) to
   a backend and one of its devices. The list of backends is generated at build time
   (backends.c). Which instance of a device a client gets is device_registry.c's business. */
#include "registry.h"

#include <stdio.h>
#include <string.h>

#include "backend_list.h"
#include "base/status.h"
#include "cubert/backend.h"
#include "cubert/config.h"
#include "cubert/server.h"

#define SELECTORS "cpu, opencl, opencl:N, opencl:gpu, opencl:cpu, each with an optional !private"
#define PRIVATE_SUFFIX "!private"

/* NOT_FOUND here is about a device, not a handle: say so in the first words. */
static cubert_status device_not_found(cubert_status s) {
  if (cubert_status_code(s) == CUBERT_CODE_NOT_FOUND)
    cubert_status_set_headline(s, "Couldn't find a device for that selector");
  return s;
}

/* Splits "<device>!<option>" into the device part (copied into `device`) and the option. */
static cubert_status split_option(const char *selector, char *device, size_t capacity,
                                  int *out_private) {
  const char *bang = strchr(selector, '!');
  size_t len = bang ? (size_t)(bang - selector) : strlen(selector);
  *out_private = 0;
  if (bang) {
    if (strcmp(bang, PRIVATE_SUFFIX) != 0)
      return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                                "device selector \"%s\" has an unknown option \"%s\" (the one "
                                "option is !private: a device instance of its own)",
                                selector, bang + 1);
    *out_private = 1;
  }
  if (len >= capacity)
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                              "device selector \"%s\" is longer than %zu characters", selector,
                              capacity - 1);
  memcpy(device, selector, len);
  device[len] = '\0';
  return NULL;
}

cubert_status cubert_registry_resolve(const char *selector, cubert_device_key *out) {
  memset(out, 0, sizeof(*out));
  if (selector && !*selector)
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                              "the device selector is empty (pass NULL for $CUBERT_DEVICE or "
                              "\"cpu\"; selectors: %s)",
                              SELECTORS);
  if (!selector) selector = cubert_config_get()->device;
  if (!selector || !*selector) selector = "cpu";
  char name[sizeof(out->selector)];
  CUBERT_RETURN_IF_ERROR(split_option(selector, name, sizeof(name), &out->private_));
  snprintf(out->selector, sizeof(out->selector), "%s", selector);
  if (!*name) { /* "!private": the default device */
    const char *fallback = cubert_config_get()->device;
    int ignored = 0;
    if (fallback && *fallback)
      CUBERT_RETURN_IF_ERROR(split_option(fallback, name, sizeof(name), &ignored));
    if (!*name) snprintf(name, sizeof(name), "cpu");
  }
  const char *colon = strchr(name, ':');
  size_t name_len = colon ? (size_t)(colon - name) : strlen(name);
  const char *spec = colon ? colon + 1 : "";
  if (colon && (!*spec || name_len == 0))
    return cubert_status_make(
        CUBERT_CODE_INVALID_ARGUMENT, "device selector \"%s\" has an empty %s (selectors: %s)",
        selector, name_len ? "device after the colon" : "backend before the colon", SELECTORS);
  const cubert_backend *b = cubert_backend_find(name, name_len);
  if (b) {
    out->backend = b;
    if (!b->resolve) return NULL; /* opened by spec, never shared */
    out->shareable = 1;
    return device_not_found(b->resolve(spec, &out->index));
  }
  char known[256];
  cubert_backend_names(known, sizeof known);
  return device_not_found(cubert_status_make(CUBERT_CODE_NOT_FOUND,
                                             "unknown device selector \"%s\": the backends of "
                                             "this library are %s (selectors: %s)",
                                             selector, known, SELECTORS));
}

cubert_status cubert_registry_open(const cubert_device_key *key, cubert_server **out_server) {
  *out_server = NULL;
  char spec[sizeof(key->selector)];
  if (key->shareable) {
    snprintf(spec, sizeof(spec), "%zu", key->index);
  } else { /* the spec as given */
    char name[sizeof(key->selector)];
    int private_ = 0;
    CUBERT_RETURN_IF_ERROR(split_option(key->selector, name, sizeof(name), &private_));
    const char *colon = strchr(name, ':');
    snprintf(spec, sizeof(spec), "%s", colon ? colon + 1 : "");
  }
  CUBERT_RETURN_IF_ERROR(device_not_found(key->backend->create(spec, out_server)));
  /* A registered backend's server may be incomplete: refuse it before a client calls into it
     (the built-in ones are complete, and cheap to check). */
  cubert_server *server = *out_server;
  cubert_status s =
      server ? cubert_server_vtable_check(server->vtable, key->backend->name)
             : cubert_status_make(CUBERT_CODE_GENERIC, "backend \"%s\" created no server",
                                  key->backend->name);
  if (s && server && server->vtable && server->vtable->destroy) server->vtable->destroy(server);
  if (s) *out_server = NULL;
  return s;
}
