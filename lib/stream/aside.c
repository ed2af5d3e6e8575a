/* cubert — a stream's pending errors set aside and put back (aside.h).

   Autotune measures candidates on the caller's stream and syncs after each warm-up run to see
   whether the candidate failed. An error the caller's earlier asynchronous work left on the
   stream used to surface at that sync: the candidate was blamed and dropped, and the error was
   lost, so whether the caller ever saw it depended on the state of the tuning cache. Setting
   the errors aside first (after waiting for the stream's work, so that none is still on its
   way) and putting them back before the winner's launch leaves them to the caller's next
   sync exactly as with a warm cache, including the skipping of work queued behind them. */
#include "stream/aside.h"

#include <stdlib.h>

#include "call_scope.h"
#include "device.h"
#include "stream/errors.h"
#include "stream/slots.h"

cubert_status cubert_client_errors_set_aside(cubert_client *client, cubert_errors_aside *out) {
  *out = (cubert_errors_aside){0};
  cubert_call call;
  CUBERT_RETURN_IF_ERROR(cubert_call_enter(client, &call));
  cubert_device *device = call.device;
  cubert_stream_slot *slot = call.slot;
  out->stream = slot->owner;
  /* A failure of the wait itself is one of the stream's errors too. */
  cubert_status waited = cubert_slot_sync(device, slot);
  if (waited) cubert_stream_errors_push(slot->errors, waited);
  cubert_stream_errors_detach(slot->errors, out->stream, &out->queued, &out->queued_count,
                              &out->dropped);
  size_t count = cubert_parked_count_of(&device->parked, out->stream);
  out->parked = count ? malloc(count * sizeof(*out->parked)) : NULL;
  if (out->parked)
    out->parked_count = cubert_parked_take(&device->parked, out->stream, out->parked);
  /* Without memory for the list, the parked errors simply stay parked: a sync then reports
     them as it always did, blaming a candidate (the behaviour before the aside). */
  return cubert_call_leave(&call, NULL);
}

void cubert_client_errors_put_back(cubert_client *client, cubert_errors_aside *aside) {
  cubert_call call;
  cubert_status s = cubert_call_enter(client, &call);
  if (s) {
    /* The client was checked by the caller: only a host allocation can fail here. */
    cubert_status_free(s);
    for (size_t i = 0; i < aside->queued_count; ++i) cubert_status_free(aside->queued[i]);
    for (size_t i = 0; i < aside->parked_count; ++i) cubert_status_free(aside->parked[i]);
  } else {
    cubert_device *device = call.device;
    cubert_stream_slot *slot = call.slot;
    /* The slot belongs to the stream again (cubert_call_enter took it over if another id used it
       meanwhile, parking that id's errors), so its queue is the stream's. Parked errors are
       older than queued ones, and both older than anything raised since. */
    cubert_stream_errors_reattach(slot->errors, aside->stream, aside->queued, aside->queued_count,
                                  aside->dropped);
    aside->queued = NULL;
    if (aside->parked_count) {
      if (cubert_parked_reserve(&device->parked, aside->parked_count)) {
        for (size_t i = 0; i < aside->parked_count; ++i)
          cubert_parked_push(&device->parked, aside->stream, aside->parked[i]);
      } else {
        cubert_stream_errors_reattach(slot->errors, aside->stream, aside->parked,
                                      aside->parked_count, 0);
        aside->parked = NULL;
      }
    }
    cubert_call_leave(&call, NULL);
  }
  free(aside->queued);
  free(aside->parked);
  *aside = (cubert_errors_aside){0};
}
