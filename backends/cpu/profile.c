/* cubert CPU server — profiling with the host clock (timing method SYSTEM).

   A region starts after the stream's earlier work finished and ends when the work queued inside
   it finished, so the duration covers exactly that work. Regions are keyed by token in a small
   per-stream table (a handful are open at once), which lets them nest and overlap. The table is
   touched only by the thread submitting to the stream, like the rest of the submit side. */
#include <stdlib.h>

#include "cpu/internal.h"

static int find_token(const cubert_server_stream *s, uint64_t token) {
  for (uint32_t i = 0; i < s->profile_count; ++i)
    if (s->profiles[i].token == token) return (int)i;
  return -1;
}

cubert_status cubert_cpu_profile_begin(cubert_server *server, cubert_server_stream *s,
                                       uint64_t token) {
  if (find_token(s, token) >= 0)
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                              "profile token %llu is already open on this stream",
                              (unsigned long long)token);
  if (s->profile_count == s->profile_capacity) {
    uint32_t cap = s->profile_capacity ? s->profile_capacity * 2 : 4;
    cubert_cpu_profile_entry *grown = realloc(s->profiles, cap * sizeof *grown);
    if (!grown)
      return cubert_status_make(CUBERT_CODE_OUT_OF_MEMORY,
                                "host allocation of the profile table (%u entries) failed", cap);
    s->profiles = grown;
    s->profile_capacity = cap;
  }
  cubert_cpu_wait(cubert_cpu_device_of(server), s, atomic_load(&s->submitted));
  s->profiles[s->profile_count++] = (cubert_cpu_profile_entry){token, cubert_now_ns()};
  return NULL;
}

cubert_status cubert_cpu_profile_end(cubert_server *server, cubert_server_stream *s, uint64_t token,
                                     uint64_t *out_ns, cubert_timing_method *out_method) {
  int i = find_token(s, token);
  if (i < 0)
    return cubert_status_make(CUBERT_CODE_NOT_REGISTERED,
                              "profile token %llu was never started on this stream or already "
                              "ended",
                              (unsigned long long)token);
  cubert_cpu_wait(cubert_cpu_device_of(server), s, atomic_load(&s->submitted));
  uint64_t end = cubert_now_ns();
  uint64_t start = s->profiles[i].start_ns;
  s->profiles[i] = s->profiles[--s->profile_count];
  if (out_ns) *out_ns = end - start;
  if (out_method) *out_method = CUBERT_TIMING_SYSTEM;
  return NULL;
}
