/* cubert — cache bundles (cubert/cache_bundle.h): the autotune and OpenCL program cache files
   of one machine packed into one file, and imported on another after re-validation.

   Layout (text lines, each entry's file bytes verbatim after its two lines):

     cubert-cache-bundle 1
     cubert <version of the exporting library>
     entry <tune|opencl> <file name> <cubert version of the entry> <bytes>
     device <identity: backend|device name|driver version|platform version>
     <bytes of the cache file>
     ...
     end <FNV-1a 64 hex of every byte before this line>

   The entry lines are a summary for people and tools; import trusts none of them. It re-reads
   the version and device identity from each cache file's own header (the autotune file's
   "device"/"cubert" lines, the program binary's key text), requires them to equal the entry
   line and the file name to be the one this cubert would give the file (the hash of the
   identity or key), re-validates the file (the autotune file's checksum and records, the
   binary's checksum), and only then compares version and identity with this library and the
   devices listed here. Program binaries are keyed by their device exactly as the OpenCL
   backend keys them (its key text, backends/opencl/server.c make_device_key), which this file
   reads but never writes: the backend still validates the whole key when it loads one.

   Why whole files and not records: the program cache's files are opaque driver binaries, and
   the autotune file is already the unit its readers validate; the merge of autotune records
   goes through cubert_tune_disk_update so that a running process's entries are kept. */
#include "cubert/cache_bundle.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/cache_file.h"
#include "cubert/backend.h"
#include "cubert/cubert.h"
#include "tune/disk.h"

#ifndef CUBERT_VERSION_STRING_BUILD
#define CUBERT_VERSION_STRING_BUILD CUBERT_VERSION_STRING
#endif

#define BUNDLE_MAGIC "cubert-cache-bundle 1\n"
#define MAX_BUNDLE_BYTES ((size_t)1 << 34)
#define MAX_TUNE_FILE_BYTES ((size_t)16 << 20)
#define MAX_PROGRAM_FILE_BYTES ((size_t)1 << 32)
#define PROGRAM_HEADER_BYTES 32u
#define LINE_BYTES 2048

typedef enum kind { KIND_TUNE, KIND_PROGRAM } kind;
static const char *const kind_names[] = {"tune", "opencl"};
static const char *const kind_suffixes[] = {".tune", ".clbin"};
static const char *const kind_folders[] = {"tune", "opencl"};

/* What a cache file says about itself. */
typedef struct file_facts {
  char version[128];
  char identity[1024];
  char name[64]; /* the file name this cubert gives that file */
} file_facts;

static uint64_t get_le(const unsigned char *p, int bytes) {
  uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

/* The value of the line "<tag> <value>" of text[0..size), copied to out; 0 when absent. */
static int line_value(const char *text, size_t size, const char *tag, char *out, size_t capacity) {
  size_t tag_len = strlen(tag);
  for (size_t i = 0; i < size;) {
    const char *line = text + i;
    const char *nl = memchr(line, '\n', size - i);
    size_t len = nl ? (size_t)(nl - line) : size - i;
    if (len > tag_len && memcmp(line, tag, tag_len) == 0 && line[tag_len] == ' ') {
      size_t v = len - tag_len - 1;
      if (v >= capacity) return 0;
      memcpy(out, line + tag_len + 1, v);
      out[v] = 0;
      return 1;
    }
    i += len + 1;
  }
  return 0;
}

/* Reads an autotune file's facts from its header ("cubert-tune 1", "device <identity>",
   "cubert <version>"). Only a file of this cubert version can be validated further (the parser
   knows this version's format alone): tune_valid. */
static const char *tune_facts(const char *text, size_t size, file_facts *f) {
  const char *nl = memchr(text, '\n', size);
  if (!nl || strncmp(text, "cubert-tune ", 12) != 0) return "no header";
  size_t head = (size_t)(nl - text) + 1;
  if (!line_value(text + head, size - head, "device", f->identity, sizeof f->identity) ||
      !line_value(text + head, size - head, "cubert", f->version, sizeof f->version))
    return "no device or cubert line";
  char *path = cubert_tune_disk_path(".", f->identity);
  if (!path) return "out of memory";
  snprintf(f->name, sizeof f->name, "%s", path + 2);
  free(path);
  return NULL;
}

/* Validates an OpenCL program cache file (disk_cache.c's layout) and reads its facts. */
static const char *program_facts(const unsigned char *data, size_t size, file_facts *f) {
  if (size < PROGRAM_HEADER_BYTES || memcmp(data, "CUBRTCL", 8) != 0) return "bad magic";
  if (get_le(data + 8, 4) != 1) return "other format version";
  uint64_t key_len = get_le(data + 12, 4), binary_len = get_le(data + 16, 8);
  if (key_len > size - PROGRAM_HEADER_BYTES || binary_len != size - PROGRAM_HEADER_BYTES - key_len)
    return "lengths differ from the file size";
  const char *key = (const char *)data + PROGRAM_HEADER_BYTES;
  const unsigned char *binary = data + PROGRAM_HEADER_BYTES + key_len;
  if (cubert_fnv1a64(CUBERT_FNV1A64_SEED, binary, (size_t)binary_len) != get_le(data + 24, 8))
    return "checksum mismatch";
  cubert_device_properties p;
  memset(&p, 0, sizeof p);
  snprintf(p.backend, sizeof p.backend, "opencl");
  if (!line_value(key, (size_t)key_len, "cubert", f->version, sizeof f->version) ||
      !line_value(key, (size_t)key_len, "device", p.name, sizeof p.name) ||
      !line_value(key, (size_t)key_len, "driver", p.driver_version, sizeof p.driver_version) ||
      !line_value(key, (size_t)key_len, "platform-version", p.platform_version,
                  sizeof p.platform_version))
    return "key text lacks the device";
  char *identity = cubert_tune_disk_identity_of(&p);
  if (!identity) return "out of memory";
  snprintf(f->identity, sizeof f->identity, "%s", identity);
  free(identity);
  snprintf(f->name, sizeof f->name, "%016" PRIx64 ".clbin",
           cubert_fnv1a64(CUBERT_FNV1A64_SEED, key, (size_t)key_len));
  return NULL;
}

/* Validates a whole autotune file of this version (NUL-terminated at size): its trailing
   checksum, its header against the identity and every record. */
static int tune_valid(const char *text, size_t size, const char *identity) {
  cubert_tune_record *records = NULL;
  size_t count = 0;
  const char *reason = cubert_tune_disk_parse(text, size, identity, &records, &count);
  free(records);
  return reason == NULL;
}

static const char *file_facts_of(kind k, const unsigned char *data, size_t size, file_facts *f) {
  memset(f, 0, sizeof *f);
  return k == KIND_TUNE ? tune_facts((const char *)data, size, f) : program_facts(data, size, f);
}

/* ---- a growing byte buffer --------------------------------------------------------------- */

typedef struct buffer {
  unsigned char *data;
  size_t size, capacity;
  int failed;
} buffer;

static void put(buffer *b, const void *data, size_t size) {
  if (b->failed) return;
  if (b->size + size > b->capacity) {
    size_t cap = b->capacity ? b->capacity : 4096;
    while (cap < b->size + size) cap *= 2;
    unsigned char *p = realloc(b->data, cap);
    if (!p) {
      b->failed = 1;
      return;
    }
    b->data = p;
    b->capacity = cap;
  }
  memcpy(b->data + b->size, data, size);
  b->size += size;
}

static void put_text(buffer *b, const char *text) {
  put(b, text, strlen(text));
}

/* ---- export ------------------------------------------------------------------------------ */

static int has_suffix(const char *name, const char *suffix) {
  size_t n = strlen(name), s = strlen(suffix);
  return n > s && strcmp(name + n - s, suffix) == 0;
}

static int by_name(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Appends the valid files of one cache folder (in name order, so that two exports of the same
   caches are the same bytes). */
static void export_folder(buffer *b, kind k, cubert_cache_bundle_counts *counts) {
  char *dir = cubert_cache_dir(kind_folders[k]);
  DIR *d = dir ? opendir(dir) : NULL;
  char **names = NULL;
  size_t count = 0, capacity = 0;
  for (struct dirent *e; d && (e = readdir(d));) {
    if (!has_suffix(e->d_name, kind_suffixes[k])) continue;
    if (count == capacity) {
      char **p = realloc(names, (capacity = capacity ? 2 * capacity : 64) * sizeof *names);
      if (!p) break;
      names = p;
    }
    if ((names[count] = strdup(e->d_name))) ++count;
  }
  if (d) closedir(d);
  if (count) qsort(names, count, sizeof *names, by_name);
  for (size_t i = 0; i < count; ++i) {
    char path[4096];
    size_t size = 0;
    const char *reason = NULL;
    int missing = 0;
    unsigned char *data = NULL;
    if (snprintf(path, sizeof path, "%s/%s", dir, names[i]) < (int)sizeof path)
      data = cubert_cache_file_read_trusted(
          path, kind_folders[k], 1, k == KIND_TUNE ? MAX_TUNE_FILE_BYTES : MAX_PROGRAM_FILE_BYTES,
          &size, &reason, &missing);
    file_facts f;
    if (!data || file_facts_of(k, data, size, &f) || strcmp(f.name, names[i]) != 0 ||
        (k == KIND_TUNE && strcmp(f.version, CUBERT_VERSION_STRING) == 0 &&
         !tune_valid((const char *)data, size, f.identity))) {
      if (!missing) counts->invalid++;
      free(data);
      free(names[i]);
      continue;
    }
    char line[LINE_BYTES];
    snprintf(line, sizeof line, "entry %s %s %s %zu\ndevice %s\n", kind_names[k], f.name, f.version,
             size, f.identity);
    put_text(b, line);
    put(b, data, size);
    if (k == KIND_TUNE)
      counts->tune_files++;
    else
      counts->program_files++;
    free(data);
    free(names[i]);
  }
  free(names);
  free(dir);
}

/* The opening of export and import: zeroes *out_counts (when given), then INVALID_ARGUMENT for
   a NULL path, NOT_FOUND when no cache folder can be formed. */
static cubert_status bundle_begin(const char *path, cubert_cache_bundle_counts *out_counts) {
  if (out_counts) *out_counts = (cubert_cache_bundle_counts){0};
  if (!path) return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT, "path is NULL");
  char *root = cubert_cache_dir("");
  if (!root)
    return cubert_status_make(CUBERT_CODE_NOT_FOUND,
                              "no cache folder (set CUBERT_CACHE_DIR, XDG_CACHE_HOME or HOME)");
  free(root);
  return NULL;
}

cubert_status cubert_cache_bundle_export(const char *path, cubert_cache_bundle_counts *out_counts) {
  cubert_cache_bundle_counts counts = {0};
  CUBERT_RETURN_IF_ERROR(bundle_begin(path, out_counts));
  buffer b = {0};
  put_text(&b, BUNDLE_MAGIC "cubert " CUBERT_VERSION_STRING_BUILD "\n");
  export_folder(&b, KIND_TUNE, &counts);
  export_folder(&b, KIND_PROGRAM, &counts);
  char end[64];
  snprintf(end, sizeof end, "end %016" PRIx64 "\n",
           b.failed ? 0 : cubert_fnv1a64(CUBERT_FNV1A64_SEED, b.data, b.size));
  put_text(&b, end);
  if (b.failed) {
    free(b.data);
    return cubert_status_make(CUBERT_CODE_OUT_OF_MEMORY, "host allocation failed");
  }
  const void *parts[] = {b.data};
  const size_t sizes[] = {b.size};
  int error = cubert_cache_file_write(path, parts, sizes, 1);
  free(b.data);
  if (error)
    return cubert_status_make(CUBERT_CODE_EXECUTION, "cannot write the bundle '%s': %s", path,
                              strerror(error));
  if (out_counts) *out_counts = counts;
  return NULL;
}

/* ---- import ------------------------------------------------------------------------------ */

/* The identities of the devices available here (malloc'd array of malloc'd strings). */
static char **local_identities(size_t *out_count) {
  *out_count = 0;
  size_t count = 0;
  cubert_status s = cubert_devices_count(NULL, &count);
  cubert_device_info *infos = !s && count ? calloc(count, sizeof *infos) : NULL;
  if (infos) s = cubert_devices_list(NULL, infos, count, &count);
  cubert_status_free(s);
  char **ids = infos && !s ? calloc(count, sizeof *ids) : NULL;
  for (size_t i = 0; ids && i < count; ++i)
    if (infos[i].available) {
      char *id = cubert_tune_disk_identity_of(&infos[i].properties);
      if (id) ids[(*out_count)++] = id;
    }
  free(infos);
  return ids;
}

static int known(char *const *ids, size_t count, const char *identity) {
  for (size_t i = 0; i < count; ++i)
    if (strcmp(ids[i], identity) == 0) return 1;
  return 0;
}

/* The next line of [*p, end) without its '\n', NUL-terminated into out; 0 when none fits. */
static int next_line(const char **p, const char *end, char *out, size_t capacity) {
  const char *nl = memchr(*p, '\n', (size_t)(end - *p));
  if (!nl || (size_t)(nl - *p) >= capacity) return 0;
  memcpy(out, *p, (size_t)(nl - *p));
  out[nl - *p] = 0;
  *p = nl + 1;
  return 1;
}

/* Merges an autotune file's records into this machine's file of that identity. 0 or errno. */
static int import_tune(const char *text, size_t size, const file_facts *f) {
  cubert_tune_record *records = NULL;
  size_t count = 0;
  if (cubert_tune_disk_parse(text, size, f->identity, &records, &count)) return EINVAL;
  char *dir = cubert_cache_dir("tune");
  char *path = cubert_tune_disk_path(dir, f->identity);
  int error = dir && path ? 0 : ENOMEM;
  for (size_t i = 0; !error && i < count; ++i)
    error = cubert_tune_disk_update(dir, path, f->identity, &records[i], NULL, NULL, NULL, NULL);
  free(records);
  free(path);
  free(dir);
  return error;
}

/* Adds a program binary unless a file of its key is there already. 0 or errno; *out_present
   when the file existed. */
static int import_program(const unsigned char *data, size_t size, const file_facts *f,
                          int *out_present) {
  *out_present = 0;
  char *dir = cubert_cache_dir("opencl");
  if (!dir) return ENOMEM;
  int error = cubert_cache_make_dirs(dir, "opencl");
  char path[4096];
  if (!error && snprintf(path, sizeof path, "%s/%s", dir, f->name) >= (int)sizeof path)
    error = ENAMETOOLONG;
  free(dir);
  if (error) return error;
  if (access(path, F_OK) == 0) {
    *out_present = 1;
    return 0;
  }
  const void *parts[] = {data};
  const size_t sizes[] = {size};
  return cubert_cache_file_write(path, parts, sizes, 1);
}

/* Checks the bundle's frame: magic, trailing checksum. Returns the end of the entries. */
static const char *bundle_frame(const char *data, size_t size) {
  size_t magic = strlen(BUNDLE_MAGIC);
  if (size < magic || memcmp(data, BUNDLE_MAGIC, magic) != 0) return NULL;
  /* The last line is "end <16 hex>\n": 21 bytes. */
  if (size < magic + 21 || data[size - 1] != '\n' || memcmp(data + size - 21, "end ", 4) != 0)
    return NULL;
  char hex[17];
  memcpy(hex, data + size - 17, 16);
  hex[16] = 0;
  char *stop = NULL;
  uint64_t want = strtoull(hex, &stop, 16);
  if (stop != hex + 16 || want != cubert_fnv1a64(CUBERT_FNV1A64_SEED, data, size - 21)) return NULL;
  return data + size - 21;
}

/* What a bundle entry's two lines say of its file: kind, file name, version, device. */
typedef struct entry_label {
  const char *kind, *name, *version, *device;
} entry_label;

/* Re-validates one entry's file against its label and this machine (version, devices listed
   here: ids) and imports it, counting the verdict in *counts. An error only when a valid
   entry cannot be written or memory runs out. */
static cubert_status import_entry(const entry_label *label, const unsigned char *file, size_t bytes,
                                  char **ids, size_t id_count, cubert_cache_bundle_counts *counts) {
  kind k = strcmp(label->kind, "tune") == 0 ? KIND_TUNE : KIND_PROGRAM;
  file_facts f;
  /* A private NUL-terminated copy: the autotune parser reads text. */
  unsigned char *copy = malloc(bytes + 1);
  if (!copy) return cubert_status_make(CUBERT_CODE_OUT_OF_MEMORY, "host allocation failed");
  memcpy(copy, file, bytes);
  copy[bytes] = 0;
  cubert_status s = NULL;
  if ((strcmp(label->kind, kind_names[k]) != 0) || file_facts_of(k, copy, bytes, &f) ||
      strcmp(f.name, label->name) != 0 || strcmp(f.version, label->version) != 0 ||
      strcmp(f.identity, label->device) != 0) {
    counts->invalid++;
  } else if (strcmp(f.version,
                    k == KIND_TUNE ? CUBERT_VERSION_STRING : CUBERT_VERSION_STRING_BUILD) != 0) {
    counts->other_version++;
  } else if (!known(ids, id_count, f.identity)) {
    counts->other_device++;
  } else if (k == KIND_TUNE && !tune_valid((const char *)copy, bytes, f.identity)) {
    counts->invalid++;
  } else {
    int present = 0;
    int error = k == KIND_TUNE ? import_tune((const char *)copy, bytes, &f)
                               : import_program(copy, bytes, &f, &present);
    if (error)
      s = cubert_status_make(CUBERT_CODE_EXECUTION, "cannot import '%s' into the %s cache: %s",
                             label->name, kind_folders[k], cubert_cache_error_text(error));
    else if (present)
      counts->present++;
    else if (k == KIND_TUNE)
      counts->tune_files++;
    else
      counts->program_files++;
  }
  free(copy);
  return s;
}

/* One entry of a bundle as its two lines give it, and where its file's bytes are. */
typedef struct bundle_entry {
  char kind[16], name[64], version[128], device[LINE_BYTES];
  const unsigned char *file;
  size_t bytes;
} bundle_entry;

/* Parses every entry of the bundle's body [p, end) into *out_entries (malloc'd) before anything
   is imported, so that a malformed entry anywhere imports nothing. */
static cubert_status parse_entries(const char *path, const char *p, const char *end,
                                   bundle_entry **out_entries, size_t *out_count) {
  *out_entries = NULL;
  *out_count = 0;
  char line[LINE_BYTES];
  if (!next_line(&p, end, line, sizeof line) || strncmp(line, "cubert ", 7) != 0)
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                              "'%s' is not a cubert cache bundle: no cubert line; nothing was "
                              "imported",
                              path);
  bundle_entry *entries = NULL;
  size_t count = 0, capacity = 0;
  while (p < end) {
    if (count == capacity) {
      bundle_entry *grown =
          realloc(entries, (capacity = capacity ? 2 * capacity : 16) * sizeof *grown);
      if (!grown) {
        free(entries);
        return cubert_status_make(CUBERT_CODE_OUT_OF_MEMORY, "host allocation failed");
      }
      entries = grown;
    }
    bundle_entry *e = &entries[count];
    unsigned long long bytes = 0;
    int n = 0;
    if (!next_line(&p, end, line, sizeof line) ||
        sscanf(line, "entry %15s %63s %127s %llu%n", e->kind, e->name, e->version, &bytes, &n) !=
            4 ||
        line[n] != 0 || !next_line(&p, end, e->device, sizeof e->device) ||
        strncmp(e->device, "device ", 7) != 0 || bytes > (unsigned long long)(end - p)) {
      /* The frame's checksum held, so this is a bundle this code did not write. */
      free(entries);
      return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                                "'%s': entry %zu is malformed (not \"entry <kind> <name> "
                                "<version> <bytes>\" and \"device <identity>\" lines followed "
                                "by that many bytes); nothing was imported",
                                path, count + 1);
    }
    e->file = (const unsigned char *)p;
    e->bytes = (size_t)bytes;
    p += bytes;
    ++count;
  }
  *out_entries = entries;
  *out_count = count;
  return NULL;
}

/* Reads the bundle file the caller named; the error says which path failed and why. */
static cubert_status read_bundle(const char *path, char **out_data, size_t *out_size) {
  const char *reason = NULL;
  int missing = 0;
  *out_data =
      (char *)cubert_cache_file_read(path, 1, MAX_BUNDLE_BYTES, out_size, &reason, &missing);
  if (*out_data) return NULL;
  if (strcmp(reason, "cannot stat") == 0 || strcmp(reason, "cannot open") == 0)
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                              "bundle file '%s' cannot be opened: %s (check the path)", path,
                              strerror(errno));
  return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                            "bundle file '%s' cannot be read: %s (give the path of a file that "
                            "cubert_cache_bundle_export wrote)",
                            path, strcmp(reason, "truncated header") == 0 ? "it is empty" : reason);
}

cubert_status cubert_cache_bundle_import(const char *path, cubert_cache_bundle_counts *out_counts) {
  cubert_cache_bundle_counts counts = {0};
  CUBERT_RETURN_IF_ERROR(bundle_begin(path, out_counts));
  size_t size = 0;
  char *data = NULL;
  CUBERT_RETURN_IF_ERROR(read_bundle(path, &data, &size));
  const char *end = bundle_frame(data, size);
  if (!end) {
    free(data);
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                              "'%s' is not a complete cubert cache bundle (bad header or "
                              "checksum); nothing was imported",
                              path);
  }
  bundle_entry *entries = NULL;
  size_t count = 0;
  cubert_status s = parse_entries(path, data + strlen(BUNDLE_MAGIC), end, &entries, &count);
  size_t id_count = 0;
  char **ids = s ? NULL : local_identities(&id_count);
  for (size_t i = 0; !s && i < count; ++i) {
    const bundle_entry *e = &entries[i];
    const entry_label label = {e->kind, e->name, e->version, e->device + 7};
    s = import_entry(&label, e->file, e->bytes, ids, id_count, &counts);
  }
  for (size_t i = 0; i < id_count; ++i) free(ids[i]);
  free(ids);
  free(entries);
  free(data);
  if (out_counts) *out_counts = counts;
  return s;
}
