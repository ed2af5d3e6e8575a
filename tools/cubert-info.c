/* cubert-info: lists every device of every backend compiled into the library, with its
   properties; unavailable devices are listed with the reason.
   cubert-info --tune: also lists, per available device, its autotune cache file and the
   winners recorded there (set, key fields, winner, median). */
#include <cubert/cubert.h>
#include <cubert/server.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void print_properties(const cubert_device_properties *p) {
  const cubert_hardware_properties *h = &p->hardware;
  printf("    name                 %s\n", p->name);
  if (p->vendor[0]) printf("    vendor               %s\n", p->vendor);
  if (p->driver_version[0]) printf("    driver               %s\n", p->driver_version);
  if (p->platform_version[0]) printf("    platform             %s\n", p->platform_version);
  printf("    max units per cube   %u\n", h->max_units_per_cube);
  printf("    max cube dim         (%u, %u, %u)\n", h->max_cube_dim[0], h->max_cube_dim[1],
         h->max_cube_dim[2]);
  printf("    max cube count       (%u, %u, %u)\n", h->max_cube_count[0], h->max_cube_count[1],
         h->max_cube_count[2]);
  if (h->max_total_cubes)
    printf("    max cubes per launch %llu\n", (unsigned long long)h->max_total_cubes);
  printf("    plane size           %u..%u\n", h->plane_size_min, h->plane_size_max);
  printf("    shared memory        %llu bytes per cube\n",
         (unsigned long long)h->max_shared_memory_size);
  if (h->num_cpu_cores) printf("    cpu cores            %u\n", h->num_cpu_cores);
  if (h->num_compute_units) printf("    compute units        %u\n", h->num_compute_units);
  printf("    load width           %u bits, max vector %u\n", h->load_width, h->max_vector_size);
  printf("    memory               max page %llu bytes, alignment %llu bytes\n",
         (unsigned long long)p->memory.max_page_size, (unsigned long long)p->memory.alignment);
  printf("    features            %s%s%s%s\n", p->features & CUBERT_FEATURE_FP64 ? " fp64" : "",
         p->features & CUBERT_FEATURE_FP16 ? " fp16" : "",
         p->features & CUBERT_FEATURE_ATOMIC64 ? " atomic64" : "",
         p->features & CUBERT_FEATURE_PROFILING ? " profiling" : "");
  printf("    timing               %s\n",
         p->timing_method == CUBERT_TIMING_DEVICE ? "device" : "system");
}

static void print_tune_entry(const cubert_tune_entry *e, void *user) {
  (void)user;
  printf("    %-28s key (", e->set_name);
  for (uint32_t i = 0; i < e->key.count; ++i)
    printf("%s%llu", i ? ", " : "", (unsigned long long)e->key.fields[i]);
  printf(") -> [%u] %s, %.3f us\n", e->winner, e->winner_name, (double)e->winner_ns / 1e3);
}

static void print_tune_cache(const char *selector) {
  cubert_client *client = NULL;
  cubert_status s = cubert_client_create(selector, &client);
  char path[4096];
  size_t count = 0;
  if (!s) s = cubert_tune_cache_path(client, path, sizeof(path));
  if (!s) {
    printf("    autotune cache       %s\n", path);
    s = cubert_tune_cache_foreach(client, print_tune_entry, NULL, &count);
  }
  if (s)
    printf("    autotune cache       unavailable: %s\n", cubert_status_message(s));
  else if (!count)
    printf("    (no entries)\n");
  cubert_status_free(s);
  cubert_client_release(client);
}

int main(int argc, char **argv) {
  int tune = 0;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--tune") == 0) {
      tune = 1;
    } else {
      fprintf(stderr, "usage: %s [--tune]\n", argv[0]);
      return 2;
    }
  }
  const cubert_backend *const *backends = cubert_backends();
  int listed = 0;
  for (size_t b = 0; backends[b]; ++b) {
    size_t count = 0;
    cubert_status s = backends[b]->enumerate(NULL, 0, &count);
    if (s) {
      printf("%s: enumeration failed: %s\n", backends[b]->name, cubert_status_message(s));
      cubert_status_free(s);
      continue;
    }
    printf("%s: %zu device%s\n", backends[b]->name, count, count == 1 ? "" : "s");
    if (!count) continue;
    cubert_device_info *infos = calloc(count, sizeof(*infos));
    if (!infos) return 1;
    s = backends[b]->enumerate(infos, count, &count);
    if (s) {
      printf("  enumeration failed: %s\n", cubert_status_message(s));
      cubert_status_free(s);
    }
    for (size_t i = 0; !s && i < count; ++i) {
      printf("  [%s]%s\n", infos[i].selector, infos[i].available ? "" : " unavailable");
      if (!infos[i].available) {
        printf("    reason               %s\n", infos[i].reason);
        continue;
      }
      print_properties(&infos[i].properties);
      if (backends[b]->describe) backends[b]->describe(i, stdout);
      if (tune) print_tune_cache(infos[i].selector);
      listed++;
    }
    free(infos);
  }
  return listed ? 0 : 1;
}
