/* cubert-info: lists every device of every backend compiled into the library, with its
   properties; unavailable devices are listed with the reason.
   cubert-info --tune: also lists, per available device, its autotune cache file and the
   winners recorded there (set, key fields, winner, median).
   cubert-info --json: the same listing as one JSON document for scripts (see json_main; with
   --tune, each device's cache path and entries too). Exit status 0 when a device is listed,
   1 when none is available, 2 on a usage error.
   cubert-info --export-caches FILE: packs this machine's autotune and OpenCL program caches
   into a bundle; --import-caches FILE: adds a bundle's entries that match this cubert version
   and a device here to the caches, skipping the others (cubert/cache_bundle.h). Both print
   what they did; exit status 0, or 1 when the bundle could not be written or read. */
#include <cubert/cubert.h>
#include <cubert/server.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "cubert/backend.h"
#include "cubert/cache_bundle.h"

/* Names of the CUBERT_FEATURE_* bits, for both listings. */
static const struct {
  uint32_t bit;
  const char *name;
} kFeatures[] = {{CUBERT_FEATURE_FP64, "fp64"},
                 {CUBERT_FEATURE_FP16, "fp16"},
                 {CUBERT_FEATURE_ATOMIC64, "atomic64"},
                 {CUBERT_FEATURE_UNALIGNED_IO, "unaligned_io"},
                 {CUBERT_FEATURE_PROFILING, "profiling"},
                 {CUBERT_FEATURE_PLANE, "plane"},
                 {CUBERT_FEATURE_ATOMIC_F32_ADD, "atomic_f32_add"},
                 {CUBERT_FEATURE_ATOMIC_F64_ADD, "atomic_f64_add"},
                 {CUBERT_FEATURE_DOT_PRODUCT_I8, "dot_product_i8"}};

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
  printf("    features            ");
  for (size_t i = 0; i < sizeof(kFeatures) / sizeof(kFeatures[0]); ++i)
    if (p->features & kFeatures[i].bit) printf(" %s", kFeatures[i].name);
  printf("\n    plane sizes          ");
  for (uint32_t i = 0; i < p->plane_size_count && i < CUBERT_MAX_PLANE_SIZES; ++i)
    printf("%s%u", i ? ", " : "", p->plane_sizes[i]);
  const cubert_vector_widths *w = &p->vector_widths;
  printf("\n    vector widths        i8 %u, i16 %u, i32 %u, i64 %u, f16 %u, f32 %u, f64 %u\n",
         w->i8, w->i16, w->i32, w->i64, w->f16, w->f32, w->f64);
  printf("    properties hash      %016llx\n", (unsigned long long)p->properties_hash);
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

/* ---- --json ----------------------------------------------------------------------------- */

/* `s` as a JSON string (lib/json.c: escaped, and valid JSON whatever the bytes). */
static void json_string(const char *s, size_t len) {
  putchar('"');
  cubert_json_string_body(stdout, s, len);
  putchar('"');
}

static void json_key_string(const char *key, const char *value) {
  printf("\"%s\": ", key);
  json_string(value, strlen(value));
}

static void json_u64_3(const char *key, const uint32_t v[3]) {
  printf("\"%s\": [%u, %u, %u]", key, v[0], v[1], v[2]);
}

static const char *device_type_name(cubert_device_type t) {
  switch (t) {
    case CUBERT_DEVICE_TYPE_CPU_SERVER:
      return "cpu_server";
    case CUBERT_DEVICE_TYPE_OPENCL_CPU:
      return "opencl_cpu";
    case CUBERT_DEVICE_TYPE_OPENCL_GPU:
      return "opencl_gpu";
    default:
      return "opencl_other";
  }
}

/* The properties print_properties shows, as members of the enclosing object. */
static void json_properties(const cubert_device_properties *p) {
  const cubert_hardware_properties *h = &p->hardware;
  printf(",\n      ");
  json_key_string("name", p->name);
  printf(",\n      ");
  json_key_string("backend", p->backend);
  printf(",\n      \"type\": \"%s\",\n      ", device_type_name(p->type));
  json_key_string("vendor", p->vendor);
  printf(",\n      ");
  json_key_string("driver_version", p->driver_version);
  printf(",\n      ");
  json_key_string("platform_version", p->platform_version);
  printf(",\n      \"max_units_per_cube\": %u,\n      ", h->max_units_per_cube);
  json_u64_3("max_cube_dim", h->max_cube_dim);
  printf(",\n      ");
  json_u64_3("max_cube_count", h->max_cube_count);
  printf(",\n      \"max_total_cubes\": %llu,", (unsigned long long)h->max_total_cubes);
  printf("\n      \"plane_size_min\": %u,\n      \"plane_size_max\": %u,", h->plane_size_min,
         h->plane_size_max);
  printf("\n      \"max_bindings\": %u,", h->max_bindings);
  printf("\n      \"max_shared_memory_size\": %llu,",
         (unsigned long long)h->max_shared_memory_size);
  printf("\n      \"num_cpu_cores\": %u,\n      \"num_compute_units\": %u,", h->num_cpu_cores,
         h->num_compute_units);
  printf("\n      \"load_width\": %u,\n      \"max_vector_size\": %u,", h->load_width,
         h->max_vector_size);
  printf("\n      \"memory\": {\"max_page_size\": %llu, \"alignment\": %llu},",
         (unsigned long long)p->memory.max_page_size, (unsigned long long)p->memory.alignment);
  printf("\n      \"features\": [");
  int first = 1;
  for (size_t i = 0; i < sizeof(kFeatures) / sizeof(kFeatures[0]); ++i) {
    if (!(p->features & kFeatures[i].bit)) continue;
    printf("%s\"%s\"", first ? "" : ", ", kFeatures[i].name);
    first = 0;
  }
  printf("],\n      \"plane_sizes\": [");
  for (uint32_t i = 0; i < p->plane_size_count && i < CUBERT_MAX_PLANE_SIZES; ++i)
    printf("%s%u", i ? ", " : "", p->plane_sizes[i]);
  const cubert_vector_widths *w = &p->vector_widths;
  printf(
      "],\n      \"vector_widths\": {\"i8\": %u, \"i16\": %u, \"i32\": %u, \"i64\": %u, "
      "\"f16\": %u, \"f32\": %u, \"f64\": %u},",
      w->i8, w->i16, w->i32, w->i64, w->f16, w->f32, w->f64);
  /* a string: JSON numbers above 2^53 lose digits in most parsers */
  printf("\n      \"properties_hash\": \"%016llx\",", (unsigned long long)p->properties_hash);
  printf("\n      \"timing\": \"%s\"",
         p->timing_method == CUBERT_TIMING_DEVICE ? "device" : "system");
}

/* The backend's own description (describe(), text lines) as an array of trimmed lines. */
static void json_details(const cubert_backend *backend, size_t index) {
  char *text = NULL;
  size_t size = 0;
  FILE *f = open_memstream(&text, &size);
  if (!f) return;
  backend->describe(index, f);
  fclose(f);
  printf(",\n      \"details\": [");
  int first = 1;
  for (char *line = text; line && *line;) {
    char *end = strchr(line, '\n');
    size_t len = end ? (size_t)(end - line) : strlen(line);
    size_t start = 0;
    while (start < len && (line[start] == ' ' || line[start] == '\t')) ++start;
    while (len > start && (line[len - 1] == ' ' || line[len - 1] == '\r')) --len;
    if (len > start) {
      printf("%s\n        ", first ? "" : ",");
      json_string(line + start, len - start);
      first = 0;
    }
    line = end ? end + 1 : NULL;
  }
  printf("%s]", first ? "" : "\n      ");
  free(text);
}

typedef struct json_tune_state {
  int first;
} json_tune_state;

static void json_tune_entry(const cubert_tune_entry *e, void *user) {
  json_tune_state *st = user;
  printf("%s\n          {", st->first ? "" : ",");
  st->first = 0;
  json_key_string("set", e->set_name);
  printf(", \"key\": [");
  for (uint32_t i = 0; i < e->key.count; ++i)
    printf("%s%llu", i ? ", " : "", (unsigned long long)e->key.fields[i]);
  printf("], \"winner\": %u, ", e->winner);
  json_key_string("winner_name", e->winner_name);
  printf(", \"winner_ns\": %llu}", (unsigned long long)e->winner_ns);
}

static void json_tune_cache(const char *selector) {
  cubert_client *client = NULL;
  cubert_status s = cubert_client_create(selector, &client);
  char path[4096];
  size_t count = 0;
  int listed_path = 0;
  printf(",\n      \"autotune\": {");
  if (!s) s = cubert_tune_cache_path(client, path, sizeof(path));
  if (!s) {
    json_key_string("cache", path);
    printf(", \"entries\": [");
    json_tune_state st = {1};
    s = cubert_tune_cache_foreach(client, json_tune_entry, &st, &count);
    printf("%s]", st.first ? "" : "\n        ");
    listed_path = 1;
  }
  if (s) {
    if (listed_path) printf(", ");
    json_key_string("error", cubert_status_message(s));
  }
  printf("}");
  cubert_status_free(s);
  cubert_client_release(client);
}

/* {"version": ..., "backends": [{"name", "devices": [{selector, available, reason | the
   properties, details, autotune}], "error" when enumeration failed}]}. */
static int json_main(int tune) {
  const cubert_backend *const *backends = cubert_backends();
  int listed = 0;
  printf("{\n  \"version\": \"%s\",\n  \"backends\": [", CUBERT_VERSION_STRING);
  for (size_t b = 0; backends[b]; ++b) {
    printf("%s\n    {", b ? "," : "");
    json_key_string("name", backends[b]->name);
    size_t count = 0;
    cubert_status s = cubert_devices_count(backends[b]->name, &count);
    cubert_device_info *infos = NULL;
    if (!s && count && !(infos = calloc(count, sizeof(*infos)))) return 1;
    if (!s && count) s = cubert_devices_list(backends[b]->name, infos, count, &count);
    if (s) {
      printf(", ");
      json_key_string("error", cubert_status_message(s));
      cubert_status_free(s);
      count = 0;
    }
    printf(", \"devices\": [");
    for (size_t i = 0; i < count; ++i) {
      printf("%s\n      {", i ? "," : "");
      json_key_string("selector", infos[i].selector);
      printf(", \"available\": %s", infos[i].available ? "true" : "false");
      if (!infos[i].available) {
        printf(", ");
        json_key_string("reason", infos[i].reason);
        printf("}");
        continue;
      }
      json_properties(&infos[i].properties);
      if (backends[b]->describe) json_details(backends[b], i);
      if (tune) json_tune_cache(infos[i].selector);
      printf("}");
      listed++;
    }
    printf("%s]}", count ? "\n    " : "");
    free(infos);
  }
  printf("\n  ]\n}\n");
  return listed ? 0 : 1;
}

/* ---- --export-caches, --import-caches ------------------------------------------------------ */

static int bundle_main(int import, const char *path) {
  cubert_cache_bundle_counts c;
  cubert_status s =
      import ? cubert_cache_bundle_import(path, &c) : cubert_cache_bundle_export(path, &c);
  if (import)
    printf(
        "imported %u autotune file%s and %u program binar%s from %s; kept %u present; "
        "skipped %u of another cubert version, %u of devices not here, %u invalid\n",
        c.tune_files, c.tune_files == 1 ? "" : "s", c.program_files,
        c.program_files == 1 ? "y" : "ies", path, c.present, c.other_version, c.other_device,
        c.invalid);
  else if (!s)
    printf("exported %u autotune file%s and %u program binar%s to %s; left out %u invalid\n",
           c.tune_files, c.tune_files == 1 ? "" : "s", c.program_files,
           c.program_files == 1 ? "y" : "ies", path, c.invalid);
  if (s) {
    fprintf(stderr, "%s\n", cubert_status_message(s));
    cubert_status_free(s);
    return 1;
  }
  return 0;
}

int main(int argc, char **argv) {
  int tune = 0, json = 0;
  for (int i = 1; i < argc; ++i) {
    if ((strcmp(argv[i], "--export-caches") == 0 || strcmp(argv[i], "--import-caches") == 0) &&
        i + 1 < argc && argc == 3)
      return bundle_main(argv[i][2] == 'i', argv[i + 1]);
    if (strcmp(argv[i], "--tune") == 0) {
      tune = 1;
    } else if (strcmp(argv[i], "--json") == 0) {
      json = 1;
    } else {
      fprintf(stderr,
              "usage: %s [--tune] [--json]\n       %s --export-caches FILE | --import-caches "
              "FILE\n",
              argv[0], argv[0]);
      return 2;
    }
  }
  if (json) return json_main(tune);
  const cubert_backend *const *backends = cubert_backends();
  int listed = 0;
  for (size_t b = 0; backends[b]; ++b) {
    size_t count = 0;
    cubert_status s = cubert_devices_count(backends[b]->name, &count);
    if (s) {
      printf("%s: enumeration failed: %s\n", backends[b]->name, cubert_status_message(s));
      cubert_status_free(s);
      continue;
    }
    printf("%s: %zu device%s\n", backends[b]->name, count, count == 1 ? "" : "s");
    if (!count) continue;
    cubert_device_info *infos = calloc(count, sizeof(*infos));
    if (!infos) return 1;
    s = cubert_devices_list(backends[b]->name, infos, count, &count);
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
