/* cubert — files of the on-disk caches (the OpenCL program cache, the autotune cache).

   Every cache follows the same rules: a folder from CUBERT_CACHE_DIR or XDG, files replaced
   atomically (unique temporary file + rename, so a reader or a process killed mid-write never
   leaves a half-written file behind), and reads that refuse anything but a bounded regular
   file, so that a FIFO, a device node or a huge file planted at a cache path cannot block or
   exhaust the process. Parsing and validating the contents is each cache's business.

   Trust. A cache file is code (a program binary; on PoCL one carries host code) or decides
   which code runs (a tuning winner), so one that another user could have written must not be
   used: as CUDA's compute cache and Mesa's shader cache do, folders are created 0700 and files
   0600 whatever the umask, and a file is used only when it and its folder belong to the
   effective user and neither group nor others may write them. A folder that fails is neither
   read nor written (writing our binaries where others can replace them would only feed the
   next reader); a file that fails in a good folder is ignored and replaced by the next write.
   Each failure is logged once per path, naming the owner or mode found and the fix. */
#include "base/cache_file.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "base/log.h"
#include "cubert/config.h"

uint64_t cubert_fnv1a64(uint64_t seed, const void *data, size_t size) {
  const unsigned char *p = data;
  uint64_t h = seed;
  for (size_t i = 0; i < size; ++i) {
    h ^= p[i];
    h *= 0x100000001b3ull;
  }
  return h;
}

char *cubert_cache_dir(const char *suffix) {
  const cubert_config *config = cubert_config_get();
  const char *base = config ? config->cache_dir : NULL;
  char buf[4096];
  int n;
  if (base && base[0]) {
    n = snprintf(buf, sizeof(buf), "%s/%s", base, suffix);
  } else {
    const char *xdg = getenv("XDG_CACHE_HOME");
    const char *home = getenv("HOME");
    /* XDG: a relative XDG_CACHE_HOME is invalid and must be ignored. */
    if (xdg && xdg[0] == '/')
      n = snprintf(buf, sizeof(buf), "%s/cubert/%s", xdg, suffix);
    else if (home && home[0])
      n = snprintf(buf, sizeof(buf), "%s/.cache/cubert/%s", home, suffix);
    else
      return NULL;
  }
  if (n < 0 || (size_t)n >= sizeof(buf)) return NULL;
  return strdup(buf);
}

/* ---- trust ------------------------------------------------------------------------------ */

enum { WARNED_SLOTS = 256 };
static _Atomic uint64_t g_warned[WARNED_SLOTS]; /* hashes of the paths warned about */

/* 1 the first time `path` is offered (its warning is due), 0 after. A full table warns again
   rather than stay silent. */
static int first_warning(const char *path) {
  uint64_t h = cubert_fnv1a64(CUBERT_FNV1A64_SEED, path, strlen(path)) | 1u; /* never 0 */
  for (size_t i = 0; i < WARNED_SLOTS; ++i) {
    uint64_t seen = 0;
    if (atomic_compare_exchange_strong(&g_warned[i], &seen, h)) return 1;
    if (seen == h) return 0;
  }
  return 1;
}

/* Why `st` may not be trusted, written to why[0..capacity) with the fix for `path` to
   fix[0..capacity); 0 when it may. */
static int untrusted(const struct stat *st, const char *path, int folder, char *why,
                     size_t why_capacity, char *fix, size_t capacity) {
  unsigned me = (unsigned)geteuid(), owner = (unsigned)st->st_uid;
  unsigned mode = (unsigned)st->st_mode & 07777u;
  if (owner != me) {
    snprintf(why, why_capacity, "is owned by uid %u, not by you (uid %u)", owner, me);
    snprintf(fix, capacity, "remove it (rm %s'%s'), and cubert makes its own", folder ? "-r " : "",
             path);
    return 1;
  }
  if (!(mode & (S_IWGRP | S_IWOTH))) return 0;
  snprintf(why, why_capacity, "has mode %04o: %s can write it", mode,
           (mode & S_IWGRP) && (mode & S_IWOTH) ? "group and others"
           : (mode & S_IWGRP)                   ? "its group"
                                                : "others");
  if (folder)
    snprintf(fix, capacity, "chmod go-w '%s'", path);
  else
    snprintf(fix, capacity, "remove it (rm '%s'), or chmod go-w it if you wrote it yourself", path);
  return 1;
}

/* Logs the trust failure of `path` once per path and process. */
static void warn_untrusted(const char *category, const char *path, int folder, const char *why,
                           const char *fix) {
  if (!first_warning(path)) return;
  if (folder)
    cubert_log(CUBERT_LOG_WARN, category,
               "the cache folder '%s' %s, so another user could plant cache files in it: cubert "
               "neither uses nor writes any there (fix: %s, or set CUBERT_CACHE_DIR to a folder "
               "of your own)",
               path, why, fix);
  else
    cubert_log(CUBERT_LOG_WARN, category,
               "the cache file '%s' %s, so another user could have planted it: it is not used "
               "(fix: %s)",
               path, why, fix);
}

int cubert_cache_dir_check(const char *dir, const char *category) {
  struct stat st;
  if (stat(dir, &st) != 0) return errno;
  if (!S_ISDIR(st.st_mode)) return ENOTDIR;
  char why[160], fix[4400];
  if (!untrusted(&st, dir, 1, why, sizeof(why), fix, sizeof(fix))) return 0;
  warn_untrusted(category, dir, 1, why, fix);
  return CUBERT_CACHE_UNTRUSTED;
}

const char *cubert_cache_error_text(int error) {
  if (error == CUBERT_CACHE_UNTRUSTED)
    return "the cache folder is owned by another user or writable by group or others (see the "
           "warning logged for it)";
  return strerror(error);
}

int cubert_cache_make_dirs(const char *dir, const char *category) {
  char path[4096];
  size_t len = strlen(dir);
  if (len == 0 || len >= sizeof(path)) return ENAMETOOLONG;
  memcpy(path, dir, len + 1);
  for (size_t i = 1; i <= len; ++i) {
    if (path[i] != '/' && path[i] != '\0') continue;
    char saved = path[i];
    path[i] = '\0';
    if (mkdir(path, 0700) == 0) {
      /* The umask may have taken bits from 0700 (never added any): set the mode outright. */
      if (chmod(path, 0700) != 0) return errno;
    } else if (errno != EEXIST) {
      return errno;
    }
    path[i] = saved;
  }
  return cubert_cache_dir_check(dir, category);
}

/* The folder part of `path` into out; 0 when there is none or it does not fit. */
static int folder_of(const char *path, char *out, size_t capacity) {
  const char *slash = strrchr(path, '/');
  size_t len = slash ? (size_t)(slash - path) : 0;
  if (!slash || len >= capacity) return 0;
  if (len == 0) len = 1; /* "/name": the root folder */
  memcpy(out, path, len);
  out[len] = 0;
  return 1;
}

/* Reads fd (a regular file, st its fstat) of min_bytes..max_bytes; NULL with *out_reason. */
static unsigned char *read_fd(int fd, const struct stat *st, size_t min_bytes, size_t max_bytes,
                              size_t *out_size, const char **out_reason) {
  unsigned char *data = NULL;
  if ((uint64_t)st->st_size < min_bytes || (uint64_t)st->st_size > max_bytes) {
    *out_reason =
        (uint64_t)st->st_size < min_bytes ? "truncated header" : "larger than any valid file";
    return NULL;
  }
  if (!(data = malloc((size_t)st->st_size + 1))) {
    *out_reason = "out of host memory";
    return NULL;
  }
  size_t done = 0, want = (size_t)st->st_size;
  while (done < want) {
    ssize_t n = read(fd, data + done, want - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += (size_t)n;
  }
  if (done != want) {
    *out_reason = "short read";
    free(data);
    return NULL;
  }
  data[done] = 0; /* text formats may parse the buffer as a string */
  *out_size = done;
  return data;
}

/* cubert_cache_file_read, with the trust check when `category` is not NULL. */
static unsigned char *read_file(const char *path, const char *category, size_t min_bytes,
                                size_t max_bytes, size_t *out_size, const char **out_reason,
                                int *out_missing) {
  *out_missing = 0;
  *out_size = 0;
  *out_reason = NULL;
  struct stat st;
  /* Checked before the open as well as after it: opening some device nodes has effects. */
  if (stat(path, &st) != 0) {
    int error = errno;
    /* ENOTDIR: a file where a folder of the path should be, which has no cache file either. */
    *out_missing = error == ENOENT || error == ENOTDIR;
    *out_reason = "cannot stat";
    errno = error;
    return NULL;
  }
  if (!S_ISREG(st.st_mode)) {
    *out_reason = "not a regular file";
    return NULL;
  }
  char dir[4096];
  if (category && folder_of(path, dir, sizeof(dir)) &&
      cubert_cache_dir_check(dir, category) == CUBERT_CACHE_UNTRUSTED) {
    *out_reason = CUBERT_CACHE_UNTRUSTED_REASON;
    return NULL;
  }
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) {
    int error = errno;
    *out_missing = error == ENOENT;
    *out_reason = "cannot open";
    errno = error;
    return NULL;
  }
  unsigned char *data = NULL;
  char why[160], fix[4400];
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    *out_reason = "not a regular file";
  } else if (category && untrusted(&st, path, 0, why, sizeof(why), fix, sizeof(fix))) {
    warn_untrusted(category, path, 0, why, fix);
    *out_reason = CUBERT_CACHE_UNTRUSTED_REASON;
  } else {
    data = read_fd(fd, &st, min_bytes, max_bytes, out_size, out_reason);
  }
  close(fd);
  return data;
}

unsigned char *cubert_cache_file_read(const char *path, size_t min_bytes, size_t max_bytes,
                                      size_t *out_size, const char **out_reason, int *out_missing) {
  return read_file(path, NULL, min_bytes, max_bytes, out_size, out_reason, out_missing);
}

unsigned char *cubert_cache_file_read_trusted(const char *path, const char *category,
                                              size_t min_bytes, size_t max_bytes, size_t *out_size,
                                              const char **out_reason, int *out_missing) {
  return read_file(path, category, min_bytes, max_bytes, out_size, out_reason, out_missing);
}

int cubert_cache_file_write(const char *path, const void *const *parts, const size_t *sizes,
                            size_t count) {
  static atomic_uint counter;
  char tmp[4200];
  int fd = -1;
  /* A name taken already belongs to no writer of this process (the counter never repeats):
     it is the leftover of a killed process that had this pid (pids are reused, and in a
     container the same few come round often), or a live one with this pid in another pid
     namespace sharing the folder. Neither may be removed here; the next name is tried, so a
     leftover never stops the cache from being written. */
  for (int attempt = 0; fd < 0; ++attempt) {
    int n = snprintf(tmp, sizeof(tmp), "%s.tmp.%ld.%u", path, (long)getpid(),
                     atomic_fetch_add(&counter, 1u));
    if (n < 0 || (size_t)n >= sizeof(tmp)) return ENAMETOOLONG;
    fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0 && (errno != EEXIST || attempt >= 1000)) return errno;
  }
  /* 0600 whatever the umask (which can only have taken bits away). */
  int error = fchmod(fd, 0600) != 0 ? errno : 0;
  for (size_t i = 0; !error && i < count; ++i) {
    const unsigned char *p = parts[i];
    for (size_t done = 0; !error && done < sizes[i];) {
      ssize_t n = write(fd, p + done, sizes[i] - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0)
        error = n < 0 ? errno : EIO;
      else
        done += (size_t)n;
    }
  }
  if (close(fd) != 0 && !error) error = errno;
  if (!error && rename(tmp, path) != 0) error = errno;
  if (error) unlink(tmp);
  return error;
}

void cubert_cache_file_remove_stale(const char *path) {
  const char *slash = strrchr(path, '/');
  if (!slash) return;
  char dir[4096], prefix[512];
  size_t dir_len = (size_t)(slash - path);
  if (dir_len == 0 || dir_len >= sizeof(dir)) return;
  memcpy(dir, path, dir_len);
  dir[dir_len] = 0;
  int n = snprintf(prefix, sizeof(prefix), "%s.tmp.", slash + 1);
  if (n < 0 || (size_t)n >= sizeof(prefix)) return;
  DIR *d = opendir(dir);
  if (!d) return;
  for (struct dirent *e; (e = readdir(d));) {
    if (strncmp(e->d_name, prefix, (size_t)n) != 0) continue;
    char *end = NULL;
    long pid = strtol(e->d_name + n, &end, 10);
    if (pid <= 0 || !end || *end != '.' || pid == (long)getpid()) continue;
    /* Only the files of dead processes: a live writer may be about to rename its file. */
    if (kill((pid_t)pid, 0) == 0 || errno != ESRCH) continue;
    char victim[4600];
    if ((size_t)snprintf(victim, sizeof(victim), "%s/%s", dir, e->d_name) < sizeof(victim))
      unlink(victim);
  }
  closedir(d);
}
