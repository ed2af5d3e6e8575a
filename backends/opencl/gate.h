/* cubert — the OpenCL server's gates (gate.c): a gate is a user event that the waiting stream's
   queue waits for through a barrier (cubert_ocl_wait_cl_event); opening it completes the event,
   pushing an error, if any, to the waiting stream's error queue first. The vtable's gate
   methods, called like the others with the device lock held. */
#ifndef CUBERT_OPENCL_GATE_H
#define CUBERT_OPENCL_GATE_H

#include "cubert/server/gates.h"
#include "opencl/api.h"

cubert_status cubert_ocl_gate_create(cubert_server *server, cubert_gate **out);
cubert_status cubert_ocl_gate_wait(cubert_server *server, cubert_server_stream *stream,
                                   cubert_gate *gate);
void cubert_ocl_gate_open(cubert_server *server, cubert_gate *gate, cubert_status error);
void cubert_ocl_gate_release(cubert_server *server, cubert_gate *gate);

#endif /* CUBERT_OPENCL_GATE_H */
