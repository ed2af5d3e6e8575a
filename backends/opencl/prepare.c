/* cubert — the OpenCL server's compiler capability (cubert/server/compiler.h): a launch in dry
   run builds its program and kernel object, as a first launch would, and is checked against
   the kernel's own limits (launch.c's cubert_ocl_launch_kernel, shared with the real launch so
   both return the same errors), and nothing is enqueued.

   The disk cache file is written here, at once, where a real launch leaves it to the next sync
   (disk_cache.c: so that the file holds the code that launch compiled). A dry run compiles no
   more at a sync, and its program may never sync nor close before the process exits (reads
   wait for nothing in dry run), so waiting would only risk losing the file it is run to
   write. What it cannot hold: code a driver compiles at a kernel's first run at a local size
   (PoCL's work-group functions). A program loaded from the disk cache is left as it is. */
#include "opencl/prepare.h"

#include "opencl/disk_cache.h"
#include "opencl/launch.h"
#include "opencl/program.h"
#include "opencl/server.h"

static cubert_status prepare(cubert_server *base, const cubert_launch *launch) {
  cubert_ocl_server *server = cubert_ocl_server_of(base);
  cubert_ocl_kernel *k = NULL;
  CUBERT_RETURN_IF_ERROR(cubert_ocl_launch_kernel(server, launch, &k));
  cubert_ocl_program *program = k->program;
  if (program->disk_key && !program->disk_size) cubert_ocl_disk_refresh(server, program);
  return NULL;
}

const cubert_server_compiler cubert_ocl_compiler = {
    .prepare = prepare,
};
