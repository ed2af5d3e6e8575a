/* cubert CPU server — the vtable's gate methods (gate.c): a gate is a stream of
   its own that runs nothing, whose one command completes when the gate opens. */
#ifndef CUBERT_CPU_GATE_H
#define CUBERT_CPU_GATE_H

#include "cubert/server.h"
#include "cubert/server/gates.h"

cubert_status cubert_cpu_gate_create(cubert_server *server, cubert_gate **out);
cubert_status cubert_cpu_gate_wait(cubert_server *server, cubert_server_stream *stream,
                                   cubert_gate *gate);
void cubert_cpu_gate_open(cubert_server *server, cubert_gate *gate, cubert_status error);
void cubert_cpu_gate_release(cubert_server *server, cubert_gate *gate);

#endif /* CUBERT_CPU_GATE_H */
