/* cubert — files of the on-disk caches (the OpenCL program cache, the autotune cache).

   Every cache follows the same rules: a folder from CUBERT_CACHE_DIR or XDG, files replaced
   atomically (unique temporary file + rename, so a reader or a process killed mid-write never
   leaves a half-written file behind), and reads that refuse anything but a bounded regular
   file, so that a FIFO, a device node or a huge file planted at a cache path cannot block or
   exhaust the process. Parsing and validating the contents is each cache's business. */
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
#include <unistd.h>

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

int cubert_cache_make_dirs(const char *dir) {
  char path[4096];
  size_t len = strlen(dir);
  if (len == 0 || len >= sizeof(path)) return ENAMETOOLONG;
  memcpy(path, dir, len + 1);
  for (size_t i = 1; i <= len; ++i) {
    if (path[i] != '/' && path[i] != '\0') continue;
    char saved = path[i];
    path[i] = '\0';
    if (mkdir(path, 0755) != 0 && errno != EEXIST) return errno;
    path[i] = saved;
  }
  struct stat st;
  if (stat(dir, &st) != 0) return errno;
  return S_ISDIR(st.st_mode) ? 0 : ENOTDIR;
}

unsigned char *cubert_cache_file_read(const char *path, size_t min_bytes, size_t max_bytes,
                                      size_t *out_size, const char **out_reason, int *out_missing) {
  *out_missing = 0;
  *out_size = 0;
  struct stat st;
  /* Checked before the open as well as after it: opening some device nodes has effects. */
  if (stat(path, &st) != 0) {
    /* ENOTDIR: a file where a folder of the path should be, which has no cache file either. */
    *out_missing = errno == ENOENT || errno == ENOTDIR;
    *out_reason = "cannot stat";
    return NULL;
  }
  if (!S_ISREG(st.st_mode)) {
    *out_reason = "not a regular file";
    return NULL;
  }
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) {
    *out_missing = errno == ENOENT;
    *out_reason = "cannot open";
    return NULL;
  }
  unsigned char *data = NULL;
  *out_reason = NULL;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    *out_reason = "not a regular file";
  } else if ((uint64_t)st.st_size < min_bytes || (uint64_t)st.st_size > max_bytes) {
    *out_reason =
        (uint64_t)st.st_size < min_bytes ? "truncated header" : "larger than any valid file";
  } else if (!(data = malloc((size_t)st.st_size + 1))) {
    *out_reason = "out of host memory";
  } else {
    size_t done = 0, want = (size_t)st.st_size;
    while (done < want) {
      ssize_t n = read(fd, data + done, want - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      done += (size_t)n;
    }
    if (done != want) *out_reason = "short read";
    data[done] = 0; /* text formats may parse the buffer as a string */
    *out_size = done;
  }
  close(fd);
  if (*out_reason) {
    free(data);
    *out_size = 0;
    return NULL;
  }
  return data;
}

int cubert_cache_file_write(const char *path, const void *const *parts, const size_t *sizes,
                            size_t count) {
  static atomic_uint counter;
  char tmp[4200];
  FILE *f = NULL;
  /* A name taken already belongs to no writer of this process (the counter never repeats):
     it is the leftover of a killed process that had this pid (pids are reused, and in a
     container the same few come round often), or a live one with this pid in another pid
     namespace sharing the folder. Neither may be removed here; the next name is tried, so a
     leftover never stops the cache from being written. */
  for (int attempt = 0; !f; ++attempt) {
    int n = snprintf(tmp, sizeof(tmp), "%s.tmp.%ld.%u", path, (long)getpid(),
                     atomic_fetch_add(&counter, 1u));
    if (n < 0 || (size_t)n >= sizeof(tmp)) return ENAMETOOLONG;
    f = fopen(tmp, "wbx");
    if (!f && (errno != EEXIST || attempt >= 1000)) return errno;
  }
  int ok = 1, error = 0;
  for (size_t i = 0; ok && i < count; ++i) ok = fwrite(parts[i], 1, sizes[i], f) == sizes[i];
  if (!ok) error = errno ? errno : EIO;
  if (fclose(f) != 0 && ok) {
    ok = 0;
    error = errno;
  }
  if (ok && rename(tmp, path) != 0) {
    ok = 0;
    error = errno;
  }
  if (!ok) unlink(tmp);
  return ok ? 0 : error;
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
