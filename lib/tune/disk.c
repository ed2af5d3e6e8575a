/* cubert — the autotune disk cache: one text file per device identity.

   File name: <cache dir>/tune/<FNV-1a 64 of the identity, hex>.tune. Layout:

     cubert-tune 1
     device <backend>|<name>|<driver version>|<platform version>
     cubert <version>
     <set> <checksum hex> <winner index> <winner name> <median ns> <n> <field 1> .. <field n>
     ...
     end <FNV-1a 64 hex of every byte before this line>

   Text, so that a person (or cubert-info --tune) can read it; the trailing checksum and the
   exact header lines make a truncated, garbage or foreign file (another device whose identity
   hashed alike, another cubert version) a rejected file rather than wrong winners. Entries
   are additionally keyed by the set's checksum, compared when a set asks for them.

   Concurrency. Each update (a new winner, an eviction) is a read-modify-write of the whole
   file under flock() on a sibling ".lock" file, so two processes (or two devices of one
   process with the same identity) tuning at once both keep their entries; the write itself is
   temp + rename (cache_file.c), so a reader never needs the lock and a writer killed at any
   moment leaves the old file. flock is advisory and released by the kernel when the holder
   dies, so a killed writer cannot wedge the cache. A live process may still hold the lock for
   ever (stopped, or a program that holds it on purpose): the wait is bounded
   (cubert_tune_disk_lock_timeout_ms), after which the update is given up with ETIMEDOUT and the
   winner stays in memory. When the lock file cannot be opened the update goes ahead unlocked:
   an entry may then be lost to a concurrent writer, never corrupted.

   Trust. Winners decide which code runs, so a file or folder that another user owns or can
   write is not read (cache_file.c, "Trust"): the set is tuned afresh, and the next update
   replaces such a file with one of this user's (0600) or, in such a folder, writes nothing.

   Size. A file holds at most MAX_RECORDS (65,536) entries. An update that would exceed it
   evicts the oldest entries (records are kept in the order they were written, a replaced one
   moving to the end), so a full file keeps recording new winners. */
#include "tune/disk.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/cache_file.h"
#include "base/log.h"
#include "cubert/client.h"
#include "cubert/cubert.h"
#include "cubert/server.h"

#define FILE_MAGIC "cubert-tune 1\n"
#define MAX_FILE_BYTES (16u << 20)
#define MAX_RECORDS 65536u

_Atomic uint32_t cubert_tune_disk_lock_timeout_ms = 10000;

/* flock(LOCK_EX) with a deadline: polls with LOCK_NB (flock has no timed form). 0 or an errno
   value (ETIMEDOUT). */
static int lock_with_timeout(int fd) {
  uint64_t timeout_ns = (uint64_t)atomic_load(&cubert_tune_disk_lock_timeout_ms) * 1000000u;
  uint64_t start = cubert_now_ns();
  for (unsigned pause_us = 100;;) {
    if (flock(fd, LOCK_EX | LOCK_NB) == 0) return 0;
    if (errno != EWOULDBLOCK && errno != EINTR) return errno;
    if (cubert_now_ns() - start >= timeout_ns) return ETIMEDOUT;
    usleep(pause_us);
    if (pause_us < 20000) pause_us *= 2; /* a writer holds it for milliseconds */
  }
}

static void append_clean(char *out, size_t capacity, const char *text) {
  size_t len = strlen(out);
  for (; *text && len + 1 < capacity; ++text)
    out[len++] = (*text < 0x20 || *text == 0x7f || *text == '|') ? '?' : *text;
  out[len] = 0;
}

char *cubert_tune_disk_identity(const cubert_client *client) {
  return cubert_tune_disk_identity_of(cubert_client_properties(client));
}

char *cubert_tune_disk_identity_of(const cubert_device_properties *p) {
  if (!p) return NULL;
  char text[1024] = "";
  const char *parts[] = {p->backend, p->name, p->driver_version, p->platform_version};
  for (size_t i = 0; i < 4; ++i) {
    if (i) strncat(text, "|", sizeof(text) - strlen(text) - 1);
    /* Control characters would break the line format; '|' the field boundaries. */
    char field[300] = "";
    append_clean(field, sizeof(field), parts[i]);
    size_t len = strlen(text);
    snprintf(text + len, sizeof(text) - len, "%s", field);
  }
  return strdup(text);
}

char *cubert_tune_disk_path(const char *dir, const char *identity) {
  if (!dir) return NULL;
  char path[4096];
  int n = snprintf(path, sizeof(path), "%s/%016" PRIx64 ".tune", dir,
                   cubert_fnv1a64(CUBERT_FNV1A64_SEED, identity, strlen(identity)));
  return n > 0 && (size_t)n < sizeof(path) ? strdup(path) : NULL;
}

/* The header lines a valid file of this identity starts with. */
static int header_text(const char *identity, char *out, size_t capacity) {
  int n =
      snprintf(out, capacity, FILE_MAGIC "device %s\ncubert %s\n", identity, CUBERT_VERSION_STRING);
  return n > 0 && (size_t)n < capacity ? n : -1;
}

static int name_ok(const char *s, size_t len) {
  if (len == 0 || len >= CUBERT_TUNE_NAME_BYTES) return 0;
  for (size_t i = 0; i < len; ++i)
    if (s[i] <= 0x20 || s[i] >= 0x7f) return 0;
  return 1;
}

/* Next space- or newline-terminated token of the line [*p, end). */
static int token(const char **p, const char *end, const char **out, size_t *out_len) {
  const char *s = *p;
  while (s < end && *s == ' ') ++s;
  const char *e = s;
  while (e < end && *e != ' ') ++e;
  if (e == s) return 0;
  *out = s;
  *out_len = (size_t)(e - s);
  *p = e;
  return 1;
}

static int number(const char **p, const char *end, int base, uint64_t *out) {
  const char *s;
  size_t len;
  if (!token(p, end, &s, &len) || len > 20) return 0;
  char buf[24];
  memcpy(buf, s, len);
  buf[len] = 0;
  char *stop = NULL;
  errno = 0;
  if (buf[0] == '-' || buf[0] == '+') return 0;
  unsigned long long v = strtoull(buf, &stop, base);
  if (errno || *stop) return 0;
  *out = v;
  return 1;
}

static int parse_record(const char *line, const char *end, cubert_tune_record *r) {
  const char *p = line, *s;
  size_t len;
  uint64_t winner, count;
  memset(r, 0, sizeof(*r));
  if (!token(&p, end, &s, &len) || !name_ok(s, len)) return 0;
  memcpy(r->set_name, s, len);
  if (!number(&p, end, 16, &r->checksum) || !number(&p, end, 10, &winner) || winner > 255) return 0;
  r->winner = (uint32_t)winner;
  if (!token(&p, end, &s, &len) || !name_ok(s, len)) return 0;
  memcpy(r->winner_name, s, len);
  if (!number(&p, end, 10, &r->winner_ns) || !number(&p, end, 10, &count) ||
      count > CUBERT_TUNE_KEY_MAX_FIELDS)
    return 0;
  r->key.count = (uint32_t)count;
  for (uint64_t i = 0; i < count; ++i)
    if (!number(&p, end, 10, &r->key.fields[i])) return 0;
  return token(&p, end, &s, &len) == 0; /* nothing after the fields */
}

const char *cubert_tune_disk_parse(const char *text, size_t size, const char *identity,
                                   cubert_tune_record **out_records, size_t *out_count) {
  *out_records = NULL;
  *out_count = 0;
  char header[1200];
  int header_len = header_text(identity, header, sizeof(header));
  if (header_len < 0) return "identity too long";
  if (size < sizeof(FILE_MAGIC) - 1 || memcmp(text, FILE_MAGIC, sizeof(FILE_MAGIC) - 1) != 0)
    return "not a cubert tune file";
  if (memchr(text, 0, size)) return "binary garbage";
  /* The last line must be "end <16 hex digits>\n" over everything before it. */
  const size_t trailer = 4 + 16 + 1;
  if (size < (size_t)header_len + trailer || text[size - 1] != '\n') return "truncated";
  const char *end_line = text + size - trailer;
  if (memcmp(end_line, "end ", 4) != 0 || (end_line > text && end_line[-1] != '\n'))
    return "truncated";
  uint64_t sum = 0;
  const char *p = end_line + 4;
  if (!number(&p, text + size - 1, 16, &sum)) return "truncated";
  if (sum != cubert_fnv1a64(CUBERT_FNV1A64_SEED, text, (size_t)(end_line - text)))
    return "checksum mismatch";
  if (memcmp(text, header, (size_t)header_len) != 0)
    return "written for another device, driver or cubert version";
  size_t capacity = 0, count = 0;
  cubert_tune_record *records = NULL;
  for (const char *line = text + header_len; line < end_line;) {
    const char *nl = memchr(line, '\n', (size_t)(end_line - line));
    if (!nl) break;
    if (count == capacity) {
      if (capacity >= MAX_RECORDS) break;
      capacity = capacity ? capacity * 2 : 16;
      cubert_tune_record *grown = realloc(records, capacity * sizeof(*grown));
      if (!grown) {
        free(records);
        return "out of host memory";
      }
      records = grown;
    }
    if (!parse_record(line, nl, &records[count])) {
      free(records);
      return "malformed entry";
    }
    ++count;
    line = nl + 1;
  }
  *out_records = records;
  *out_count = count;
  return NULL;
}

const char *cubert_tune_disk_load(const char *path, const char *identity,
                                  cubert_tune_record **out_records, size_t *out_count) {
  *out_records = NULL;
  *out_count = 0;
  size_t size = 0;
  const char *reason = NULL;
  int missing = 0;
  unsigned char *data =
      cubert_cache_file_read_trusted(path, "tune", 1, MAX_FILE_BYTES, &size, &reason, &missing);
  if (!data) return missing ? NULL : reason;
  reason = cubert_tune_disk_parse((const char *)data, size, identity, out_records, out_count);
  free(data);
  return reason;
}

static int same_key(const cubert_tune_key *a, const cubert_tune_key *b) {
  if (a->count != b->count) return 0;
  for (uint32_t i = 0; i < a->count; ++i)
    if (a->fields[i] != b->fields[i]) return 0;
  return 1;
}

/* Serialises header + records + trailer into one malloc'd buffer. */
static char *serialise(const char *identity, const cubert_tune_record *records, size_t count,
                       size_t *out_size) {
  size_t capacity =
      1200 + 64 + count * (2 * CUBERT_TUNE_NAME_BYTES + 80 + 21 * CUBERT_TUNE_KEY_MAX_FIELDS);
  char *buf = malloc(capacity);
  if (!buf) return NULL;
  int n = header_text(identity, buf, capacity);
  if (n < 0) {
    free(buf);
    return NULL;
  }
  size_t len = (size_t)n;
  for (size_t i = 0; i < count; ++i) {
    const cubert_tune_record *r = &records[i];
    len += (size_t)snprintf(buf + len, capacity - len, "%s %016" PRIx64 " %u %s %" PRIu64 " %u",
                            r->set_name, r->checksum, r->winner, r->winner_name, r->winner_ns,
                            r->key.count);
    for (uint32_t f = 0; f < r->key.count; ++f)
      len += (size_t)snprintf(buf + len, capacity - len, " %" PRIu64, r->key.fields[f]);
    buf[len++] = '\n';
  }
  uint64_t sum = cubert_fnv1a64(CUBERT_FNV1A64_SEED, buf, len);
  len += (size_t)snprintf(buf + len, capacity - len, "end %016" PRIx64 "\n", sum);
  *out_size = len;
  return buf;
}

int cubert_tune_disk_update(const char *dir, const char *path, const char *identity,
                            const cubert_tune_record *put, const cubert_tune_record *drop,
                            cubert_tune_record **out_records, size_t *out_count,
                            const char **out_rejected) {
  if (out_records) *out_records = NULL;
  if (out_count) *out_count = 0;
  if (out_rejected) *out_rejected = NULL;
  int error = cubert_cache_make_dirs(dir, "tune");
  if (error) return error;
  char lock_path[4200];
  snprintf(lock_path, sizeof(lock_path), "%s.lock", path);
  int lock_fd = open(lock_path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (lock_fd >= 0) {
    (void)fchmod(lock_fd, 0600); /* whatever the umask; fails harmlessly on another's file */
    error = lock_with_timeout(lock_fd);
    if (error == ETIMEDOUT) {
      close(lock_fd);
      return error;
    }
    error = 0; /* another failure to lock: go ahead unlocked, as without a lock file */
  }
  cubert_tune_record *records = NULL;
  size_t count = 0;
  const char *rejected = cubert_tune_disk_load(path, identity, &records, &count);
  if (out_rejected) *out_rejected = rejected;
  size_t kept = 0;
  for (size_t i = 0; i < count; ++i) {
    const cubert_tune_record *r = &records[i];
    int replaced = put && strcmp(r->set_name, put->set_name) == 0 && same_key(&r->key, &put->key);
    int dropped = drop && strcmp(r->set_name, drop->set_name) == 0 &&
                  r->checksum == drop->checksum && same_key(&r->key, &drop->key);
    if (!replaced && !dropped) records[kept++] = *r;
  }
  count = kept;
  if (put && count >= MAX_RECORDS) {
    /* Full: the oldest entries go, so that the file keeps recording new winners. */
    size_t evict = count - (MAX_RECORDS - 1);
    memmove(records, records + evict, (count - evict) * sizeof(*records));
    count -= evict;
  }
  if (put) {
    cubert_tune_record *grown = realloc(records, (count + 1) * sizeof(*grown));
    if (!grown) {
      error = ENOMEM;
    } else {
      records = grown;
      records[count++] = *put;
    }
  }
  size_t size = 0;
  char *text = error ? NULL : serialise(identity, records, count, &size);
  if (!error && !text) error = ENOMEM;
  if (!error) {
    const void *parts[] = {text};
    error = cubert_cache_file_write(path, parts, &size, 1);
  }
  /* Writers of this file hold the lock, so temporary files seen now are left over from killed
     writers. */
  if (!error) cubert_cache_file_remove_stale(path);
  free(text);
  if (lock_fd >= 0) close(lock_fd); /* releases the flock */
  if (!error && out_records) {
    *out_records = records;
    *out_count = count;
  } else {
    free(records);
  }
  return error;
}
