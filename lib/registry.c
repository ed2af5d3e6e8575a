/* cubert — the device registry: resolves a selector ("cpu", "opencl:1", ...) to a backend
   and a spec for it. The list of backends is generated at build time (backends.c). */
#include "registry.h"

#include <stdio.h>
#include <string.h>

#include "cubert/server.h"

cubert_status cubert_registry_open(const char *selector, const cubert_backend **out_backend,
                                   cubert_server **out_server) {
  *out_backend = NULL;
  *out_server = NULL;
  if (!selector || !*selector) selector = cubert_config_get()->device;
  if (!selector || !*selector) selector = "cpu";
  const char *colon = strchr(selector, ':');
  size_t name_len = colon ? (size_t)(colon - selector) : strlen(selector);
  const char *spec = colon ? colon + 1 : "";
  char known[256] = "";
  const cubert_backend *const *backends = cubert_backends();
  for (size_t i = 0; backends[i]; ++i) {
    const cubert_backend *b = backends[i];
    if (strlen(b->name) == name_len && strncmp(b->name, selector, name_len) == 0) {
      *out_backend = b;
      return b->create(spec, out_server);
    }
    size_t used = strlen(known);
    snprintf(known + used, sizeof(known) - used, "%s%s", used ? ", " : "", b->name);
  }
  return cubert_status_make(CUBERT_CODE_NOT_FOUND,
                            "unknown device selector \"%s\": the backends built into this library "
                            "are %s (selectors: cpu, opencl, opencl:N, opencl:gpu, opencl:cpu)",
                            selector, known);
}
