/* libFuzzer target over the OpenCL program disk cache reader (issue 10 #10): any bytes as a
   cache file, validated against a key. The parser must never read outside the input, and
   whatever it accepts must be exactly a header, the key text and a binary of the stated
   length.

   Input: one selector byte, then the file. Even selector: a fixed key. Odd: the key is the
   text the file itself holds where its key belongs (when it is NUL-free and in bounds), so
   the fuzzer reaches the checks behind the key comparison. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "opencl/disk_cache.h"

#define CHECK(cond)                \
  do {                             \
    if (!(cond)) __builtin_trap(); \
  } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const char kFixed[] = "cubert-opencl-program\ncubert 0.1.0\ndevice fuzz\n";
  if (size == 0) return 0;
  int own_key = data[0] & 1;
  ++data;
  --size;
  /* A private copy: ASan then bounds the parser's reads exactly at `size`. */
  unsigned char *file = malloc(size ? size : 1);
  char key[256];
  const char *k = kFixed;
  if (!file) return 0;
  if (size) memcpy(file, data, size);
  if (own_key && size >= 16) {
    size_t len = (size_t)file[12] | (size_t)file[13] << 8;
    if (len < sizeof(key) && 32 + len <= size && !memchr(file + 32, 0, len)) {
      memcpy(key, file + 32, len);
      key[len] = '\0';
      k = key;
    }
  }
  size_t offset = 0, binary = 0;
  const char *reason = cubert_ocl_disk_parse(file, size, k, &offset, &binary);
  if (!reason) {
    size_t key_len = strlen(k);
    CHECK(offset == 32 + key_len);
    CHECK(binary > 0 && offset + binary == size);
    CHECK(memcmp(file, "CUBRTCL", 8) == 0);
    CHECK(memcmp(file + 32, k, key_len) == 0);
  } else {
    CHECK(reason[0] != '\0');
    CHECK(offset == 0 && binary == 0);
  }
  free(file);
  return 0;
}
