/* cubert CPU server — the vtable's event methods (events.c): an event is a stream
   and a count of its commands; it is done when the stream completed that many. */
#ifndef CUBERT_CPU_EVENTS_H
#define CUBERT_CPU_EVENTS_H

#include "cubert/server.h"

cubert_status cubert_cpu_event_record(cubert_server *server, cubert_server_stream *stream,
                                      cubert_event **out);
cubert_status cubert_cpu_event_wait(cubert_server *server, cubert_server_stream *stream,
                                    cubert_event *event);
cubert_status cubert_cpu_event_sync(cubert_server *server, cubert_event *event);
int cubert_cpu_event_done(cubert_server *server, cubert_event *event);
void cubert_cpu_event_release(cubert_server *server, cubert_event *event);

#endif /* CUBERT_CPU_EVENTS_H */
