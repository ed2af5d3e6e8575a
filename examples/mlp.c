/* cubert example: the forward pass of a two-layer perceptron built from the kernel library's
   operations (cubert/ops.h), no kernel of its own:

     h      = relu(x · W1 + b1)          matmul, binary add (b1 broadcast over the rows), unary relu
     p      = softmax(h · W2 + b2)       matmul, binary add, softmax along the last axis
     label  = argmax(p, axis 1)          reduction along an axis

   Every operation is queued on the calling stream and returns at once; only the final reads
   wait. The result is checked against a double-precision host computation of the same network.

   Usage: mlp [device] [BATCH IN HIDDEN OUT]   device: "cpu" (default), "opencl", ...;
                                               default 61 784 128 10
   Exit status: 0 verified, 1 mismatch or error, 77 the device does not exist.

   The first run on a device tunes each operation (measuring its candidates; the choices are
   cached on disk for the next runs). On OpenCL the first call of each operation runs the
   library's known-good choice for the device family at once while a background thread
   measures the candidates (docs/TUNING.md, "Background tuning"); releasing the client at the
   end cancels what is still being measured, which the next run measures again.
   CUBERT_AUTOTUNE=minimal takes the known-good choices without measuring anything
   (docs/BENCHMARKS.md has the times of both).

   Accuracy: the probabilities must be within 1e-4 (absolute) of the host's, a bound far above
   the f32 rounding of sums of a few hundred products of values in [-1, 1] scaled by
   1/sqrt(fan-in); the labels must match wherever the host's two best probabilities differ by
   more than that. */
#include <cubert/cubert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(expr)                                                         \
  do {                                                                      \
    cubert_status s_ = (expr);                                              \
    if (s_) {                                                               \
      fprintf(stderr, "%s failed: %s\n", #expr, cubert_status_message(s_)); \
      cubert_status_free(s_);                                               \
      exit(1);                                                              \
    }                                                                       \
  } while (0)

/* Uniform in [-scale, scale]. */
static void fill(float *v, size_t n, float scale) {
  for (size_t i = 0; i < n; ++i) v[i] = scale * (float)(2.0 * rand() / (double)RAND_MAX - 1.0);
}

/* A row-major f32 tensor of the given shape holding `data` (NULL: uninitialised). */
static cubert_tensor tensor(cubert_client *client, const float *data, uint32_t rank, uint64_t d0,
                            uint64_t d1) {
  cubert_layout_desc desc = {.rank = rank, .shape = {d0, d1}, .dtype = CUBERT_DTYPE_F32};
  cubert_tensor t;
  if (data)
    CHECK(cubert_client_create_tensor(client, data, &desc, &t));
  else
    CHECK(cubert_client_empty_tensor(client, &desc, &t));
  return t;
}

/* The same network on the host, in double: probabilities [batch][out]. */
static void host_forward(const float *x, const float *w1, const float *b1, const float *w2,
                         const float *b2, uint64_t batch, uint64_t in, uint64_t hidden,
                         uint64_t out, double *prob) {
  double *h = malloc(hidden * sizeof(double));
  if (!h) exit(1);
  for (uint64_t r = 0; r < batch; ++r) {
    for (uint64_t j = 0; j < hidden; ++j) {
      double s = b1[j];
      for (uint64_t k = 0; k < in; ++k) s += (double)x[r * in + k] * w1[k * hidden + j];
      h[j] = s > 0 ? s : 0;
    }
    double *p = prob + r * out, mx = -INFINITY, sum = 0;
    for (uint64_t j = 0; j < out; ++j) {
      double s = b2[j];
      for (uint64_t k = 0; k < hidden; ++k) s += h[k] * w2[k * out + j];
      p[j] = s;
      mx = s > mx ? s : mx;
    }
    for (uint64_t j = 0; j < out; ++j) sum += p[j] = exp(p[j] - mx);
    for (uint64_t j = 0; j < out; ++j) p[j] /= sum;
  }
  free(h);
}

int main(int argc, char **argv) {
  const char *device = argc > 1 ? argv[1] : "cpu";
  uint64_t batch = 61, in = 784, hidden = 128, out = 10;
  if (argc > 5) {
    batch = strtoull(argv[2], NULL, 10);
    in = strtoull(argv[3], NULL, 10);
    hidden = strtoull(argv[4], NULL, 10);
    out = strtoull(argv[5], NULL, 10);
  }
  if (!batch || !in || !hidden || !out) {
    fprintf(stderr, "usage: %s [device] [BATCH IN HIDDEN OUT] (all > 0)\n", argv[0]);
    return 1;
  }
  cubert_client *client = NULL;
  cubert_status s = cubert_client_create(device, &client);
  if (s) {
    printf("SKIP: no device \"%s\": %s\n", device, cubert_status_message(s));
    cubert_status_free(s);
    return 77;
  }
  printf("mlp %llu x %llu -> %llu -> %llu on %s\n", (unsigned long long)batch,
         (unsigned long long)in, (unsigned long long)hidden, (unsigned long long)out,
         cubert_client_properties(client)->name);

  float *x = malloc(batch * in * sizeof(float)), *w1 = malloc(in * hidden * sizeof(float));
  float *b1 = malloc(hidden * sizeof(float)), *w2 = malloc(hidden * out * sizeof(float));
  float *b2 = malloc(out * sizeof(float)), *prob = malloc(batch * out * sizeof(float));
  int32_t *label = malloc(batch * sizeof(int32_t));
  double *ref = malloc(batch * out * sizeof(double));
  if (!x || !w1 || !b1 || !w2 || !b2 || !prob || !label || !ref) return 1;
  srand(7);
  fill(x, batch * in, 1.0f);
  fill(w1, in * hidden, 1.0f / sqrtf((float)in));
  fill(b1, hidden, 0.1f);
  fill(w2, hidden * out, 1.0f / sqrtf((float)hidden));
  fill(b2, out, 0.1f);

  cubert_tensor tx = tensor(client, x, 2, batch, in);
  cubert_tensor tw1 = tensor(client, w1, 2, in, hidden);
  cubert_tensor tb1 = tensor(client, b1, 1, hidden, 0);
  cubert_tensor tw2 = tensor(client, w2, 2, hidden, out);
  cubert_tensor tb2 = tensor(client, b2, 1, out, 0);
  cubert_tensor th = tensor(client, NULL, 2, batch, hidden);
  cubert_tensor tz = tensor(client, NULL, 2, batch, out);
  cubert_layout_desc label_desc = {.rank = 1, .shape = {batch}, .dtype = CUBERT_DTYPE_I32};
  cubert_tensor tlabel;
  CHECK(cubert_client_empty_tensor(client, &label_desc, &tlabel));

  /* Layer 1: h = relu(x · W1 + b1), the bias row broadcast over the batch, all in place on h. */
  CHECK(cubert_op_matmul(client, 1.0, &tx, &tw1, 0.0, &th));
  CHECK(cubert_op_binary(client, CUBERT_BINARY_ADD, &th, &tb1, &th));
  CHECK(cubert_op_unary(client, CUBERT_UNARY_RELU, &th, &th));
  /* Layer 2: probabilities = softmax(h · W2 + b2); labels = argmax over the classes. */
  CHECK(cubert_op_matmul(client, 1.0, &th, &tw2, 0.0, &tz));
  CHECK(cubert_op_binary(client, CUBERT_BINARY_ADD, &tz, &tb2, &tz));
  CHECK(cubert_op_softmax(client, &tz, &tz));
  CHECK(cubert_op_reduce(client, CUBERT_REDUCE_ARGMAX, &tz, 1, 0, &tlabel));
  CHECK(cubert_client_read_tensor(client, &tz, prob, batch * out * sizeof(float)));
  CHECK(cubert_client_read_tensor(client, &tlabel, label, batch * sizeof(int32_t)));

  host_forward(x, w1, b1, w2, b2, batch, in, hidden, out, ref);
  const double tol = 1e-4;
  int bad = 0;
  double worst = 0;
  for (uint64_t r = 0; r < batch; ++r) {
    uint64_t best = 0, second = out > 1 ? 1 : 0;
    for (uint64_t j = 0; j < out; ++j) {
      double err = fabs(prob[r * out + j] - ref[r * out + j]);
      worst = err > worst ? err : worst;
      if (err > tol && bad++ < 5)
        fprintf(stderr, "row %llu class %llu: %.7f, host %.7f\n", (unsigned long long)r,
                (unsigned long long)j, prob[r * out + j], ref[r * out + j]);
      if (ref[r * out + j] > ref[r * out + best]) {
        second = best;
        best = j;
      } else if (j != best && ref[r * out + j] > ref[r * out + second]) {
        second = j;
      }
    }
    const int clear = out == 1 || ref[r * out + best] - ref[r * out + second] > tol;
    if (clear && (uint64_t)label[r] != best && bad++ < 5)
      fprintf(stderr, "row %llu: label %d, host %llu\n", (unsigned long long)r, label[r],
              (unsigned long long)best);
  }
  printf("largest probability error %.2e (bound %.0e); labels of row 0..3: %d %d %d %d\n", worst,
         tol, label[0], batch > 1 ? label[1] : -1, batch > 2 ? label[2] : -1,
         batch > 3 ? label[3] : -1);

  cubert_tensor *all[] = {&tx, &tw1, &tb1, &tw2, &tb2, &th, &tz, &tlabel};
  for (size_t i = 0; i < sizeof all / sizeof *all; ++i) cubert_tensor_release(all[i]);
  cubert_client_release(client);
  free(x), free(w1), free(b1), free(w2), free(b2), free(prob), free(label), free(ref);
  printf(bad ? "FAILED: %d mismatches\n" : "verified\n", bad);
  return bad ? 1 : 0;
}
