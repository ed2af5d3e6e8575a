/* Named scalar parameters (cubert/kernel_scalars.h): typed, checked stores into a launch's info
   words, against the kernel's signature. */
#include "cubert/kernel_scalars.h"

#include <stdio.h>
#include <string.h>

#include "kernel_check.h"

/* The type names and setter suffixes, by cubert_scalar_kind. */
static const char *const kind_type[] = {"(none)",   "int8_t",  "uint8_t",  "int16_t",
                                        "uint16_t", "int32_t", "uint32_t", "int64_t",
                                        "uint64_t", "float",   "double"};
static const char *const kind_suffix[] = {"",    "i8",  "u8",  "i16", "u16", "i32",
                                          "u32", "i64", "u64", "f32", "f64"};

static const char *kernel_name(const cubert_kernel_def *kernel) {
  return kernel->name ? kernel->name : "(unnamed)";
}

/* The kernel's scalars, or INVALID_ARGUMENT when it declares none. */
static cubert_status scalars_of(const cubert_kernel_def *kernel,
                                const cubert_kernel_signature **out_sig) {
  if (!kernel) return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT, "kernel is NULL");
  const cubert_kernel_signature *sig = kernel->signature;
  if (!sig || !sig->scalar_count)
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                              "kernel \"%s\" declares no named scalars (no (scalar, type, name) "
                              "entry in its parameter list); pass its info words directly",
                              kernel_name(kernel));
  *out_sig = sig;
  return NULL;
}

cubert_status cubert_kernel_scalar_find(const cubert_kernel_def *kernel, const char *name,
                                        uint32_t *out_position) {
  const cubert_kernel_signature *sig = NULL;
  CUBERT_RETURN_IF_ERROR(scalars_of(kernel, &sig));
  if (!name || !out_position)
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT, "name or out_position is NULL");
  for (uint32_t i = 0; i < sig->scalar_count; ++i)
    if (strcmp(sig->scalars[i].name, name) == 0) {
      *out_position = i;
      return NULL;
    }
  char decl[512];
  cubert_kernel_describe(sig, 1, decl, sizeof decl);
  return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                            "kernel \"%s\" has no named scalar \"%s\"; its scalars are: %s",
                            kernel_name(kernel), name, decl);
}

static cubert_status set_scalar(const cubert_kernel_def *kernel, uint64_t *info,
                                uint32_t info_count, uint32_t position, cubert_scalar_kind kind,
                                const void *value, size_t bytes) {
  const cubert_kernel_signature *sig = NULL;
  CUBERT_RETURN_IF_ERROR(scalars_of(kernel, &sig));
  const char *name = kernel_name(kernel);
  if (position >= sig->scalar_count) {
    char decl[512];
    cubert_kernel_describe(sig, 1, decl, sizeof decl);
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                              "kernel \"%s\" has %u named scalars (positions 0 .. %u: %s); got "
                              "position %u",
                              name, sig->scalar_count, sig->scalar_count - 1, decl, position);
  }
  const cubert_kernel_scalar_decl *d = &sig->scalars[position];
  if (d->kind != kind) {
    const unsigned k = (unsigned)d->kind < sizeof kind_suffix / sizeof *kind_suffix ? d->kind : 0;
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                              "kernel \"%s\" scalar %u \"%s\" is %s, not %s: set it with "
                              "cubert_kernel_scalar_set_%s",
                              name, position, d->name, d->type, kind_type[kind], kind_suffix[k]);
  }
  if (!info || position >= info_count)
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                              "info has %u words, but kernel \"%s\" scalar %u \"%s\" is info word "
                              "%u: pass at least %u words (one per named scalar)",
                              info ? info_count : 0, name, position, d->name, position,
                              sig->scalar_count);
  /* The value's bytes in the word's low bytes: both sides read them through a union (cube.h,
     CUBERT_CUBE_SCALAR_FROM_), on little-endian hosts and devices. */
  uint64_t word = 0;
  memcpy(&word, value, bytes);
  info[position] = word;
  return NULL;
}

#define SCALAR_SETTER(sfx, T, KIND)                                                               \
  cubert_status cubert_kernel_scalar_set_##sfx(const cubert_kernel_def *kernel, uint64_t *info,   \
                                               uint32_t info_count, uint32_t position, T value) { \
    return set_scalar(kernel, info, info_count, position, KIND, &value, sizeof value);            \
  }
SCALAR_SETTER(i8, int8_t, CUBERT_SCALAR_I8)
SCALAR_SETTER(u8, uint8_t, CUBERT_SCALAR_U8)
SCALAR_SETTER(i16, int16_t, CUBERT_SCALAR_I16)
SCALAR_SETTER(u16, uint16_t, CUBERT_SCALAR_U16)
SCALAR_SETTER(i32, int32_t, CUBERT_SCALAR_I32)
SCALAR_SETTER(u32, uint32_t, CUBERT_SCALAR_U32)
SCALAR_SETTER(i64, int64_t, CUBERT_SCALAR_I64)
SCALAR_SETTER(u64, uint64_t, CUBERT_SCALAR_U64)
SCALAR_SETTER(f32, float, CUBERT_SCALAR_F32)
SCALAR_SETTER(f64, double, CUBERT_SCALAR_F64)
