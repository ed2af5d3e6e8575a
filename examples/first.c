/* examples/first.c: runs first.cube.c's kernel on the device named by argv[1] ("cpu",
   "opencl", ...; none: $CUBERT_DEVICE, else "cpu"). Exit 0 verified, 1 error, 77 no device. */
#include <cubert/cubert.h>
#include <stdio.h>

extern const cubert_kernel_def saxpy; /* built from first.cube.c by cubert_add_kernels */

int main(int argc, char **argv) {
  enum { N = 1000 };
  static float x[N], y[N];
  for (int i = 0; i < N; ++i) {
    x[i] = (float)i;
    y[i] = 1.0f;
  }

  cubert_client *client = NULL;
  cubert_status s = cubert_client_create(argc > 1 ? argv[1] : NULL, &client);
  if (s) {
    fprintf(stderr, "no device: %s\n", cubert_status_message(s));
    cubert_status_free(s);
    return 77;
  }
  cubert_handle *hx = NULL, *hy = NULL;
  s = cubert_client_create_buffer(client, x, sizeof x, &hx);
  if (!s) s = cubert_client_create_buffer(client, y, sizeof y, &hy);
  if (!s) {
    cubert_handle *buffers[2] = {hx, hy};
    const uint64_t info[1] = {cubert_kernel_info_f32(2.0f)}; /* a = 2 */
    const cubert_kernel_args args = {buffers, 2, info, 1};
    s = cubert_client_launch(client, &saxpy, cubert_cube_count_new_3d((N + 255) / 256, 1, 1),
                             cubert_cube_dim_new_3d(256, 1, 1), &args);
  }
  if (!s) s = cubert_client_read(client, hy, y, sizeof y); /* waits for the kernel */
  int ok = !s && y[N - 1] == 2.0f * (N - 1) + 1.0f;
  if (s) fprintf(stderr, "error: %s\n", cubert_status_message(s));
  printf("%s: y[%d] = %g (expected %g)\n", cubert_client_properties(client)->name, N - 1,
         (double)y[N - 1], 2.0 * (N - 1) + 1.0);
  cubert_status_free(s);
  cubert_handle_release(hx);
  cubert_handle_release(hy);
  cubert_client_release(client);
  return ok ? 0 : 1;
}
