/* cubert — the backends a client can open: built in, then registered (backend_list.h).

   Registration appends under a mutex to a fixed array that never shrinks, and readers copy
   the pointers under the same mutex, so a program may register from any thread while others
   create clients. A registered backend stays for the life of the process: clients and
   device instances keep pointers to it. */
#include "backend_list.h"

#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "base/status.h"
#include "cubert/backend.h"

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static const cubert_backend *g_registered[CUBERT_MAX_REGISTERED_BACKENDS];
static size_t g_registered_count;

size_t cubert_backend_all(const cubert_backend **out, size_t capacity) {
  size_t n = 0;
  const cubert_backend *const *builtin = cubert_backends();
  for (size_t i = 0; builtin[i]; ++i, ++n)
    if (n < capacity) out[n] = builtin[i];
  pthread_mutex_lock(&g_lock);
  for (size_t i = 0; i < g_registered_count; ++i, ++n)
    if (n < capacity) out[n] = g_registered[i];
  pthread_mutex_unlock(&g_lock);
  return n;
}

const cubert_backend *cubert_backend_find(const char *name, size_t len) {
  const cubert_backend *all[CUBERT_MAX_REGISTERED_BACKENDS + 8];
  size_t n = cubert_backend_all(all, sizeof all / sizeof *all);
  for (size_t i = 0; i < n && i < sizeof all / sizeof *all; ++i)
    if (strlen(all[i]->name) == len && strncmp(all[i]->name, name, len) == 0) return all[i];
  return NULL;
}

void cubert_backend_names(char *out, size_t capacity) {
  const cubert_backend *all[CUBERT_MAX_REGISTERED_BACKENDS + 8];
  size_t n = cubert_backend_all(all, sizeof all / sizeof *all);
  if (capacity) out[0] = '\0';
  for (size_t i = 0, used = 0; i < n && i < sizeof all / sizeof *all && used < capacity; ++i) {
    snprintf(out + used, capacity - used, "%s%s", i ? ", " : "", all[i]->name);
    used = strlen(out);
  }
}

/* A backend's name is a selector prefix: lower-case letters, digits and '_', 1..15 of them
   (it is copied into cubert_device_properties.backend). */
static cubert_status check_name(const char *name) {
  size_t len = name ? strlen(name) : 0;
  if (len == 0 || len >= sizeof(((cubert_device_properties *)0)->backend))
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                              "cubert_backend_register: backend->name has %zu characters; it "
                              "must have 1 to %zu",
                              len, sizeof(((cubert_device_properties *)0)->backend) - 1);
  for (size_t i = 0; i < len; ++i)
    if (!(islower((unsigned char)name[i]) || isdigit((unsigned char)name[i]) || name[i] == '_'))
      return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                                "cubert_backend_register: backend->name \"%s\" has '%c' at %zu; "
                                "a selector prefix takes a-z, 0-9 and _",
                                name, name[i], i);
  return NULL;
}

cubert_status cubert_backend_register(const cubert_backend *backend) {
  if (!backend)
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                              "cubert_backend_register: backend is NULL");
  CUBERT_RETURN_IF_ERROR(check_name(backend->name));
  if (!backend->enumerate || !backend->create)
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                              "cubert_backend_register: backend \"%s\" has no %s (both enumerate "
                              "and create are required)",
                              backend->name, backend->enumerate ? "create" : "enumerate");
  cubert_status s = NULL;
  pthread_mutex_lock(&g_lock);
  const cubert_backend *const *builtin = cubert_backends();
  int taken = 0;
  for (size_t i = 0; builtin[i]; ++i) taken |= strcmp(builtin[i]->name, backend->name) == 0;
  for (size_t i = 0; i < g_registered_count; ++i)
    taken |= strcmp(g_registered[i]->name, backend->name) == 0;
  if (taken)
    s = cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                           "cubert_backend_register: a backend named \"%s\" exists already",
                           backend->name);
  else if (g_registered_count == CUBERT_MAX_REGISTERED_BACKENDS)
    s = cubert_status_set_limits(
        cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                           "cubert_backend_register: %d backends are registered, the most a "
                           "program may register",
                           CUBERT_MAX_REGISTERED_BACKENDS),
        CUBERT_MAX_REGISTERED_BACKENDS + 1, CUBERT_MAX_REGISTERED_BACKENDS);
  else
    g_registered[g_registered_count++] = backend;
  pthread_mutex_unlock(&g_lock);
  return s;
}
