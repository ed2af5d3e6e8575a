/* cubert CPU server — storage pages: host memory, 64-byte aligned.

   Small pages come from the C allocator. Pages of CUBERT_CPU_MAP_BYTES and more are anonymous
   mappings: page aligned, returned to the system on free, and zero-filled lazily by the kernel,
   so a large allocation costs nothing until it is touched (pages are never touched or zeroed
   here). Pages of CUBERT_CPU_HUGE_BYTES and more are aligned to 2 MiB and advised for
   transparent huge pages, which saves TLB misses in bandwidth-bound kernels on big buffers.
   The 8 MiB pages of the smallest sliced pool (buffers up to 2 MiB) are not advised: there the
   first touch of a small buffer would fault and zero 2 MiB, and every stream slot that used
   one small buffer would hold 2 MiB (8 GiB at 4,096 slots; 4 KiB pages: 8 KiB a slot). A
   refused allocation is OUT_OF_MEMORY with the size; nothing aborts. */
#include "cpu/storage.h"

#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base/status.h"
#include "cpu/server.h"
#include "cubert/config.h"

#define CUBERT_CPU_MAP_BYTES (256u * 1024u)
#define CUBERT_CPU_HUGE_BYTES (16u * 1024u * 1024u)
#define CUBERT_CPU_HUGE_ALIGN (2u * 1024u * 1024u)

static uint64_t page_bytes(void) {
  long page = sysconf(_SC_PAGESIZE);
  return page > 0 ? (uint64_t)page : 4096;
}

/* Bytes actually mapped for a page of `size` (the free path recomputes it the same way). */
static uint64_t mapped_bytes(uint64_t size) {
  uint64_t page = page_bytes();
  return (size + page - 1) / page * page;
}

static cubert_status out_of_memory(uint64_t size) {
  return cubert_status_set_size(
      cubert_status_make(CUBERT_CODE_OUT_OF_MEMORY,
                         "host out of memory: a storage page of %llu bytes was refused",
                         (unsigned long long)size),
      size);
}

static void *map_pages(uint64_t size) {
  uint64_t bytes = mapped_bytes(size);
  if (size < CUBERT_CPU_HUGE_BYTES) {
    void *p = mmap(NULL, (size_t)bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
  }
  /* Over-map by the alignment and trim both ends, so the page starts on a 2 MiB boundary. */
  uint64_t over = bytes + CUBERT_CPU_HUGE_ALIGN;
  if (over < bytes) return NULL;
  char *raw = mmap(NULL, (size_t)over, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) return NULL;
  uintptr_t aligned =
      ((uintptr_t)raw + CUBERT_CPU_HUGE_ALIGN - 1) & ~(uintptr_t)(CUBERT_CPU_HUGE_ALIGN - 1);
  size_t head = aligned - (uintptr_t)raw;
  size_t tail = (size_t)(over - head - bytes);
  if (head) munmap(raw, head);
  if (tail) munmap((char *)aligned + bytes, tail);
#ifdef MADV_HUGEPAGE
  madvise((void *)aligned, (size_t)bytes, MADV_HUGEPAGE);
#endif
  return (void *)aligned;
}

/* Large pages are mapped (huge pages, no heap fragmentation), except under
   CUBERT_POOLS_EXCLUSIVE, where every buffer comes from the heap so that AddressSanitizer sees
   its end. The setting is read once per process, so a page is freed the way it was made. */
static int mapped(uint64_t bytes) {
  return bytes >= CUBERT_CPU_MAP_BYTES && !cubert_config_get()->pools_exclusive;
}

cubert_status cubert_cpu_storage_alloc(cubert_server *server, uint64_t size, cubert_storage *out) {
  cubert_cpu_device *d = cubert_cpu_device_of(server);
  /* A zero-size page still gets a distinct, valid address. */
  uint64_t bytes = size ? size : CUBERT_CPU_LINE;
  if (bytes > (uint64_t)SIZE_MAX - CUBERT_CPU_HUGE_ALIGN - page_bytes()) return out_of_memory(size);
  void *p = NULL;
  if (mapped(bytes)) {
    p = map_pages(bytes);
  } else if (cubert_config_get()->pools_exclusive) {
    /* Exactly the bytes asked for, from the allocator AddressSanitizer watches, so that it
       reports the first byte past the buffer (posix_memalign: any size is valid). */
    if (posix_memalign(&p, CUBERT_CPU_LINE, (size_t)bytes) != 0) p = NULL;
  } else {
    uint64_t rounded = (bytes + CUBERT_CPU_LINE - 1) & ~(uint64_t)(CUBERT_CPU_LINE - 1);
    p = aligned_alloc(CUBERT_CPU_LINE, (size_t)rounded);
  }
  if (!p) return out_of_memory(size);
  out->host_ptr = p;
  out->native = NULL;
  out->size = size;
  out->id = atomic_fetch_add_explicit(&d->next_storage_id, 1, memory_order_relaxed) + 1;
  return NULL;
}

void cubert_cpu_storage_free(cubert_server *server, cubert_storage *storage) {
  if (!storage || !storage->host_ptr) return;
  uint64_t bytes = storage->size ? storage->size : CUBERT_CPU_LINE;
  /* The next page at this address starts with nothing unwritten. */
  cubert_cpu_undefined_remove(&cubert_cpu_device_of(server)->undefined,
                              (uintptr_t)storage->host_ptr, bytes);
  if (mapped(bytes))
    munmap(storage->host_ptr, (size_t)mapped_bytes(bytes));
  else
    free(storage->host_ptr);
  storage->host_ptr = NULL;
}
