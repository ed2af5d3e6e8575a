/* cubert's smallest backend: the required server contract and nothing else (null_backend.c).
   A program registers it with cubert_backend_register(&cubert_null_backend) and opens it as
   "null". Copy it to start a new backend. */
#ifndef CUBERT_NULL_BACKEND_H
#define CUBERT_NULL_BACKEND_H

#include "cubert/backend.h"

extern const cubert_backend cubert_null_backend;

#endif /* CUBERT_NULL_BACKEND_H */
