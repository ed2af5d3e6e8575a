/** @file
   cubert — the client: the thread-safe front of one device.

   Any number of threads may use one client at once. Work submitted from a thread goes to that
   thread's stream (see stream.h) and runs in submission order on it; work on different
   streams runs concurrently, and a buffer written on one stream and used on another is
   always seen complete. Clients are reference counted; handles retain their device.

   Lifetime: like a handle (handle.h), a cubert_client pointer is an opaque token. Every
   function given a released client returns NOT_FOUND (NULL from cubert_client_properties),
   and retain/release of it change nothing, so a double release never touches the device or
   another view. A call in progress holds its own reference: a release on another thread, or
   inside an exclusive()/profile() callback, takes effect when the call returns. */
#ifndef CUBERT_CLIENT_H
#define CUBERT_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#include "cubert/device.h"
#include "cubert/export.h"
#include "cubert/geometry.h"
#include "cubert/handle.h"
#include "cubert/kernel.h"
#include "cubert/layout.h"
#include "cubert/memory.h"
#include "cubert/status.h"

CUBERT_EXTERN_C_BEGIN

/** A client: one view of a device instance (opaque, reference counted). */
typedef struct cubert_client cubert_client;

/* ---- lifetime -------------------------------------------------------------------------- */

/** Creates a client of the selected device.
   Selectors: "cpu" (also "cpu:0"), "opencl" (first GPU, else first device), "opencl:N",
   "opencl:gpu", "opencl:cpu"; NULL means $CUBERT_DEVICE, else "cpu".
   One device, one instance: every client whose selector resolves to the same device ("cpu",
   "cpu:0" and NULL with $CUBERT_DEVICE unset; "opencl" and "opencl:0" when device 0 is the
   first GPU) shares one device instance: its server (the CPU server's worker pool, the OpenCL
   context and queues), memory pools, streams, profiles and autotune state. A handle is valid
   on every client of its instance, and the instance lives while any client or handle of it
   does (the next client after that opens it anew).
   A "!private" suffix ("cpu!private", "opencl:1!private"; "!private" alone: the default
   device) opens an instance of its own that no other client shares, for isolation (tests
   that count memory, install pools or profile). Handles never cross instances: a handle of
   another instance is NOT_FOUND ("belongs to another device instance"); use
   cubert_client_to_client to copy it over.
   Errors: INVALID_ARGUMENT for an empty selector ("", "opencl:", ":0") or an unknown option
   ("cpu!shared"); NOT_FOUND for an unknown selector or device index (the message lists the
   valid ones); UNAVAILABLE when the backend was not built or has no device. */
CUBERT_API cubert_status cubert_client_create(const char *device_selector, cubert_client **out);
/** Adds a reference. Accepts NULL; returns its argument. */
CUBERT_API cubert_client *cubert_client_retain(cubert_client *client);
/** Drops a reference; the device is destroyed (after its work finished) when the last client
   view and handle are gone. Accepts NULL and released clients (no effect). */
CUBERT_API void cubert_client_release(cubert_client *client);
/** Device properties; valid while the device lives (any client view or handle of it).
   NULL for NULL or a released client. */
CUBERT_API const cubert_device_properties *cubert_client_properties(const cubert_client *client);

/* ---- buffers ----------------------------------------------------------------------------- */

/** New buffer of `size` bytes holding a copy of `data`. The copy is taken before returning.
   Errors: INVALID_ARGUMENT (NULL data with size > 0), BUFFER_TOO_BIG (no pool accepts the
   size), OUT_OF_MEMORY of kind IO (the device/host allocation failed after one cleanup and
   retry), NOT_FOUND (released client). */
CUBERT_API cubert_status cubert_client_create_buffer(cubert_client *client, const void *data,
                                                     size_t size, cubert_handle **out);
/** New uninitialised buffer of `size` bytes. Errors as create_buffer. */
CUBERT_API cubert_status cubert_client_empty(cubert_client *client, size_t size,
                                             cubert_handle **out);
/** Copies the first `size` bytes of the buffer to `dst`, after all work on the calling stream
   (and any stream that wrote the buffer) finished. Blocks.
   Errors: NOT_FOUND (released or foreign handle), INVALID_ARGUMENT (size larger than the
   handle: the message names both), SERVER_UNHEALTHY (an asynchronous error on the stream;
   `dst` is then not written). */
CUBERT_API cubert_status cubert_client_read(cubert_client *client, cubert_handle *handle, void *dst,
                                            size_t size);
/** Reads bytes [offset, offset+size) of the buffer. */
CUBERT_API cubert_status cubert_client_read_range(cubert_client *client, cubert_handle *handle,
                                                  uint64_t offset, void *dst, size_t size);
/** Writes `size` bytes at `offset` of the buffer, ordered after earlier work on the stream.
   The source is copied (or consumed) before returning. */
CUBERT_API cubert_status cubert_client_write(cubert_client *client, cubert_handle *handle,
                                             uint64_t offset, const void *src, size_t size);

/* ---- tensors ----------------------------------------------------------------------------- */

/** A tensor: a handle with its layout. Owns one reference to `handle` when it was created by
   the calls below; a view (cubert/ops.h: any struct naming a handle with its own shape, strides
   and offset, e.g. a transpose) may borrow the handle instead and is then not released.
   Element (i0, .., ir-1) lives at element offset + sum(i_d * strides[d]) of the handle. */
typedef struct cubert_tensor {
  cubert_handle *handle;             /**< the memory (owned or borrowed, see above) */
  uint32_t rank;                     /**< dimensions in use, 0..CUBERT_MAX_RANK */
  uint64_t shape[CUBERT_MAX_RANK];   /**< elements */
  uint64_t strides[CUBERT_MAX_RANK]; /**< elements; 0 broadcasts a dimension (inputs only) */
  uint64_t elem_size;                /**< bytes */
  cubert_dtype dtype;                /**< element type; NONE for untyped data */
  uint64_t offset;                   /**< elements from the start of the handle (views) */
} cubert_tensor;
/* In C, the calls that take tensors (cubert_copy_desc_from_tensor and the operations of
   cubert/ops.h) are also macros that pass each tensor argument through CUBERT_TENSOR_ARG_:
   a cubert_tensor pointer (or NULL) goes through unchanged, anything else (a cubert_copy_desc
   above all, which has a similar shape) is a compile error that says so.
   Every such macro takes its arguments as `...`, so that any expression a function call takes
   compiles: the preprocessor splits a compound literal such as `(uint32_t[2]){1, 0}` at its
   comma (it knows parentheses, not braces), which a macro of named parameters refused ("passed
   4 arguments, but takes just 3"). CUBERT_TYPED_CALL_(n, checked, fn, ...) is checked(...)
   when the preprocessor sees exactly the n arguments of the function, and the plain call
   fn(...) otherwise, whose arguments the compiler then checks against the prototype (an
   incompatible pointer is a warning there, an error with -Werror). */
#ifndef __cplusplus
#define CUBERT_TENSOR_ARG_(...) \
  _Generic((__VA_ARGS__), cubert_tensor *         \
           : (__VA_ARGS__), const cubert_tensor * \
           : (__VA_ARGS__), void *                \
           : (__VA_ARGS__), default               \
           : cubert_not_a_tensor_())
#define CUBERT_TYPED_CALL_(n, checked, fn, ...) \
  CUBERT_TYPED_PICK_(CUBERT_ARGS_ARE_##n##_(__VA_ARGS__), checked, fn)(__VA_ARGS__)
#define CUBERT_TYPED_PICK_(is_n, checked, fn) CUBERT_TYPED_PICK2_(is_n, checked, fn)
#define CUBERT_TYPED_PICK2_(is_n, checked, fn) CUBERT_TYPED_IF##is_n##_(checked, fn)
#define CUBERT_TYPED_IF1_(checked, fn) checked
#define CUBERT_TYPED_IF0_(checked, fn) fn
/* CUBERT_ARGS_ARE_n_(...): 1 when ... is exactly n arguments, else 0 (any number of them): the
   (n+1)-th of `..., CUBERT_ARGS_END_()` is the end marker only then, and only the marker
   expands to two items, the second 1. */
#define CUBERT_ARGS_ARE_2_(...) \
  CUBERT_ARGS_PROBE_(CUBERT_ARG3_(__VA_ARGS__, CUBERT_ARGS_END_(), ~, ~))
#define CUBERT_ARGS_ARE_3_(...) \
  CUBERT_ARGS_PROBE_(CUBERT_ARG4_(__VA_ARGS__, CUBERT_ARGS_END_(), ~, ~))
#define CUBERT_ARGS_ARE_4_(...) \
  CUBERT_ARGS_PROBE_(CUBERT_ARG5_(__VA_ARGS__, CUBERT_ARGS_END_(), ~, ~))
#define CUBERT_ARGS_ARE_5_(...) \
  CUBERT_ARGS_PROBE_(CUBERT_ARG6_(__VA_ARGS__, CUBERT_ARGS_END_(), ~, ~))
#define CUBERT_ARGS_ARE_6_(...) \
  CUBERT_ARGS_PROBE_(CUBERT_ARG7_(__VA_ARGS__, CUBERT_ARGS_END_(), ~, ~))
#define CUBERT_ARG3_(a, b, c, ...) c
#define CUBERT_ARG4_(a, b, c, d, ...) d
#define CUBERT_ARG5_(a, b, c, d, e, ...) e
#define CUBERT_ARG6_(a, b, c, d, e, f, ...) f
#define CUBERT_ARG7_(a, b, c, d, e, f, g, ...) g
#define CUBERT_ARGS_END_() ~, 1
#define CUBERT_ARGS_PROBE_(...) CUBERT_ARGS_SECOND_(__VA_ARGS__, 0, ~)
#define CUBERT_ARGS_SECOND_(a, b, ...) b
#if defined(__GNUC__) || defined(__clang__)
__attribute__((
    error("this argument must be a cubert_tensor * (a cubert_copy_desc describes a "
          "region for cubert_client_read_tensor / write_tensor only)")))
#endif
const cubert_tensor *
cubert_not_a_tensor_(void);
#endif

/** Releases the tensor's handle and clears it. Accepts NULL. */
CUBERT_API void cubert_tensor_release(cubert_tensor *tensor);

/** @{ */
/** Allocates tensors laid out by `descs` (several share one allocation, each at an aligned
   offset; optimized layouts are pitched on devices that prefer it). `data` may be NULL
   (empty tensors) or hold `count` pointers to contiguous row-major data (a NULL entry leaves
   that tensor uninitialised). cubert_client_create_tensor is the form for one tensor,
   cubert_client_empty_tensor(s) the forms without data. Errors: INVALID_ARGUMENT for NULL
   descs or out and count 0, the layout's (cubert_layout_plan), the allocation's and the
   upload's (cubert_client_empty, cubert_client_write); on error no tensor is left allocated. */
CUBERT_API cubert_status cubert_client_create_tensors(cubert_client *client,
                                                      const void *const *data,
                                                      const cubert_layout_desc *descs, size_t count,
                                                      cubert_tensor *out);
CUBERT_API cubert_status cubert_client_create_tensor(cubert_client *client, const void *data,
                                                     const cubert_layout_desc *desc,
                                                     cubert_tensor *out);
CUBERT_API cubert_status cubert_client_empty_tensor(cubert_client *client,
                                                    const cubert_layout_desc *desc,
                                                    cubert_tensor *out);
CUBERT_API cubert_status cubert_client_empty_tensors(cubert_client *client,
                                                     const cubert_layout_desc *descs, size_t count,
                                                     cubert_tensor *out);
/** @} */

/** Describes a strided region to read or write (reference CopyDescriptor). Strides in
   elements. Element (i0, .., ir-1) lives at element offset + sum(i_d * strides[d]) of the
   handle, as for a cubert_tensor. */
typedef struct cubert_copy_desc {
  cubert_handle *handle;             /**< the memory (borrowed) */
  uint32_t rank;                     /**< dimensions in use, 0..CUBERT_MAX_RANK */
  uint64_t shape[CUBERT_MAX_RANK];   /**< elements */
  uint64_t strides[CUBERT_MAX_RANK]; /**< elements */
  uint64_t elem_size;                /**< bytes */
  uint64_t offset; /**< elements from the start of the handle (0 unless describing a view) */
} cubert_copy_desc;
/** *out = the region `tensor` covers (handle, rank, shape, strides, elem_size, offset). No
   reference is taken: the descriptor borrows the tensor's handle. INVALID_ARGUMENT for NULL
   arguments, a NULL tensor->handle or tensor->rank above CUBERT_MAX_RANK. */
CUBERT_API cubert_status(cubert_copy_desc_from_tensor)(const cubert_tensor *tensor,
                                                       cubert_copy_desc *out);
/// @cond CUBERT_TYPE_CHECK_MACROS
#ifndef __cplusplus
#define cubert_copy_desc_from_tensor(...) \
  CUBERT_TYPED_CALL_(2, CUBERT_COPY_DESC_FROM_TENSOR_, (cubert_copy_desc_from_tensor), __VA_ARGS__)
#define CUBERT_COPY_DESC_FROM_TENSOR_(tensor, out) \
  (cubert_copy_desc_from_tensor)(CUBERT_TENSOR_ARG_(tensor), (out))
#endif
/// @endcond
/** Reads a strided tensor into `dst` as contiguous row-major data (dst_size must be
   product(shape) * elem_size). Uses the strided-copy kernel on the device.
   Errors: UNSUPPORTED_STRIDES (a zero stride on a dimension longer than 1: a copy cannot
   broadcast), INVALID_ARGUMENT (sizes; strides that reach past the handle, or whose extent
   overflows 64 bits: the message names the dimension), NOT_FOUND, SERVER_UNHEALTHY. */
CUBERT_API cubert_status(cubert_client_read_tensor)(cubert_client *client,
                                                    const cubert_copy_desc *desc, void *dst,
                                                    size_t dst_size);
/** The inverse of read_tensor: writes contiguous row-major `src` (src_size must be
   product(shape) * elem_size bytes) into the strided region `desc` describes, ordered after
   earlier work on the calling stream (and on any stream that used the handle), as
   cubert_client_write. Elements of the handle outside the region keep their values. `src` is
   consumed before the call returns. A contiguous region is one write; any other goes through a
   device copy from a scratch buffer (cubert_op_copy, any elem_size). A region whose strides
   put two coordinates on one element (overlap) gets one of their values, unspecified which.
   Errors: as read_tensor (naming desc->..., src_size), INVALID_ARGUMENT for NULL src with
   src_size > 0. */
CUBERT_API cubert_status(cubert_client_write_tensor)(cubert_client *client,
                                                     const cubert_copy_desc *desc, const void *src,
                                                     size_t src_size);

/** cubert_client_read_tensor for a tensor or any view of one (cubert/ops.h: permuted, sliced,
    at an offset): the region is the tensor's (cubert_copy_desc_from_tensor). In C,
    cubert_client_read_tensor(client, &tensor, ...) calls this. */
CUBERT_API cubert_status cubert_client_read_tensor_view(cubert_client *client,
                                                        const cubert_tensor *tensor, void *dst,
                                                        size_t dst_size);
/** cubert_client_write_tensor for a tensor or any view of one; in C,
    cubert_client_write_tensor(client, &tensor, ...) calls this. */
CUBERT_API cubert_status cubert_client_write_tensor_view(cubert_client *client,
                                                         const cubert_tensor *tensor,
                                                         const void *src, size_t src_size);

/** @def cubert_client_read_tensor(client, src, dst, dst_size)
    Reads a tensor (`src` a `cubert_tensor *`: cubert_client_read_tensor_view) or a copy
    descriptor's region (`src` a `cubert_copy_desc *`: the function above) into contiguous
    row-major `dst`. Any other `src` type is a compile error.
    @def cubert_client_write_tensor(client, dst, src, src_size)
    Writes contiguous row-major `src` into a tensor (cubert_client_write_tensor_view) or a copy
    descriptor's region (the function above). Any other `dst` type is a compile error. */
/* In C, cubert_client_read_tensor and cubert_client_write_tensor take either a tensor or a copy
   descriptor (pointers to either, or NULL) and pick the call above that fits:
     cubert_client_read_tensor(client, &tensor, dst, size);   (the usual form)
     cubert_client_read_tensor(client, &desc, dst, size);
   Any other argument is a compile error naming the call, not a run-time error about bytes past
   the handle. (C++ has no _Generic: call the _view functions or pass a descriptor.) The
   functions themselves stay callable as (cubert_client_read_tensor)(...).
   The macros take `...` and pick the function by the type of the second argument alone, so a
   compound literal with commas among the data or size arguments compiles, e.g.
     cubert_client_write_tensor(client, &tensor, (float[2]){1, 2}, 8);
   The first two arguments must reach the preprocessor whole (the second's type picks the
   function): write a tensor or descriptor that is itself a compound literal with commas in
   parentheses, or as a variable. No C11 form can take
   it otherwise: the pieces of a split literal cannot be counted back into arguments (the
   preprocessor does not know braces), and the constructs the C parser splits correctly (a call,
   an initialiser) need the parameter types the choice is about (docs/OPS.md). */
#ifndef __cplusplus
#define cubert_client_read_tensor(...)                                                           \
  CUBERT_TENSOR_IO_FN_(cubert_client_read_tensor_view, (cubert_client_read_tensor), __VA_ARGS__) \
  (__VA_ARGS__)
#define cubert_client_write_tensor(...)                                                            \
  CUBERT_TENSOR_IO_FN_(cubert_client_write_tensor_view, (cubert_client_write_tensor), __VA_ARGS__) \
  (__VA_ARGS__)
/* The function of a read or write whose second argument is `x`: `view_fn` for a tensor, else
   CUBERT_COPY_DESC_FN_. */
#define CUBERT_TENSOR_IO_FN_(view_fn, desc_fn, client, x, ...) \
  _Generic((x), cubert_tensor *                                  \
           : view_fn, const cubert_tensor *                      \
           : view_fn, default                                    \
           : CUBERT_COPY_DESC_FN_(desc_fn, x))
/* The descriptor form `fn`, or a call that does not compile: a function declared with
   GCC/clang's error attribute, whose message names what the argument must be. */
#define CUBERT_COPY_DESC_FN_(fn, ...) \
  _Generic((__VA_ARGS__), cubert_copy_desc *                                             \
           : fn, const cubert_copy_desc *                                    \
           : fn, void *                                                      \
           : fn, default                                                     \
           : cubert_not_a_tensor_or_copy_desc_)
#if defined(__GNUC__) || defined(__clang__)
__attribute__((
    error("cubert_client_read_tensor / cubert_client_write_tensor: the second argument "
          "must be a cubert_tensor * or a cubert_copy_desc *")))
#endif
cubert_status
cubert_not_a_tensor_or_copy_desc_(cubert_client *client, const void *x, const void *data,
                                  size_t size);
#endif

/* ---- asynchronous reads ------------------------------------------------------------------ */

/** A pending asynchronous read or sync (opaque; a plain heap object, see
   cubert_future_release). */
typedef struct cubert_future cubert_future;
/** Queues a read of the first `size` bytes of the buffer into `dst` on the calling stream, after
   the stream's earlier work and after any other stream's last use of the buffer, and returns at
   once, on every server (the CPU server copies when the read reaches the head of the stream's
   queue, on the thread that finished the command before it). `dst` must stay valid, and must
   not be read, until the future completed (cubert_future_wait, or cubert_future_poll setting
   *out_ready). The handle may be released before that. Work submitted to the stream after the
   call runs after the read. Errors (returned at once, nothing queued): as cubert_client_read
   (INVALID_ARGUMENT naming dst or the size, NOT_FOUND); asynchronous errors of the stream are
   returned by cubert_future_wait, and `dst` is then not written. */
CUBERT_API cubert_status cubert_client_read_async(cubert_client *client, cubert_handle *handle,
                                                  void *dst, size_t size, cubert_future **out);
/** Reads of several buffers with one future (the reference's read_async of many bindings):
   the first sizes[k] bytes of handles[k] into dsts[k], for k < count, queued in order on the
   calling stream as cubert_client_read_async. count 0 gives a future that is already complete
   (its wait still returns the stream's asynchronous errors). All arguments are checked before
   anything is queued: INVALID_ARGUMENT naming the array element (handles[k] NULL, dsts[k] NULL
   with sizes[k] > 0, sizes[k] past the end of handles[k]) or NULL arrays with count > 0,
   NOT_FOUND for a released or foreign handles[k]. */
CUBERT_API cubert_status cubert_client_read_many_async(cubert_client *client, size_t count,
                                                       cubert_handle *const *handles,
                                                       void *const *dsts, const size_t *sizes,
                                                       cubert_future **out);
/** Reads bytes [offset, offset+size) of the buffer into `dst` as cubert_client_read_async does,
   without a view of the range (the asynchronous form of cubert_client_read_range).
   Errors (returned at once, nothing queued): INVALID_ARGUMENT for NULL out, NULL dst with
   size > 0, or a range past the end of the handle (naming size, offset and the handle's size);
   NOT_FOUND for a released or foreign handle. */
CUBERT_API cubert_status cubert_client_read_range_async(cubert_client *client,
                                                        cubert_handle *handle, uint64_t offset,
                                                        void *dst, size_t size,
                                                        cubert_future **out);
/** The asynchronous form of cubert_client_read_tensor (the reference's read_one_tensor_async):
   queues the read of the region `desc` describes into contiguous row-major `dst` (dst_size =
   product(shape) * elem_size) on the calling stream and returns a future. A contiguous region
   is one read of its bytes; any other (pitched rows, a permutation, an offset) is first
   gathered on the device into a scratch buffer, which the future frees once the read
   completed. `dst` follows cubert_client_read_async's rules; desc->handle may be released
   after the call. The first strided read of a shape may tune the gather kernel first (a few
   launches measured once per device and shape, docs/TUNING.md). Errors (at once, nothing left
   queued): those of cubert_client_read_tensor (UNSUPPORTED_STRIDES, INVALID_ARGUMENT naming
   desc->... or dst_size, NOT_FOUND), INVALID_ARGUMENT for NULL out, and the scratch
   buffer's (OUT_OF_MEMORY of kind IO); the stream's asynchronous errors come from
   cubert_future_wait. */
CUBERT_API cubert_status cubert_client_read_tensor_async(cubert_client *client,
                                                         const cubert_copy_desc *desc, void *dst,
                                                         size_t dst_size, cubert_future **out);
/** cubert_client_read_tensor_async for a tensor or any view of one (the region of
   cubert_copy_desc_from_tensor). */
CUBERT_API cubert_status cubert_client_read_tensor_view_async(cubert_client *client,
                                                              const cubert_tensor *tensor,
                                                              void *dst, size_t dst_size,
                                                              cubert_future **out);
/** Several regions with one future (the reference's read_tensor_async): descs[k] into dsts[k]
   of dst_sizes[k] bytes, for k < count, queued in order on the calling stream. Every argument is
   checked before anything is queued; errors name the element ("descs[2]: desc->strides[1] is
   0 ..."), and NULL arrays with count > 0 are INVALID_ARGUMENT. count 0 gives a complete
   future. */
CUBERT_API cubert_status cubert_client_read_tensors_async(cubert_client *client, size_t count,
                                                          const cubert_copy_desc *descs,
                                                          void *const *dsts,
                                                          const size_t *dst_sizes,
                                                          cubert_future **out);
/** Blocks until every read of the future completed; returns their result (once; later calls
   return NULL): NULL, or SERVER_UNHEALTHY with the stream's asynchronous errors. */
CUBERT_API cubert_status cubert_future_wait(cubert_future *future);
/** Sets *out_ready to 1 when every read completed (the data is in place), else 0. Never blocks.
   The result is still collected by cubert_future_wait (or release). */
CUBERT_API cubert_status cubert_future_poll(cubert_future *future, int *out_ready);
/** Waits if needed, then frees. Accepts NULL. A future is a plain heap object, unlike clients
   and handles: using or releasing it again afterwards is undefined (C cannot detect it). */
CUBERT_API void cubert_future_release(cubert_future *future);

/* ---- data between devices ------------------------------------------------------------------- */

/** *out = a new handle of dst_client's device holding a copy of the bytes of `src`, a handle of
   src_client's device (to_client). Stream-ordered on both sides: the copy reads `src` after the
   work queued so far on src_client's calling stream and after any other stream's last write
   of it, and work queued on dst_client's calling stream after the call sees the copy. Paths:
   - one device instance (src_client and dst_client of one device): a device-side copy queued
     on dst_client's stream; the call returns at once.
   - CPU server and another device (an OpenCL GPU, a host-unified OpenCL device such as PoCL,
     a private CPU instance): one direct copy between the CPU server's memory and the other
     device (an OpenCL GPU stages it through its pinned buffers). Blocks until the bytes moved
     (for a CPU source: until its pending writes finished).
   - two OpenCL devices (each in its own context): a pipeline through pinned host memory of
     the source device in 8 MiB chunks, the source's reads of the next chunks in flight while
     a chunk is written to the destination. Returns when the last chunk's write was queued.
   src_client and dst_client may be the same client. A size of 0 gives an empty handle.
   Errors name both devices ("to_client from 'opencl:0 (NVIDIA H200)' to 'cpu:0 (...)': ..."):
   INVALID_ARGUMENT for NULL out or src; NOT_FOUND for a released client or src, or a src of
   another device instance than src_client's (naming its device); the errors of the reads and
   writes (SERVER_UNHEALTHY with src's stream errors, OUT_OF_MEMORY of kind IO for the new
   buffer). On error *out is NULL and the new buffer was released. */
CUBERT_API cubert_status cubert_client_to_client(cubert_client *src_client, cubert_handle *src,
                                                 cubert_client *dst_client, cubert_handle **out);
/** As to_client, for bytes [offset, offset+size) of `src` (INVALID_ARGUMENT, naming both, when
   they go past its end). */
CUBERT_API cubert_status cubert_client_to_client_range(cubert_client *src_client,
                                                       cubert_handle *src, uint64_t offset,
                                                       uint64_t size, cubert_client *dst_client,
                                                       cubert_handle **out);

/* ---- launches ---------------------------------------------------------------------------- */

/** Launches `kernel` over `count` cubes of `dim` units on the calling stream (checked mode).
   Validation before anything is queued: cube dim against max_cube_dim (CUBE_DIM), units per
   cube against max_units_per_cube (UNITS), shared memory (SHARED_MEMORY), zero dims
   (INVALID_ARGUMENT), handles (NOT_FOUND). A zero cube count is a no-op. A kernel without an
   implementation for the device's backend is COMPILATION naming kernel and backend. In dry run
   (cubert_client_set_dry_run) the same checks, then the kernel is compiled and nothing queued. */
CUBERT_API cubert_status cubert_client_launch(cubert_client *client,
                                              const cubert_kernel_def *kernel,
                                              cubert_cube_count count, cubert_cube_dim dim,
                                              const cubert_kernel_args *args);
/** As launch, with kernels compiled without bound checks (the device's limits are still
   enforced; the caller guarantees in-bounds accesses). */
CUBERT_API cubert_status cubert_client_launch_unchecked(cubert_client *client,
                                                        const cubert_kernel_def *kernel,
                                                        cubert_cube_count count,
                                                        cubert_cube_dim dim,
                                                        const cubert_kernel_args *args);
/** How a launch runs, beyond its arguments; valid when zeroed (a checked launch without dynamic
   shared memory). */
typedef struct cubert_launch_options {
  cubert_execution_mode mode; /**< CUBERT_EXECUTION_CHECKED (0), _VALIDATE or _UNCHECKED */
  /** Bytes per cube of the kernel's dynamic shared array, a kernel-language
     `(dynamic_shared, T, name)` entry (docs/kernels.md): whole elements of T; 0 for a kernel
     without one (INVALID_ARGUMENT otherwise). With the static shared struct (rounded up to
     CUBERT_DYNAMIC_SHARED_ALIGN) it must fit the device's shared memory per cube
     (SHARED_MEMORY naming the kernel, the size and the limit; on OpenCL also against
     CL_DEVICE_LOCAL_MEM_SIZE with the compiled kernel's static local memory). */
  uint64_t dynamic_shared_bytes;
} cubert_launch_options;
/** As launch, with `options` (NULL: all zero). Kernels with named scalars (kernel_scalars.h)
   need at least one info word per scalar (INVALID_ARGUMENT naming them). */
CUBERT_API cubert_status cubert_client_launch_with(cubert_client *client,
                                                   const cubert_kernel_def *kernel,
                                                   cubert_cube_count count, cubert_cube_dim dim,
                                                   const cubert_kernel_args *args,
                                                   const cubert_launch_options *options);
/** As launch, in an explicit execution mode; INVALID_ARGUMENT for a mode out of the enum. */
CUBERT_API cubert_status cubert_client_launch_mode(cubert_client *client,
                                                   const cubert_kernel_def *kernel,
                                                   cubert_cube_count count, cubert_cube_dim dim,
                                                   const cubert_kernel_args *args,
                                                   cubert_execution_mode mode);

/* ---- dry run ----------------------------------------------------------------------------- */

/** Enters (on != 0) or leaves (0) dry run on this client view (cubecl's dry_run, newer than the
   seed files): every launch is checked and its kernel compiled and cached, and nothing runs but
   autotune's measurements. The way to warm the caches on a build machine before shipping them
   (`cubert-info --export-caches`), and to check a program's launches without running them. Also
   entered by every client created while CUBERT_DRY_RUN=1, so an unmodified program can warm
   caches.
   What each call does in dry run:
   - launches (launch, launch_unchecked, launch_mode, and the operations of cubert/ops.h and the
     kernel library, which launch through them): every check of a real launch, with the same
     errors (cube dim, units, shared memory, cube count, bindings, handles, a kernel-language
     kernel's declared buffers, the mode); then the server compiles the kernel for the launch's
     execution mode and keeps it in its caches as a first real launch would (the OpenCL server:
     the program built, or loaded from its disk cache, and the disk cache file written at once;
     COMPILATION with the build log, and the kernel's own limits on units per cube and shared
     memory, as at a real launch). Nothing is queued: no buffer changes, no stream waits. Errors
     that only running finds are not seen: a dynamic cube count's value, validate-mode
     violations, a driver's refusal at enqueue time. A zero cube count is a no-op, as always.
     Some drivers (PoCL) compile part of a kernel only when it first runs at a cube dim: that part
     is not in the cache a dry run writes.
   - buffers: create_buffer, empty, write, the tensor forms, to_client, the collectives of
     cubert/comm.h and the memory calls work as usual, so later launches are checked against
     real handles, and every byte they write lands: write_tensor through a strided, permuted
     or pitched region runs its device copy (part of the write, not a launch of the caller's),
     and to_client copies between device instances too (its reads of src are part of the
     copy). A buffer's content after a launch in dry run is what it was before.
   - reads (read, read_range, read_tensor and every asynchronous form): the arguments are
     checked as usual (same errors), then `dst` is filled with zeros (nothing ran whose result
     could be read; zeros keep loops over results finite); no wait, and a future is complete at
     once. Errors of earlier real work on the stream stay queued for the next flush or sync.
   - flush, sync, sync_all: as usual (they wait for work queued before entering dry run and
     return its errors).
   - autotune (cubert/tune.h): measurements run for real, as in the reference (its RealRun): a
     key without a decision is tuned on the device as usual (its candidates compiled, run and
     timed) and the decision cached in memory and on disk, so the caches a dry run warms hold
     the tuning too; then the operation's launch of the winner is dry. An operation tuned in dry
     run may so leave its output written by the measurements. A key already decided (and
     CUBERT_AUTOTUNE=off) runs nothing.
   - profiles (cubert/profile.h) of dry-run launches see no device work.
   The mode belongs to this view: other clients of the same device instance are not affected; a
   view made by cubert_client_with_stream starts in the mode of the client it came from. Leaving
   dry run needs nothing: every handle, stream and cache stays usable, and a real launch of a
   kernel compiled in dry run finds it built. Thread-safe; launches already in progress on other
   threads finish in the mode they started in.
   Errors: INVALID_ARGUMENT (NULL client), NOT_FOUND (released client). */
CUBERT_API cubert_status cubert_client_set_dry_run(cubert_client *client, int on);
/** 1 while the client view is in dry run (cubert_client_set_dry_run), else 0 (also for NULL or a
   released client). Thread-safe. */
CUBERT_API int cubert_client_dry_run(const cubert_client *client);

/* ---- synchronisation --------------------------------------------------------------------- */

/** Submits the calling stream's queued work without waiting. Returns SERVER_UNHEALTHY if
   errors were raised asynchronously on the stream since they were last returned. */
CUBERT_API cubert_status cubert_client_flush(cubert_client *client);
/** Waits for all work of the calling stream. SERVER_UNHEALTHY as flush. */
CUBERT_API cubert_status cubert_client_sync(cubert_client *client);
/** Waits for every stream of the client; returns the errors of all of them. */
CUBERT_API cubert_status cubert_client_sync_all(cubert_client *client);
/** The non-blocking form of cubert_client_sync (the reference's sync(), which returns a
   future): submits the calling stream's queued work, as cubert_client_flush, and returns at once
   a future that completes when all of it has run. cubert_future_wait returns what
   cubert_client_sync would have (NULL, or SERVER_UNHEALTHY with the stream's asynchronous
   errors, which the wait then has taken) and, under CUBERT_PROFILE=basic or higher, logs the
   profile summary as the sync does; cubert_future_poll never blocks. Work submitted after the
   call is not waited for. Errors (at once): INVALID_ARGUMENT (NULL out), NOT_FOUND (released
   client), OUT_OF_MEMORY. */
CUBERT_API cubert_status cubert_client_sync_async(cubert_client *client, cubert_future **out);

/* ---- memory ------------------------------------------------------------------------------ */

/** Usage summed over all streams. Callable from any thread. */
CUBERT_API cubert_status cubert_client_memory_usage(cubert_client *client,
                                                    cubert_memory_usage *out);
/** Per-pool report of the calling stream's memory: every pool of the installed layout, then
   the persistent pool (CUBERT_MAX_POOLS holds the largest layout). */
CUBERT_API cubert_status cubert_client_memory_report(cubert_client *client,
                                                     cubert_memory_report *out);
/** Returns every free page of every stream to the device. */
CUBERT_API cubert_status cubert_client_memory_cleanup(cubert_client *client);
/** Enters (PERSISTENT) or leaves (AUTO) a persistent allocation window on the calling stream.
   Windows nest. INVALID_ARGUMENT for a mode out of the enum and for AUTO without an open
   window on the stream. */
CUBERT_API cubert_status cubert_client_allocation_mode(cubert_client *client,
                                                       cubert_allocation_mode mode);
/** The persistent bracket as one call (the reference's memory_persistent_allocation): enters a
   persistent allocation window on the calling stream, runs `task(client, arg)`, and leaves the
   window whether the task succeeded or not, so buffers the task creates on this stream come
   from the exact-size persistent pool. Returns the task's status (the window is left first);
   the error of entering or leaving when the task succeeded. INVALID_ARGUMENT for a NULL task;
   the errors of cubert_client_allocation_mode. Windows nest, so a task may call it again. */
CUBERT_API cubert_status cubert_client_memory_persistent(
    cubert_client *client, cubert_status (*task)(cubert_client *client, void *arg), void *arg);
/** Replaces the pool layout of every stream (and of streams created later), all or nothing:
   on any error every stream keeps its pools and later streams the previous layout.
   POOLS_IN_USE when a pool of any stream still holds a live allocation (a 0-byte buffer
   counts), naming the stream, and nothing is installed; OUT_OF_MEMORY; the layout's own
   errors (EMPTY_POOL_LIST, ZERO_SIZE, SLICE_LARGER_THAN_PAGE, CAP_SMALLER_THAN_PAGE,
   TOO_MANY_PAGES, TOO_MANY_POOLS). */
CUBERT_API cubert_status cubert_client_install_memory_pools(cubert_client *client,
                                                            const cubert_memory_config *config);

/* ---- exclusive access -------------------------------------------------------------------- */

/** A callback run by cubert_client_exclusive and cubert_client_profile (profile.h). */
typedef cubert_status (*cubert_client_fn)(cubert_client *client, void *user);
/** Runs fn(client, user) while no other thread can use the device. Re-entrant from the
   holding thread. Returns fn's status (fn may make its own with cubert_status_make). fn may
   release the client, even its last reference: the client stays usable until fn returns. */
CUBERT_API cubert_status cubert_client_exclusive(cubert_client *client, cubert_client_fn fn,
                                                 void *user);

CUBERT_EXTERN_C_END

#endif /* CUBERT_CLIENT_H */
