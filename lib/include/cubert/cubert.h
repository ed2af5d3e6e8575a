/** @file
   cubert — umbrella header: every public header except the interop and MPI ones
   (cubert/cpu.h, cubert/opencl.h, cubert/mpi.h) and the backend contract (cubert/server.h). */
#ifndef CUBERT_H
#define CUBERT_H

#include "cubert/client.h"
#include "cubert/comm.h"
#include "cubert/device.h"
#include "cubert/geometry.h"
#include "cubert/handle.h"
#include "cubert/kernel.h"
#include "cubert/kernel_scalars.h"
#include "cubert/kernels.h"
#include "cubert/layout.h"
#include "cubert/memory.h"
#include "cubert/ops.h"
#include "cubert/pinned.h"
#include "cubert/profile.h"
#include "cubert/program.h"
#include "cubert/status.h"
#include "cubert/stream.h"
#include "cubert/tune.h"

#define CUBERT_VERSION_MAJOR 0        /**< Major version of these headers. */
#define CUBERT_VERSION_MINOR 1        /**< Minor version of these headers. */
#define CUBERT_VERSION_PATCH 0        /**< Patch version of these headers. */
#define CUBERT_VERSION_STRING "0.1.0" /**< "MAJOR.MINOR.PATCH". */

#endif /* CUBERT_H */
