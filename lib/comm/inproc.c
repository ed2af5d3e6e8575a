/* cubert — the in-process transport (transport.h): every member is a client of this process,
   so the members' staged host chunks are combined directly in host memory. Each member thread
   of the engine takes one part: for reductions, part p reduces elements [p/parts, (p+1)/parts)
   of the chunk over every member's input (in rank order) and writes them to every member's
   output buffer, a reduce-scatter across the member threads followed, in the engine, by every
   member staging the whole result in (the all-gather). reduce_scatter splits by result piece,
   all_gather and broadcast copy pieces. */
#include <stdlib.h>
#include <string.h>

#include "comm/transport.h"

/* Elements [begin, end) of `count` for part `part` of `parts`, in multiples of 16 elements
   (64-byte lines for 4-byte types) so that two parts never write one cache line. */
static void part_range(size_t count, size_t part, size_t parts, size_t *begin, size_t *end) {
  size_t units = (count + 15) / 16;
  size_t b = units * part / parts * 16, e = units * (part + 1) / parts * 16;
  *begin = b < count ? b : count;
  *end = e < count ? e : count;
}

static cubert_status inproc_combine(cubert_comm_transport *t, const cubert_comm_chunk *c,
                                    size_t part, size_t parts) {
  size_t n = t->local_count, es = c->elem_size, begin = 0, end = 0;
  const void *in_at[64];
  void *out_at[64];
  const void **ins = n <= 64 ? in_at : malloc(n * sizeof *ins);
  void **outs = n <= 64 ? out_at : malloc(n * sizeof *outs);
  if (!ins || !outs) {
    if (ins != in_at) free((void *)ins);
    if (outs != out_at) free(outs);
    return cubert_status_make(CUBERT_CODE_OUT_OF_MEMORY, "host allocation failed");
  }
  switch (c->kind) {
    case CUBERT_COMM_ALL_REDUCE:
    case CUBERT_COMM_REDUCE:
      part_range(c->count, part, parts, &begin, &end);
      if (begin < end) {
        for (size_t i = 0; i < n; ++i) {
          ins[i] = (const char *)c->in[i] + begin * es;
          outs[i] = c->out[i] ? (char *)c->out[i] + begin * es : NULL;
        }
        cubert_comm_host_reduce_n(outs, n, ins, n, end - begin, c->dtype, c->op);
      }
      break;
    case CUBERT_COMM_REDUCE_SCATTER:
      for (size_t j = part; j < n; j += parts) {
        for (size_t i = 0; i < n; ++i) ins[i] = (const char *)c->in[i] + j * c->count * es;
        cubert_comm_host_reduce_n(&c->out[j], 1, ins, n, c->count, c->dtype, c->op);
      }
      break;
    case CUBERT_COMM_ALL_GATHER:
      for (size_t j = part; j < n; j += parts)
        for (size_t i = 0; i < n; ++i) {
          if (!c->out[i]) continue;
          char *dst = (char *)c->out[i] + j * c->count * es;
          if (dst != c->in[j]) memcpy(dst, c->in[j], c->count * es);
        }
      break;
    case CUBERT_COMM_BROADCAST:
      part_range(c->count, part, parts, &begin, &end);
      for (size_t i = 0; i < n && begin < end; ++i)
        if (c->out[i] && i != c->root)
          memcpy((char *)c->out[i] + begin * es, (const char *)c->in[c->root] + begin * es,
                 (end - begin) * es);
      break;
    default:
      if (ins != in_at) free((void *)ins);
      if (outs != out_at) free(outs);
      return cubert_status_make(CUBERT_CODE_UNSUPPORTED_IO_OPERATION,
                                "the in-process transport has no point-to-point messages");
  }
  if (ins != in_at) free((void *)ins);
  if (outs != out_at) free(outs);
  return NULL;
}

static void inproc_destroy(cubert_comm_transport *t) {
  free(t);
}

static const cubert_comm_transport_vtable inproc_vtable = {
    .name = "inproc",
    .combine = inproc_combine,
    .destroy = inproc_destroy,
};

cubert_comm_transport *cubert_comm_inproc_create(size_t size) {
  cubert_comm_transport *t = calloc(1, sizeof *t);
  if (!t) return NULL;
  t->vtable = &inproc_vtable;
  t->size = size;
  t->rank = 0;
  t->local_count = size;
  t->parts_split = 1;
  return t;
}
