/* cubert — JSON strings (json.h). */
#include "base/json.h"

/* Length of the well-formed UTF-8 sequence at s[0..avail), 0 when it is not one. */
static size_t utf8_sequence(const unsigned char *s, size_t avail) {
  unsigned c = s[0];
  size_t n = c < 0x80                 ? 1
             : c >= 0xc2 && c <= 0xdf ? 2
             : c >= 0xe0 && c <= 0xef ? 3
             : c >= 0xf0 && c <= 0xf4 ? 4
                                      : 0;
  if (n == 0 || n > avail) return 0;
  for (size_t i = 1; i < n; ++i)
    if ((s[i] & 0xc0) != 0x80) return 0;
  /* Overlong forms, UTF-16 surrogates and code points above U+10FFFF. */
  if ((c == 0xe0 && s[1] < 0xa0) || (c == 0xed && s[1] > 0x9f) || (c == 0xf0 && s[1] < 0x90) ||
      (c == 0xf4 && s[1] > 0x8f))
    return 0;
  return n;
}

void cubert_json_string_body(FILE *f, const char *s, size_t len) {
  const unsigned char *p = (const unsigned char *)s;
  for (size_t i = 0; i < len;) {
    unsigned c = p[i];
    if (c == '"' || c == '\\') {
      fputc('\\', f);
      fputc((int)c, f);
      ++i;
    } else if (c < 0x20 || c == 0x7f) {
      fprintf(f, "\\u%04x", c);
      ++i;
    } else {
      size_t n = utf8_sequence(p + i, len - i);
      if (n == 0) {
        fputs("\\ufffd", f);
        ++i;
      } else {
        fwrite(p + i, 1, n, f);
        i += n;
      }
    }
  }
}
