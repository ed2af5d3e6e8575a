/* cubert conformance suite: entry point and shared fixture. */
#include <stdio.h>

#include "cts.h"
#include "test_device.h"

cubert_client *cts_client;

/* The device under test: CUBERT_TEST_DEVICE when it names this binary's backend (the backend of
   CUBERT_CTS_DEVICE), else CUBERT_CTS_DEVICE (tests/test_device.h). Read again in each test
   process (Criterion runs tests in their own processes); main() has already refused a bad
   value. */
const char *cts_device(void) {
  cubert_test_device_choice c = cubert_test_device(CUBERT_CTS_DEVICE, CUBERT_CTS_DEVICE);
  cr_assert_not_null(c.selector, "%s", c.error);
  return c.selector;
}

const char *cts_private_device(void) {
  static char selector[128];
  snprintf(selector, sizeof selector, "%s!private", cts_device());
  return selector;
}

void cts_setup(void) {
  ASSERT_OK(cubert_client_create(cts_device(), &cts_client));
}

void cts_teardown(void) {
  cubert_client_release(cts_client);
  cts_client = NULL;
}

uint32_t cts_dim(void) {
  const cubert_device_properties *p = cubert_client_properties(cts_client);
  uint32_t d = p->hardware.max_units_per_cube < 256 ? p->hardware.max_units_per_cube : 256;
  return d < p->hardware.max_cube_dim[0] ? d : p->hardware.max_cube_dim[0];
}

int cts_is_opencl(void) {
  return strcmp(cubert_client_properties(cts_client)->backend, "opencl") == 0;
}

int cts_is_cpu(void) {
  return strcmp(cubert_client_properties(cts_client)->backend, "cpu") == 0;
}

cubert_cube_count cts_cubes(uint64_t n, uint32_t dim) {
  cubert_cube_count_selection sel;
  ASSERT_OK(cubert_cube_count_select(cts_client, (uint32_t)((n + dim - 1) / dim), &sel));
  return sel.cube_count;
}

cubert_handle *cts_buffer(const void *data, size_t size) {
  cubert_handle *h = NULL;
  ASSERT_OK(cubert_client_create_buffer(cts_client, data, size, &h));
  return h;
}

void cts_read(cubert_handle *h, void *dst, size_t size) {
  ASSERT_OK(cubert_client_read(cts_client, h, dst, size));
}

int main(int argc, char *argv[]) {
  cubert_test_device_choice device = cubert_test_device(CUBERT_CTS_DEVICE, CUBERT_CTS_DEVICE);
  if (!device.selector) {
    fprintf(stderr, "FAIL: conformance suite for the %s backend: %s\n", CUBERT_CTS_DEVICE,
            device.error);
    return 1;
  }
  /* Skip, visibly, when the default device does not exist here; a device that
     CUBERT_TEST_DEVICE names must exist. */
  cubert_client *probe = NULL;
  cubert_status s = cubert_client_create(device.selector, &probe);
  if (s) {
    if (device.from_env) {
      fprintf(stderr, "FAIL: CUBERT_TEST_DEVICE=\"%s\" cannot be opened: %s\n", device.selector,
              cubert_status_message(s));
      cubert_status_free(s);
      return 1;
    }
    printf("SKIP: conformance suite for \"%s\": %s\n", device.selector, cubert_status_message(s));
    cubert_status_free(s);
    return 77;
  }
  printf("conformance suite on \"%s\"%s: %s\n", device.selector,
         device.from_env ? " (CUBERT_TEST_DEVICE)" : "", cubert_client_properties(probe)->name);
  cubert_client_release(probe);
  struct criterion_test_set *tests = criterion_initialize();
  int result = 0;
  if (criterion_handle_args(argc, argv, true)) result = !criterion_run_all_tests(tests);
  criterion_finalize(tests);
  return result;
}
