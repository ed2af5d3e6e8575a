/* cubert — the OpenCL server's compiler capability (prepare.c): dry-run launches. */
#ifndef CUBERT_OPENCL_PREPARE_H
#define CUBERT_OPENCL_PREPARE_H

#include "cubert/server/compiler.h"

/* The table server.c points `base.compiler` at. */
extern const cubert_server_compiler cubert_ocl_compiler;

#endif
