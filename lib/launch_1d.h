/* cubert — 1-D launches (launch_1d.c): a kernel over n units, one per element, in 1-D cubes with
   the cube count spread over x, y, z within the device's limits. Kernels launched this way
   compute the unit id as the linear id and ignore ids >= n. n == 0 queues nothing. */
#ifndef CUBERT_LAUNCH_1D_H
#define CUBERT_LAUNCH_1D_H

#include <stdint.h>

#include "cubert/client.h"
#include "cubert/kernel.h"

/* Cubes of the device's preferred size (256 units, or its largest below that). NOT_FOUND for a
   released client; TOO_MANY_RESOURCES when n needs more than 2^32-1 cubes. */
cubert_status cubert_launch_1d(cubert_client *client, const cubert_kernel_def *kernel, uint64_t n,
                               const cubert_kernel_args *args);

/* The same with cubes of `dim` units (1 <= dim <= the device's limits). */
cubert_status cubert_launch_1d_dim(cubert_client *client, const cubert_kernel_def *kernel,
                                   uint64_t n, uint32_t dim, const cubert_kernel_args *args);

/* As cubert_launch_1d, with the cube dim chosen by autotune (cubert/tune.h; set
   "ops.copy_cube_dim", its name kept from when it lived in kernels/ops so that tuning caches
   stay valid; key: the kernel's name, the anchored n, `rank` and `elem_size`). For kernels whose
   best dim depends on the device and the access pattern (the copy kernels). Tuning runs the
   launch several times on scratch copies of every buffer it binds (the kernel args do not say
   which are only read: one copy per buffer and tuning, tune/scratch.h), so the caller's buffers
   are written once, by the winner's launch. */
cubert_status cubert_launch_1d_tuned(cubert_client *client, const cubert_kernel_def *kernel,
                                     uint64_t n, const cubert_kernel_args *args, uint32_t rank,
                                     uint64_t elem_size);

/* The largest 1-D cube the client's device runs (units per cube and along x), 0 for a released
   client. */
uint32_t cubert_launch_max_dim(const cubert_client *client);

#endif /* CUBERT_LAUNCH_1D_H */
