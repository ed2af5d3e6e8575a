/* cubert conformance suite: written once against the public client API, compiled once per
   backend with CUBERT_CTS_DEVICE set ("cpu", "opencl"). CUBERT_TEST_DEVICE picks another device
   of that backend at run time ("opencl:cpu", "opencl:1"; tests/test_device.h). cts_main.c
   skips the whole binary (exit 77, reason printed) when the default device does not exist, and
   fails it when CUBERT_TEST_DEVICE is malformed or names a device that does not exist. */
#ifndef CUBERT_CTS_H
#define CUBERT_CTS_H

#include <criterion/criterion.h>
#include <cubert/cubert.h>
#include <cubert/kernels.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef CUBERT_CTS_DEVICE
#define CUBERT_CTS_DEVICE "cpu"
#endif

#define ASSERT_OK(expr)                                                       \
  do {                                                                        \
    cubert_status s_ = (expr);                                                \
    cr_assert(s_ == NULL, "%s failed: %s", #expr, cubert_status_message(s_)); \
  } while (0)

/* Asserts that expr fails with `code`, optionally that the message contains `needle`, and
   frees the status. */
#define ASSERT_CODE(expr, code, needle)                                                            \
  do {                                                                                             \
    cubert_status s_ = (expr);                                                                     \
    cr_assert(s_ != NULL, "%s succeeded; expected %s", #expr, cubert_code_name(code));             \
    cr_assert_eq(cubert_status_code(s_), (code), "%s: expected %s, got %s: %s", #expr,             \
                 cubert_code_name(code), cubert_code_name(cubert_status_code(s_)),                 \
                 cubert_status_message(s_));                                                       \
    cr_assert(cts_contains(cubert_status_message(s_), (needle)), "message of %s lacks \"%s\": %s", \
              #expr, cts_or_empty(needle), cubert_status_message(s_));                             \
    cubert_status_free(s_);                                                                        \
  } while (0)

/* True when `needle` is NULL or occurs in `text`. */
static inline int cts_contains(const char *text, const char *needle) {
  return !needle || (text && strstr(text, needle) != NULL);
}

static inline const char *cts_or_empty(const char *s) {
  return s ? s : "";
}

/* The client of the device under test (created by the suite's init fixture). */
extern cubert_client *cts_client;
/* The selector of the device under test: $CUBERT_TEST_DEVICE when it names this binary's
   backend, else CUBERT_CTS_DEVICE (tests/test_device.h). */
const char *cts_device(void);
/* cts_device() with "!private": a device instance no other client shares (cts_client's is the
   shared one). */
const char *cts_private_device(void);
void cts_setup(void);
void cts_teardown(void);

/* A 1-D launch of n units in cubes of `dim`, spread within the device limits. */
cubert_cube_count cts_cubes(uint64_t n, uint32_t dim);
/* Largest cube dim x we use for elementwise launches on this device. */
uint32_t cts_dim(void);
int cts_is_cpu(void);
/* The device under test is an OpenCL device. */
int cts_is_opencl(void);
/* Creates a buffer with `size` bytes of data; asserts success. */
cubert_handle *cts_buffer(const void *data, size_t size);
void cts_read(cubert_handle *h, void *dst, size_t size);

#endif
