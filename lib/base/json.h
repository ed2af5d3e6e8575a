/* cubert — JSON strings (core-internal; json.c): for the trace file and cubert-info --json. */
#ifndef CUBERT_JSON_H
#define CUBERT_JSON_H

#include <stddef.h>
#include <stdio.h>

/* Writes s[0..len) as the body of a JSON string (no quotes): quotes, backslashes and control
   bytes escaped, bytes that are not well-formed UTF-8 replaced by U+FFFD, so the document
   stays valid JSON whatever the bytes (device and driver strings come from drivers and /proc:
   nothing promises UTF-8). */
void cubert_json_string_body(FILE *f, const char *s, size_t len);

#endif
