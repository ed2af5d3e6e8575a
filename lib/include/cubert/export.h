/** @file
   cubert — symbol visibility. The library is built with -fvisibility=hidden; only declarations
   marked CUBERT_API are exported from the shared object. */
#ifndef CUBERT_EXPORT_H
#define CUBERT_EXPORT_H

#if defined(CUBERT_STATIC_DEFINE)
#define CUBERT_API
#elif defined(__GNUC__) || defined(__clang__)
#define CUBERT_API __attribute__((visibility("default")))
#else
#define CUBERT_API
#endif

#ifdef __cplusplus
#define CUBERT_EXTERN_C_BEGIN extern "C" {
#define CUBERT_EXTERN_C_END }
#else
#define CUBERT_EXTERN_C_BEGIN
#define CUBERT_EXTERN_C_END
#endif

#endif /* CUBERT_EXPORT_H */
