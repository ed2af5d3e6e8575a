/** @file
   cubert — optional server capability: compiling a kernel ahead of its launch. The core calls
   it for launches in dry run (cubert_client_set_dry_run, lib/dry_run.c). Locking: with the
   device lock held. */
#ifndef CUBERT_SERVER_COMPILER_H
#define CUBERT_SERVER_COMPILER_H

#include "cubert/server.h"

CUBERT_EXTERN_C_BEGIN

/** What a server that compiles kernels (OpenCL: clBuildProgram, its program caches) does for a
   launch that is checked but not run. A server with nothing to compile (the CPU server runs C
   functions linked into the program) leaves `server->compiler` NULL, and a dry-run launch on it
   is the core's validation alone. */
typedef struct cubert_server_compiler {
  /** Everything `launch` (the vtable's) would do for `launch` short of running it: find or
     build the program and kernel for the launch's kernel, mode and cube dim, keep them in the
     server's caches (memory and disk) as a first real launch would, and check the launch
     against the kernel's own limits (units per cube, shared memory, argument count, the cube
     count for a static one), returning the errors launch would return. Queues nothing, reads
     no buffer (a dynamic count is not read) and retains nothing: the launch struct and its
     arrays belong to the caller. Called with the device lock held. */
  cubert_status (*prepare)(cubert_server *server, const cubert_launch *launch);
} cubert_server_compiler;

CUBERT_EXTERN_C_END

#endif /* CUBERT_SERVER_COMPILER_H */
