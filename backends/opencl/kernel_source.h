/* cubert — the source text a kernel-language kernel's program is built from (kernel_source.c):
   its file's flattened text with the other kernels' entry points and bodies blanked out. Pure,
   safe from any thread. */
#ifndef CUBERT_OPENCL_KERNEL_SOURCE_H
#define CUBERT_OPENCL_KERNEL_SOURCE_H

/* A copy of `source` (a flattened kernel-language file) in which every `__kernel void <name>`
   wrapper other than `entry`'s, and the definition of each such kernel's body function
   (`<name>_body_`), is replaced by spaces, newlines kept; NULL when `entry` has no wrapper in
   `source`, a wrapper's braces do not balance, or no memory (the caller then builds the whole
   text). Free with free(). */
char *cubert_ocl_kernel_only_source(const char *source, const char *entry);

#endif /* CUBERT_OPENCL_KERNEL_SOURCE_H */
