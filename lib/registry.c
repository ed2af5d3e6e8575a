/* cubert — the device registry: resolves a selector ("cpu", "opencl:1", ...) to a backend
   and a spec for it. The list of backends is generated at build time (backends.c). */
#include "registry.h"

#include <stdio.h>
#include <string.h>

#include "cubert/server.h"

#define SELECTORS "cpu, opencl, opencl:N, opencl:gpu, opencl:cpu"

/* NOT_FOUND here is about a device, not a handle: say so in the first words. */
static cubert_status device_not_found(cubert_status s) {
  if (cubert_status_code(s) == CUBERT_CODE_NOT_FOUND)
    cubert_status_set_headline(s, "Couldn't find a device for that selector");
  return s;
}

cubert_status cubert_registry_open(const char *selector, const cubert_backend **out_backend,
                                   cubert_server **out_server) {
  *out_backend = NULL;
  *out_server = NULL;
  if (selector && !*selector)
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                              "the device selector is empty (pass NULL for $CUBERT_DEVICE or "
                              "\"cpu\"; selectors: %s)",
                              SELECTORS);
  if (!selector) selector = cubert_config_get()->device;
  if (!selector || !*selector) selector = "cpu";
  const char *colon = strchr(selector, ':');
  size_t name_len = colon ? (size_t)(colon - selector) : strlen(selector);
  const char *spec = colon ? colon + 1 : "";
  if (colon && (!*spec || name_len == 0))
    return cubert_status_make(
        CUBERT_CODE_INVALID_ARGUMENT, "device selector \"%s\" has an empty %s (selectors: %s)",
        selector, name_len ? "device after the colon" : "backend before the colon", SELECTORS);
  char known[256] = "";
  const cubert_backend *const *backends = cubert_backends();
  for (size_t i = 0; backends[i]; ++i) {
    const cubert_backend *b = backends[i];
    if (strlen(b->name) == name_len && strncmp(b->name, selector, name_len) == 0) {
      *out_backend = b;
      return device_not_found(b->create(spec, out_server));
    }
    size_t used = strlen(known);
    snprintf(known + used, sizeof(known) - used, "%s%s", used ? ", " : "", b->name);
  }
  return device_not_found(cubert_status_make(CUBERT_CODE_NOT_FOUND,
                                             "unknown device selector \"%s\": the backends built "
                                             "into this library are %s (selectors: %s)",
                                             selector, known, SELECTORS));
}
