/* cubert — the process-wide list of shared device instances (device_registry.c). Thread-safe:
   its own lock guards the list and each instance's `registry_next` and `listed`. */
#ifndef CUBERT_DEVICE_REGISTRY_H
#define CUBERT_DEVICE_REGISTRY_H

#include <stddef.h>

#include "device.h"

/* The instance of the device `selector` names, with a new reference: the shared one, opened on
   first use, or a new private one for "!private" selectors. */
cubert_status cubert_device_get(const char *selector, cubert_device **out);
/* Unlists an instance whose count reached 0. */
void cubert_device_registry_remove(cubert_device *device);
/* The number of instances listed (tests). */
size_t cubert_device_registry_count(void);

#endif
