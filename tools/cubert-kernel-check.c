/* cubert-kernel-check — builds flattened kernel-language files (the <id>.cl files that
   cubert_add_kernels writes under <build>/cubert_kernels/) with an OpenCL compiler, in every
   execution mode, and prints the build log of any that fails. The build and CI run it over every
   kernel of the library and the tests, so an OpenCL-only mistake (something C accepts and
   OpenCL C does not) fails the build's tests with the kernel file's name and line, not a user's
   first launch.

     cubert-kernel-check [--device=N] [--quick] [--options=S] [--log] [--binary=DIR] FILE.cl...

   The device is the N-th OpenCL device in platform order (default 0: the first, PoCL here).
   --quick builds each file in checked mode only (what cubert_add_kernels runs at build time
   with CUBERT_CHECK_KERNELS: the modes differ only in a constant). --options adds build
   options (e.g. NVIDIA's -cl-nv-verbose, whose log gives each kernel's registers and spills);
   --log prints the build log of successful builds too; --binary writes each program's binary
   (PTX on NVIDIA) to DIR/<file>.<mode>.bin, to read what the driver made of a kernel.
   Exit status: 0 all built, 1 a build failed, 2 usage or I/O error, 77 no OpenCL device. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef CUBERT_WITH_OPENCL
#include <CL/cl.h>

#include "opencl/build_log.h"

static char *read_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  char *text = NULL;
  if (fseek(f, 0, SEEK_END) == 0) {
    long size = ftell(f);
    if (size >= 0 && fseek(f, 0, SEEK_SET) == 0 && (text = malloc((size_t)size + 1)) != NULL) {
      if (fread(text, 1, (size_t)size, f) != (size_t)size) {
        free(text);
        text = NULL;
      } else {
        text[size] = '\0';
      }
    }
  }
  fclose(f);
  return text;
}

/* The N-th device over all platforms, or NULL. */
static cl_device_id find_device(unsigned index, char *name, size_t name_size) {
  cl_platform_id platforms[16];
  cl_uint platform_count = 0;
  if (clGetPlatformIDs(16, platforms, &platform_count) != CL_SUCCESS) return NULL;
  for (cl_uint p = 0; p < platform_count && p < 16; ++p) {
    cl_device_id devices[16];
    cl_uint count = 0;
    if (clGetDeviceIDs(platforms[p], CL_DEVICE_TYPE_ALL, 16, devices, &count) != CL_SUCCESS)
      continue;
    if (index < count) {
      clGetDeviceInfo(devices[index], CL_DEVICE_NAME, name_size, name, NULL);
      return devices[index];
    }
    index -= count;
  }
  return NULL;
}

/* What main's options ask of every build. */
typedef struct check_options {
  const char *extra;  /* --options, or "" */
  int log;            /* --log */
  const char *binary; /* --binary, or NULL */
} check_options;

static char *build_log(cl_program program, cl_device_id device) {
  size_t size = 0;
  clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, 0, NULL, &size);
  char *log = calloc(size + 1, 1);
  if (log) clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, size, log, NULL);
  return log;
}

/* Writes the program's binary for its one device to dir/<base name of path>.<mode>.bin. */
static int write_binary(cl_program program, const char *dir, const char *path, const char *mode) {
  size_t size = 0;
  if (clGetProgramInfo(program, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, NULL) != CL_SUCCESS ||
      size == 0)
    return 0;
  unsigned char *bytes = malloc(size);
  if (!bytes) return 0;
  int ok = 0;
  if (clGetProgramInfo(program, CL_PROGRAM_BINARIES, sizeof bytes, &bytes, NULL) == CL_SUCCESS) {
    const char *base = strrchr(path, '/');
    char out[4096];
    snprintf(out, sizeof out, "%s/%s.%s.bin", dir, base ? base + 1 : path, mode);
    FILE *f = fopen(out, "wb");
    ok = f && fwrite(bytes, 1, size, f) == size;
    if (f) ok &= fclose(f) == 0;
    printf("     binary %s (%zu bytes)%s\n", out, size, ok ? "" : ": write failed");
  }
  free(bytes);
  return ok;
}

static int build(cl_context context, cl_device_id device, const char *path, const char *source,
                 int mode, const check_options *opt) {
  static const char *const names[3] = {"checked", "validate", "unchecked"};
  char options[1024];
  snprintf(options, sizeof options, "-cl-std=CL1.2 -DCUBERT_MODE=%d %s", mode, opt->extra);
  cl_int err = CL_SUCCESS;
  cl_program program = clCreateProgramWithSource(context, 1, &source, NULL, &err);
  if (err != CL_SUCCESS) {
    fprintf(stderr, "%s: clCreateProgramWithSource failed (%d)\n", path, err);
    return 0;
  }
  err = clBuildProgram(program, 1, &device, options, NULL, NULL);
  if (err != CL_SUCCESS) {
    /* Drivers that ignore #line (NVIDIA's) name `<kernel>:LINE`: mapped back to the kernel
       file, as the OpenCL server does for its own build failures. */
    char *log = cubert_ocl_log_relocate(source, build_log(program, device));
    fprintf(stderr, "FAIL %s (%s mode): clBuildProgram returned %d\n%s\n", path, names[mode], err,
            log ? log : "");
    free(log);
  } else {
    printf("ok   %s (%s mode)\n", path, names[mode]);
    if (opt->log) {
      char *log = build_log(program, device);
      printf("%s\n", log ? log : "");
      free(log);
    }
    if (opt->binary && !write_binary(program, opt->binary, path, names[mode])) err = 1;
  }
  clReleaseProgram(program);
  return err == CL_SUCCESS;
}

/* Whether the device has double precision (the extension or a nonzero fp64 config). */
static int has_fp64(cl_device_id device) {
  size_t size = 0;
  if (clGetDeviceInfo(device, CL_DEVICE_EXTENSIONS, 0, NULL, &size) != CL_SUCCESS) return 0;
  char *ext = calloc(size + 1, 1);
  if (!ext) return 0;
  int yes = clGetDeviceInfo(device, CL_DEVICE_EXTENSIONS, size, ext, NULL) == CL_SUCCESS &&
            strstr(ext, "cl_khr_fp64") != NULL;
  free(ext);
  return yes;
}

int main(int argc, char **argv) {
  unsigned index = 0;
  int first = 1, modes = 3;
  check_options opt = {"", 0, NULL};
  for (; first < argc && strncmp(argv[first], "--", 2) == 0; ++first) {
    if (strncmp(argv[first], "--device=", 9) == 0) {
      index = (unsigned)strtoul(argv[first] + 9, NULL, 10);
    } else if (strcmp(argv[first], "--quick") == 0) {
      modes = 1;
    } else if (strncmp(argv[first], "--options=", 10) == 0) {
      opt.extra = argv[first] + 10;
    } else if (strcmp(argv[first], "--log") == 0) {
      opt.log = 1;
    } else if (strncmp(argv[first], "--binary=", 9) == 0) {
      opt.binary = argv[first] + 9;
    } else {
      fprintf(stderr, "%s: unknown option %s\n", argv[0], argv[first]);
      return 2;
    }
  }
  if (first >= argc) {
    fprintf(stderr,
            "usage: %s [--device=N] [--quick] [--options=S] [--log] [--binary=DIR] FILE.cl...\n",
            argv[0]);
    return 2;
  }
  char name[256] = "";
  cl_device_id device = find_device(index, name, sizeof name);
  if (!device) {
    printf("SKIP: no OpenCL device %u\n", index);
    return 77;
  }
  cl_int err = CL_SUCCESS;
  cl_context context = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
  if (err != CL_SUCCESS) {
    fprintf(stderr, "clCreateContext on '%s' failed (%d)\n", name, err);
    return 2;
  }
  printf("building on '%s'\n", name);
  int ok = 1, io = 0;
  for (int i = first; i < argc; ++i) {
    char *source = read_file(argv[i]);
    if (!source) {
      fprintf(stderr, "%s: cannot read\n", argv[i]);
      io = 1;
      continue;
    }
    /* Files of fp64 kernels (CUBE_NEEDS_FP64 in cubert/cube.h) are never built on devices
       without cl_khr_fp64: the server refuses their kernels there. */
    if (strstr(source, "cubert_needs_fp64_") && !has_fp64(device)) {
      printf("skip %s (needs cl_khr_fp64, which '%s' lacks)\n", argv[i], name);
      free(source);
      continue;
    }
    for (int mode = 0; mode < modes; ++mode)
      ok &= build(context, device, argv[i], source, mode, &opt);
    free(source);
  }
  clReleaseContext(context);
  return io ? 2 : ok ? 0 : 1;
}

#else
int main(void) {
  printf("SKIP: cubert was built without the OpenCL server\n");
  return 77;
}
#endif
