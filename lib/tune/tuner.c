/* cubert — cubert_tune_execute(): the per-device tuner, its in-memory cache and measurement.

   The in-memory cache is a hash table keyed by (set pointer, key) under one mutex of its own,
   not the device lock: the hit path (lock, probe, unlock, launch) must cost well under a
   microsecond and must not wait behind another thread's profiled measurement, which holds the
   device lock. The set's address identifies it in memory (sets are static tables); on disk, and
   when a memory miss consults the records read from disk, the set's name and checksum do.

   An entry is PENDING while one thread measures its key; other threads asking for the key
   wait on `done` (see tune.h for why they wait) and the measuring thread is recorded so a
   candidate re-entering with the same key gets the default instead of waiting for itself. */
#include "tune/tuner.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "base/cache_file.h"
#include "base/log.h"
#include "client.h"
#include "cubert/config.h"
#include "device.h"
#include "dry_run.h"
#include "stream/aside.h"
#include "tune/background.h"
#include "tune/check.h"
#include "tune/disk.h"
#include "tune/scratch.h"

#define BUCKETS 1024u

/* PROVISIONAL: the background worker measures the key; calls meanwhile launch `winner`, the
   candidate the first call ran (background tuning, cubert/tune.h). */
enum { ENTRY_PENDING, ENTRY_DONE, ENTRY_PROVISIONAL };

typedef struct tune_entry {
  struct tune_entry *next;
  const cubert_tune_set *set;
  cubert_tune_key key;
  int state;
  uint32_t winner;
  pthread_t tuner; /* PENDING: the measuring thread */
} tune_entry;

struct cubert_tuner {
  pthread_mutex_t lock; /* everything below */
  pthread_cond_t done;  /* a PENDING entry became DONE or was removed */
  tune_entry *buckets[BUCKETS];
  cubert_tune_stats stats;
  char *identity;
  char *dir, *path;            /* NULL: memory only */
  int disk_loaded;             /* the file was read (once, at the first miss) */
  int disk_warned;             /* an unusable folder was reported */
  cubert_tune_record *records; /* the file's entries as last read or written */
  size_t record_count;
  cubert_tune_background *bg; /* the background worker (its own lock) */
};

static uint64_t key_hash(const cubert_tune_set *set, const cubert_tune_key *key) {
  uint64_t h = (uint64_t)(uintptr_t)set * 0x9e3779b97f4a7c15ull;
  for (uint32_t i = 0; i < key->count; ++i) h = (h ^ key->fields[i]) * 0x100000001b3ull;
  return h ^ (h >> 29);
}

static int key_equal(const cubert_tune_key *a, const cubert_tune_key *b) {
  if (a->count != b->count) return 0;
  for (uint32_t i = 0; i < a->count; ++i)
    if (a->fields[i] != b->fields[i]) return 0;
  return 1;
}

static tune_entry **find(cubert_tuner *t, const cubert_tune_set *set, const cubert_tune_key *key) {
  tune_entry **at = &t->buckets[key_hash(set, key) % BUCKETS];
  for (; *at; at = &(*at)->next)
    if ((*at)->set == set && key_equal(&(*at)->key, key)) return at;
  return at;
}

void cubert_tuner_destroy(cubert_tuner *tuner) {
  if (!tuner) return;
  cubert_tune_background_destroy(tuner->bg);
  for (size_t b = 0; b < BUCKETS; ++b) {
    for (tune_entry *e = tuner->buckets[b]; e;) {
      tune_entry *next = e->next;
      free(e);
      e = next;
    }
  }
  free(tuner->identity);
  free(tuner->dir);
  free(tuner->path);
  free(tuner->records);
  pthread_cond_destroy(&tuner->done);
  pthread_mutex_destroy(&tuner->lock);
  free(tuner);
}

static cubert_status tuner_create(cubert_client *client, cubert_tuner **out) {
  *out = NULL;
  cubert_tuner *t = calloc(1, sizeof(*t));
  if (!t) return cubert_status_make(CUBERT_CODE_OUT_OF_MEMORY, "host allocation failed");
  pthread_mutex_init(&t->lock, NULL);
  pthread_cond_init(&t->done, NULL);
  t->identity = cubert_tune_disk_identity(client);
  t->bg = cubert_tune_background_create();
  if (!t->identity || !t->bg) {
    cubert_tuner_destroy(t);
    return cubert_status_make(CUBERT_CODE_OUT_OF_MEMORY, "host allocation failed");
  }
  if (cubert_config_get()->autotune_cache) {
    t->dir = cubert_cache_dir("tune");
    t->path = cubert_tune_disk_path(t->dir, t->identity);
    if (!t->path) {
      free(t->dir);
      t->dir = NULL;
    }
  }
  *out = t;
  return NULL;
}

/* NULL when `client` is live (INVALID_ARGUMENT for NULL, NOT_FOUND once released). Every call
   the tuner makes on it (profile, launch) takes its own reference. */
static cubert_status check_client(cubert_client *client) {
  cubert_client_obj *c = NULL;
  CUBERT_RETURN_IF_ERROR(cubert_client_acquire(client, &c));
  cubert_client_release(client);
  return NULL;
}

/* The device's tuner, created at first use. A lost creation race frees its copy. */
static cubert_status tuner_get(cubert_client *client, cubert_tuner **out) {
  cubert_device *device = cubert_client_device(client);
  if (!device) return cubert_status_make(CUBERT_CODE_NOT_FOUND, "the client was released");
  cubert_tuner *t = atomic_load_explicit(&device->tuner, memory_order_acquire);
  if (t) {
    *out = t;
    return NULL;
  }
  CUBERT_RETURN_IF_ERROR(tuner_create(client, &t));
  cubert_tuner *expected = NULL;
  if (!atomic_compare_exchange_strong(&device->tuner, &expected, t)) {
    cubert_tuner_destroy(t);
    t = expected;
  }
  *out = t;
  return NULL;
}

static int name_ok(const char *s, int strict) {
  size_t len = s ? strlen(s) : 0;
  if (len == 0 || len >= CUBERT_TUNE_NAME_BYTES) return 0;
  for (size_t i = 0; i < len; ++i) {
    char c = s[i];
    if (strict ? !((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                   c == '_' || c == '.' || c == ':' || c == '-')
               : (c <= 0x20 || c >= 0x7f))
      return 0;
  }
  return 1;
}

static cubert_status set_check(const cubert_tune_set *set) {
  if (!name_ok(set->name, 1))
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                              "tunable set name \"%s\" is not 1..63 characters of "
                              "[A-Za-z0-9_.:-]",
                              set->name ? set->name : "(null)");
  if (!set->candidates || set->candidate_count == 0 || set->candidate_count > 256)
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                              "tunable set \"%s\" has %u candidates, expected 1..256", set->name,
                              set->candidate_count);
  for (uint32_t i = 0; i < set->candidate_count; ++i) {
    const cubert_tune_candidate *c = &set->candidates[i];
    if (!name_ok(c->name, 0) || !c->launch)
      return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                                "candidate %u of tunable set \"%s\" needs a launch function and "
                                "a name of 1..63 printable characters without spaces",
                                i, set->name);
    /* The disk file and the logs name a winner by its name: two candidates of one name would
       make a recorded winner ambiguous. */
    for (uint32_t j = 0; j < i; ++j)
      if (strcmp(set->candidates[j].name, c->name) == 0)
        return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                                  "candidates %u and %u of tunable set \"%s\" are both named "
                                  "\"%s\"; candidate names must be unique in a set",
                                  j, i, set->name, c->name);
  }
  return NULL;
}

/* The checksum of a set: its candidates' names (in order) and its source checksum. */
static uint64_t set_checksum(const cubert_tune_set *set) {
  uint64_t h = CUBERT_FNV1A64_SEED;
  for (uint32_t i = 0; i < set->candidate_count; ++i)
    h = cubert_fnv1a64(h, set->candidates[i].name, strlen(set->candidates[i].name) + 1);
  return cubert_fnv1a64(h, &set->source_checksum, sizeof(set->source_checksum));
}

static int valid_for(cubert_client *client, const cubert_tune_set *set, uint32_t i,
                     const cubert_tune_key *key, const void *args) {
  const cubert_tune_candidate *c = &set->candidates[i];
  return !c->valid || c->valid(client, key, args);
}

static cubert_status run_default(cubert_client *client, const cubert_tune_set *set,
                                 const cubert_tune_key *key, const void *args) {
  for (uint32_t i = 0; i < set->candidate_count; ++i)
    if (valid_for(client, set, i, key, args)) return set->candidates[i].launch(client, args);
  return cubert_status_make(CUBERT_CODE_UNAVAILABLE,
                            "no candidate of tunable set \"%s\" is valid for this key", set->name);
}

typedef struct candidate_run {
  const cubert_tune_candidate *candidate;
  const void *args;
  const char *label;
} candidate_run;

static cubert_status launch_labelled(cubert_client *client, const cubert_tune_candidate *c,
                                     const void *args, const char *label);

static cubert_status run_profiled(cubert_client *client, void *user) {
  const candidate_run *run = user;
  return launch_labelled(client, run->candidate, run->args, run->label);
}

static int compare_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/* The label of the candidate this thread is measuring (cubert_tune_measuring). */
static _Thread_local const char *measuring;

const char *cubert_tune_measuring(void) {
  return measuring;
}

/* Runs one candidate for measurement under its label; a candidate that itself tunes another
   key nests, so the previous label is restored. */
static cubert_status launch_labelled(cubert_client *client, const cubert_tune_candidate *c,
                                     const void *args, const char *label) {
  const char *outer = measuring;
  measuring = label;
  cubert_status s = c->launch(client, args);
  measuring = outer;
  return s;
}

/* The warm-up run: launch + sync, so that compile errors and execution errors both surface
   with the candidate's own status (and one-time costs such as a kernel build stay out of the
   samples). */
static cubert_status warm_up(cubert_client *client, const cubert_tune_candidate *c,
                             const void *args, const char *label) {
  CUBERT_RETURN_IF_ERROR(launch_labelled(client, c, args, label));
  return cubert_client_sync(client);
}

/* One timed run inside cubert_client_profile (device timing where the device has it). */
static cubert_status sample(cubert_client *client, const cubert_tune_candidate *c, const void *args,
                            const char *label, uint64_t *out_ns) {
  candidate_run run = {c, args, label};
  cubert_profile_duration d;
  CUBERT_RETURN_IF_ERROR(cubert_client_profile(client, run_profiled, &run, &d));
  *out_ns = d.duration_ns;
  return NULL;
}

static void record_fill(cubert_tune_record *r, const cubert_tune_set *set, uint64_t checksum,
                        const cubert_tune_key *key, uint32_t winner, uint64_t ns) {
  memset(r, 0, sizeof(*r));
  snprintf(r->set_name, sizeof(r->set_name), "%s", set->name);
  r->checksum = checksum;
  r->key = *key;
  r->winner = winner;
  snprintf(r->winner_name, sizeof(r->winner_name), "%s", set->candidates[winner].name);
  r->winner_ns = ns;
}

/* Writes one change to the disk file; called without the tuner lock (file I/O). A failure
   makes this device's tuner memory-only, reported once. */
static void disk_update(cubert_tuner *t, const cubert_tune_record *put,
                        const cubert_tune_record *drop) {
  pthread_mutex_lock(&t->lock);
  char *dir = t->dir ? strdup(t->dir) : NULL, *path = t->path ? strdup(t->path) : NULL;
  pthread_mutex_unlock(&t->lock);
  if (!dir || !path) {
    free(dir);
    free(path);
    return;
  }
  cubert_tune_record *records = NULL;
  size_t count = 0;
  const char *rejected = NULL;
  int error =
      cubert_tune_disk_update(dir, path, t->identity, put, drop, &records, &count, &rejected);
  pthread_mutex_lock(&t->lock);
  if (rejected) {
    t->stats.disk_rejected++;
    /* An untrusted file had its own warning (once) from the trust check. */
    if (strcmp(rejected, CUBERT_CACHE_UNTRUSTED_REASON) != 0)
      cubert_log(CUBERT_LOG_WARN, "tune", "autotune cache file '%s' ignored (%s); rewritten", path,
                 rejected);
  }
  if (error == ETIMEDOUT) {
    /* Another process holds the file lock (stopped, or holding it on purpose): this change
       stays in memory, the file is tried again at the next one. */
    cubert_log(CUBERT_LOG_WARN, "tune",
               "the autotune cache file lock '%s.lock' stayed taken for %u ms; this change is "
               "kept in memory only",
               path, (unsigned)atomic_load(&cubert_tune_disk_lock_timeout_ms));
  } else if (error) {
    /* A folder that fails the trust check had its own warning. */
    if (!t->disk_warned && error != CUBERT_CACHE_UNTRUSTED)
      cubert_log(CUBERT_LOG_WARN, "tune",
                 "the autotune cache folder '%s' is not usable (%s); tuning results are kept in "
                 "memory only (set CUBERT_CACHE_DIR to a writable folder)",
                 dir, strerror(error));
    t->disk_warned = 1;
    free(t->dir);
    free(t->path);
    t->dir = t->path = NULL;
  } else {
    t->stats.disk_writes++;
    free(t->records);
    t->records = records;
    t->record_count = count;
    records = NULL;
  }
  pthread_mutex_unlock(&t->lock);
  free(records);
  free(dir);
  free(path);
}

/* Called with the lock held at a memory miss: reads the file once, then looks for the key. */
static int disk_lookup(cubert_tuner *t, const cubert_tune_set *set, uint64_t checksum,
                       const cubert_tune_key *key, uint32_t *out_winner) {
  if (!t->path) return 0;
  if (!t->disk_loaded) {
    t->disk_loaded = 1;
    const char *reason = cubert_tune_disk_load(t->path, t->identity, &t->records, &t->record_count);
    if (reason) {
      t->stats.disk_rejected++;
      if (strcmp(reason, CUBERT_CACHE_UNTRUSTED_REASON) != 0)
        cubert_log(CUBERT_LOG_WARN, "tune",
                   "autotune cache file '%s' ignored (%s); it is rewritten at the next tuning",
                   t->path, reason);
    }
  }
  for (size_t i = 0; i < t->record_count; ++i) {
    const cubert_tune_record *r = &t->records[i];
    if (r->checksum == checksum && strcmp(r->set_name, set->name) == 0 && key_equal(&r->key, key) &&
        r->winner < set->candidate_count &&
        strcmp(r->winner_name, set->candidates[r->winner].name) == 0) {
      *out_winner = r->winner;
      return 1;
    }
  }
  return 0;
}

/* Early elimination: after each round of samples a candidate whose fastest sample so far is
   more than ELIMINATE_NUM / ELIMINATE_DEN times the fastest sample of any candidate stops being
   measured. Why the minimum: noise (other processes, frequency changes) only ever makes a run
   slower, so a candidate's fastest run is a lower bound of its median, and the fastest run of
   all is the best estimate of what the winner can do. A candidate 1.5x behind that cannot end
   within the 5% that separates contenders, so its remaining samples would only cost time. The
   contenders keep the median of their samples; a lone contender stops being sampled. The bound
   holds only once load is unlikely to have stretched every run of a candidate: one preempted
   sample of the fastest candidate would drop it (a 2-core machine under load shows 10x
   stretches), so nothing is eliminated before ELIMINATE_AFTER timed rounds. */
#define ELIMINATE_NUM 3u
#define ELIMINATE_DEN 2u
#define ELIMINATE_AFTER 2

/* Counts of one measurement, added to the tuner's stats under its lock. */
typedef struct measure_counts {
  uint64_t measured, failed, samples, eliminated, mismatched;
} measure_counts;

/* One measurement in progress: the candidates still measured, their timed samples
   (CUBERT_TUNE_SAMPLES per candidate) and fastest sample so far, the counts, the status of
   the last candidate that failed, and the comparison of their results (CUBERT_AUTOTUNE_CHECKS). */
typedef struct measurement {
  const cubert_tune_set *set;
  uint8_t *eligible;
  uint64_t *samples, *fastest;
  measure_counts n;
  cubert_status last;
  cubert_tune_checker checker;
  const atomic_int *cancel; /* background: set when the worker is stopped */
  int cancelled;
} measurement;

/* What a background measurement adds (NULL for one in the caller's call): the worker's cancel
   flag, and the provisional candidate, kept in memory when every candidate fails there. */
typedef struct background_run {
  const atomic_int *cancel;
  uint32_t fallback;
} background_run;

static int is_cancelled(measurement *m) {
  if (m->cancel && atomic_load(m->cancel)) m->cancelled = 1;
  return m->cancelled;
}

/* Marks in `eligible` the candidates to measure: the valid ones (all but `excluded`); under
   CUBERT_AUTOTUNE=minimal only the known-good default of the device family when the set has
   one and it is eligible (then nothing is measured), else group 0 only, unless group 0 has
   nothing valid for this key. Returns the lone eligible candidate; UINT32_MAX for none or
   several. */
static uint32_t choose_eligible(cubert_client *client, const cubert_tune_set *set,
                                const cubert_tune_key *key, const void *args, uint32_t excluded,
                                cubert_tune_known_good_fn known_good, uint8_t *eligible) {
  int minimal = cubert_config_get()->autotune == CUBERT_AUTOTUNE_MINIMAL;
  uint32_t eligible_count = 0, priority_count = 0, only = UINT32_MAX;
  for (uint32_t i = 0; i < set->candidate_count; ++i) {
    if (i == excluded || !valid_for(client, set, i, key, args)) continue;
    eligible[i] = 1;
    ++eligible_count;
    priority_count += set->candidates[i].priority == 0;
  }
  uint32_t known = minimal && known_good ? known_good(client, set, eligible) : UINT32_MAX;
  if (known < set->candidate_count && eligible[known]) {
    memset(eligible, 0, set->candidate_count);
    eligible[known] = 1;
    eligible_count = 1;
  } else if (minimal && priority_count > 0) {
    for (uint32_t i = 0; i < set->candidate_count; ++i)
      if (set->candidates[i].priority != 0) eligible[i] = 0;
    eligible_count = priority_count;
  }
  for (uint32_t i = 0; i < set->candidate_count && eligible_count == 1; ++i)
    if (eligible[i]) only = i;
  return only;
}

/* Runs every eligible candidate once: a warm-up for round -1, else a timed sample of round
   `round`. A candidate that fails stops being eligible (its status replaces m->last). Returns
   how many ran, and in *out_best the fastest sample so far of any of them. */
static uint32_t run_round(cubert_client *client, measurement *m, const void *args, int round,
                          uint64_t *out_best) {
  const cubert_tune_set *set = m->set;
  uint32_t contenders = 0;
  uint64_t round_best = UINT64_MAX;
  for (uint32_t i = 0; i < set->candidate_count && !is_cancelled(m); ++i) {
    if (!m->eligible[i]) continue;
    const cubert_tune_candidate *c = &set->candidates[i];
    m->n.measured += round < 0;
    m->n.samples += round >= 0;
    char label[2 * CUBERT_TUNE_NAME_BYTES + 2];
    snprintf(label, sizeof(label), "%s/%s", set->name, c->name);
    uint64_t *slot = &m->samples[(size_t)i * CUBERT_TUNE_SAMPLES + (round < 0 ? 0 : round)];
    /* With the result checks on, each candidate starts from the caller's data: an in-place
       candidate's copy holds the previous candidate's result otherwise. */
    cubert_status s = round < 0 && m->checker.enabled ? cubert_tune_scratch_refresh() : NULL;
    if (!s) s = round < 0 ? warm_up(client, c, args, label) : sample(client, c, args, label, slot);
    int agrees = 1;
    if (!s && round < 0) s = cubert_tune_check(&m->checker, client, i, &agrees);
    if (!agrees) {
      m->eligible[i] = 0;
      ++m->n.mismatched;
      continue;
    }
    if (!s) {
      ++contenders;
      if (round >= 0 && (round == 0 || *slot < m->fastest[i])) m->fastest[i] = *slot;
      if (round >= 0 && m->fastest[i] < round_best) round_best = m->fastest[i];
      continue;
    }
    ++m->n.failed;
    m->eligible[i] = 0;
    cubert_log(CUBERT_LOG_INFO, "tune", "%s: candidate %s skipped: %s", set->name, c->name,
               cubert_status_message(s));
    cubert_status_free(m->last);
    m->last = s;
  }
  *out_best = round_best;
  return contenders;
}

/* Early elimination after timed round `round` (ELIMINATE_NUM / ELIMINATE_DEN above); returns how
   many candidates it dropped. */
static uint32_t eliminate_slow(measurement *m, int round, uint64_t round_best) {
  const cubert_tune_set *set = m->set;
  uint32_t dropped = 0;
  for (uint32_t i = 0; i < set->candidate_count; ++i) {
    if (!m->eligible[i] || m->fastest[i] * ELIMINATE_DEN <= round_best * ELIMINATE_NUM) continue;
    m->eligible[i] = 0;
    ++dropped;
    ++m->n.eliminated;
    cubert_log(CUBERT_LOG_INFO, "tune",
               "%s: candidate %s eliminated after %d samples (fastest %llu ns, best %llu ns)",
               set->name, set->candidates[i].name, round + 1, (unsigned long long)m->fastest[i],
               (unsigned long long)round_best);
  }
  return dropped;
}

/* The eligible candidate with the lowest median of its `rounds` samples (0 ns each when none
   was timed), its median in *out_ns; UINT32_MAX when none is eligible. */
static uint32_t pick_winner(measurement *m, int rounds, uint64_t *out_ns) {
  const cubert_tune_set *set = m->set;
  uint32_t best = UINT32_MAX;
  for (uint32_t i = 0; i < set->candidate_count; ++i) {
    if (!m->eligible[i]) continue;
    uint64_t ns = 0;
    if (rounds > 0) {
      uint64_t *mine = &m->samples[(size_t)i * CUBERT_TUNE_SAMPLES];
      qsort(mine, (size_t)rounds, sizeof(uint64_t), compare_u64);
      ns = mine[rounds / 2];
    }
    cubert_log(CUBERT_LOG_INFO, "tune", "%s: candidate %s median %llu ns of %d samples", set->name,
               set->candidates[i].name, (unsigned long long)ns, rounds);
    if (best == UINT32_MAX || ns < *out_ns) {
      *out_ns = ns;
      best = i;
    }
  }
  return best;
}

/* Adds a measurement's counts to the tuner's stats and publishes its verdict on the PENDING
   entry: DONE with `best`, or removed when there is none (the next call measures again: the
   failures may be transient). Wakes the threads waiting for the entry. */
static void publish_verdict(cubert_tuner *t, const cubert_tune_set *set, const cubert_tune_key *key,
                            uint32_t best, const measure_counts *n, int background) {
  pthread_mutex_lock(&t->lock);
  t->stats.tunings++;
  t->stats.candidates_measured += n->measured;
  t->stats.candidates_failed += n->failed;
  t->stats.samples += n->samples;
  t->stats.candidates_eliminated += n->eliminated;
  t->stats.candidates_mismatched += n->mismatched;
  t->stats.background_tunings += background;
  tune_entry **at = find(t, set, key);
  tune_entry *e = *at;
  if (best == UINT32_MAX) {
    if (e) {
      *at = e->next;
      free(e);
    }
  } else if (e) {
    e->state = ENTRY_DONE;
    e->winner = best;
  }
  pthread_cond_broadcast(&t->done);
  pthread_mutex_unlock(&t->lock);
}

/* Measures the valid candidates (all but `excluded`, UINT32_MAX for none) of an entry this
   thread marked PENDING and publishes the verdict. *out_unmeasured is set when a lone eligible
   candidate was chosen without running it: its first launch, the caller's, is then the only
   check it works (tune_and_run drops the verdict when that launch fails). */
static cubert_status measure(cubert_client *client, cubert_tuner *t, const cubert_tune_set *set,
                             const cubert_tune_key *key, const void *args, uint64_t checksum,
                             uint32_t excluded, cubert_tune_known_good_fn known_good,
                             const background_run *bg, uint32_t *out_winner, int *out_unmeasured) {
  *out_unmeasured = 0;
  measurement m = {.set = set, .cancel = bg ? bg->cancel : NULL};
  cubert_tune_checker_init(&m.checker, set, args);
  m.eligible = calloc(set->candidate_count, 1);
  if (!m.eligible) return cubert_status_make(CUBERT_CODE_OUT_OF_MEMORY, "host allocation failed");
  uint32_t only = choose_eligible(client, set, key, args, excluded, known_good, m.eligible);
  /* Samples are taken round-robin over the candidates rather than candidate after candidate,
     so that a change in the machine's load while tuning (other processes, frequency) spreads
     over every candidate instead of favouring whichever ran in the quiet moment. */
  m.samples = calloc((size_t)set->candidate_count * CUBERT_TUNE_SAMPLES, sizeof(uint64_t));
  m.fastest = calloc(set->candidate_count, sizeof(uint64_t));
  if (!m.samples || !m.fastest) {
    free(m.samples);
    free(m.fastest);
    free(m.eligible);
    return cubert_status_make(CUBERT_CODE_OUT_OF_MEMORY, "host allocation failed");
  }
  int rounds = 0; /* timed rounds taken */
  /* One eligible candidate: there is nothing to compare, so it is not run at all. */
  for (int round = -1; only == UINT32_MAX && round < CUBERT_TUNE_SAMPLES; ++round) {
    uint64_t round_best = UINT64_MAX;
    uint32_t contenders = run_round(client, &m, args, round, &round_best);
    rounds = round + 1;
    if (m.cancelled) break;
    if (round + 1 >= ELIMINATE_AFTER) contenders -= eliminate_slow(&m, round, round_best);
    if (contenders <= 1) break;
  }
  uint64_t best_ns = UINT64_MAX;
  uint32_t best = m.cancelled ? UINT32_MAX : pick_winner(&m, rounds, &best_ns);
  /* In the background, a key whose candidates all failed keeps the provisional candidate, which
     worked in the caller's call (memory only): the failures may be the caller's released
     buffers, and measuring again at every call would cost each call a job. A cancelled key is
     forgotten: the next call (or process) measures it again. */
  const uint32_t verdict = best == UINT32_MAX && bg && !m.cancelled ? bg->fallback : best;
  cubert_tune_checker_free(&m.checker);
  free(m.fastest);
  free(m.samples);
  free(m.eligible);
  *out_unmeasured = only != UINT32_MAX;
  publish_verdict(t, set, key, verdict, &m.n, bg != NULL);

  cubert_status last = m.last;
  if (best == UINT32_MAX) {
    if (m.cancelled) {
      cubert_status_free(last);
      last = cubert_status_make(CUBERT_CODE_UNAVAILABLE,
                                "cancelled: the device's last client was released");
    }
    if (!last)
      last =
          cubert_status_make(CUBERT_CODE_UNAVAILABLE,
                             "no candidate of tunable set \"%s\" is valid for this key", set->name);
    return last;
  }
  cubert_status_free(last);
  *out_winner = best;
  if (*out_unmeasured) {
    /* Nothing was measured, so nothing is worth a disk write: the next process decides the
       same way at no cost. */
    cubert_log(CUBERT_LOG_INFO, "tune", "%s: %s is the only candidate for this key (not measured)",
               set->name, set->candidates[best].name);
    return NULL;
  }
  cubert_log(CUBERT_LOG_INFO, "tune",
             "%s: %s wins (%llu ns, %llu candidates measured, %llu eliminated, %llu samples)",
             set->name, set->candidates[best].name, (unsigned long long)best_ns,
             (unsigned long long)m.n.measured, (unsigned long long)m.n.eliminated,
             (unsigned long long)m.n.samples);
  cubert_tune_record record;
  record_fill(&record, set, checksum, key, best, best_ns);
  disk_update(t, &record, NULL);
  return NULL;
}

/* Removes the key's entry when it is still DONE with `winner` (another thread may have replaced
   it meanwhile), counting an eviction when `eviction` is set. */
static void drop_done_entry(cubert_tuner *t, const cubert_tune_set *set, const cubert_tune_key *key,
                            uint32_t winner, int eviction) {
  pthread_mutex_lock(&t->lock);
  tune_entry **at = find(t, set, key);
  if (*at && (*at)->state == ENTRY_DONE && (*at)->winner == winner) {
    tune_entry *gone = *at;
    *at = gone->next;
    free(gone);
    if (eviction) t->stats.evictions++;
  }
  pthread_mutex_unlock(&t->lock);
}

/* Removes the key's entry when it is `state` (with `winner`, for DONE and PROVISIONAL) and wakes
   the threads waiting for it. */
static void drop_entry_in(cubert_tuner *t, const cubert_tune_set *set, const cubert_tune_key *key,
                          int state, uint32_t winner) {
  pthread_mutex_lock(&t->lock);
  tune_entry **at = find(t, set, key);
  if (*at && (*at)->state == state && (state == ENTRY_PENDING || (*at)->winner == winner)) {
    tune_entry *gone = *at;
    *at = gone->next;
    free(gone);
  }
  pthread_cond_broadcast(&t->done);
  pthread_mutex_unlock(&t->lock);
}

/* A key measured by the background worker, with its own copy of the call's args. */
typedef struct tune_job {
  cubert_tuner *t;
  const cubert_tune_set *set;
  cubert_tune_key key;
  void *args;
  uint64_t checksum;
  uint32_t provisional;
} tune_job;

static void job_free(tune_job *job) {
  free(job->args);
  free(job);
}

/* The worker's side: measures on its own client and stream. The candidates bind the caller's
   buffers only to copy them: nothing is declared read-only, so every buffer a candidate binds
   is a scratch copy, and the caller's later work on its buffers never waits for a sample. */
static void job_run(void *p, cubert_client *client, const atomic_int *cancel) {
  tune_job *job = p;
  cubert_tune_scratch scratch;
  cubert_tune_scratch_begin(&scratch, client, NULL, 0);
  const background_run bg = {cancel, job->provisional};
  uint32_t winner = UINT32_MAX;
  int unmeasured = 0;
  cubert_status s = measure(client, job->t, job->set, &job->key, job->args, job->checksum,
                            UINT32_MAX, NULL, &bg, &winner, &unmeasured);
  cubert_tune_scratch_end(&scratch);
  if (s)
    cubert_log(CUBERT_LOG_INFO, "tune", "%s: background tuning ended without a winner (%s)",
               job->set->name, cubert_status_message(s));
  cubert_status_free(s);
  /* A failed candidate's asynchronous error is on the worker's stream, never the caller's. */
  cubert_status_free(cubert_client_sync(client));
  job_free(job);
}

/* A job the stopped worker never ran: the key is forgotten, so the next call measures it. */
static void job_drop(void *p) {
  tune_job *job = p;
  drop_entry_in(job->t, job->set, &job->key, ENTRY_PROVISIONAL, job->provisional);
  job_free(job);
}

/* Whether a new key of this call is measured in the background (CUBERT_AUTOTUNE_BACKGROUND). */
static int background_applies(cubert_client *client, const cubert_tune_call *call) {
  const cubert_config *config = cubert_config_get();
  if (config->autotune != CUBERT_AUTOTUNE_FULL ||
      config->autotune_background == CUBERT_AUTOTUNE_BACKGROUND_OFF ||
      (!call->args_bytes && !call->args_clone) || cubert_tune_background_on_worker())
    return 0;
  cubert_client_obj *c = NULL;
  cubert_status s = cubert_client_acquire(client, &c);
  if (s) {
    cubert_status_free(s);
    return 0;
  }
  /* Auto leaves the CPU server synchronous: its samples are host-clock times on the cores the
     caller's kernels run on (2 here), so measuring beside the caller would time the caller's
     work too, and there is no compile cost to hide (its kernels are built with the library). */
  int on = !cubert_dry_run_on(c) &&
           (config->autotune_background == CUBERT_AUTOTUNE_BACKGROUND_ON ||
            c->device->server->properties.type != CUBERT_DEVICE_TYPE_CPU_SERVER);
  cubert_client_release(client);
  return on;
}

/* The candidate a new key's first call runs while it is measured: the known-good one of the
   device family when the kernel library has one, else the set's default. UINT32_MAX for none
   valid. */
static uint32_t provisional_of(cubert_client *client, const cubert_tune_set *set,
                               const cubert_tune_key *key, const void *args,
                               cubert_tune_known_good_fn known_good) {
  uint8_t *eligible = calloc(set->candidate_count, 1);
  uint32_t first = UINT32_MAX, known = UINT32_MAX;
  for (uint32_t i = 0; i < set->candidate_count; ++i) {
    const int valid = valid_for(client, set, i, key, args);
    if (eligible) eligible[i] = (uint8_t)valid;
    if (valid && first == UINT32_MAX) first = i;
  }
  if (eligible && known_good) known = known_good(client, set, eligible);
  const int take_known = known < set->candidate_count && eligible[known];
  free(eligible);
  return take_known ? known : first;
}

/* An entry this thread marked PENDING, for a call whose key is measured in the background: runs
   the provisional candidate on the caller's stream (its status is the call's) and queues the
   measurement. */
static cubert_status tune_in_background(cubert_client *client, cubert_tuner *t,
                                        const cubert_tune_set *set, const cubert_tune_key *key,
                                        const void *args, uint64_t checksum,
                                        const cubert_tune_call *call) {
  const uint32_t provisional = provisional_of(client, set, key, args, call->known_good);
  if (provisional == UINT32_MAX) {
    drop_entry_in(t, set, key, ENTRY_PENDING, 0);
    return cubert_status_make(CUBERT_CODE_UNAVAILABLE,
                              "no candidate of tunable set \"%s\" is valid for this key",
                              set->name);
  }
  pthread_mutex_lock(&t->lock);
  tune_entry *e = *find(t, set, key);
  e->state = ENTRY_PROVISIONAL;
  e->winner = provisional;
  pthread_cond_broadcast(&t->done);
  pthread_mutex_unlock(&t->lock);
  cubert_status s = set->candidates[provisional].launch(client, args);
  tune_job *job = s ? NULL : calloc(1, sizeof(*job));
  if (job) {
    *job = (tune_job){t, set, *key, NULL, checksum, provisional};
    job->args = call->args_clone ? call->args_clone(args) : malloc(call->args_bytes);
    if (job->args && !call->args_clone) memcpy(job->args, args, call->args_bytes);
  }
  /* Once pushed, the job belongs to the worker, which may run and free it at once: nothing
     below reads it unless the push failed. */
  const int ready = job && job->args;
  cubert_status queued =
      ready ? cubert_tune_background_push(t->bg, client, job, job_run, job_drop) : NULL;
  if (!s && (!ready || queued)) {
    /* Not queued (out of memory, the worker stopping): the next call tries again. */
    cubert_log(CUBERT_LOG_INFO, "tune", "%s: not tuned in the background (%s)", set->name,
               queued ? cubert_status_message(queued) : "host allocation failed");
    if (job) job_free(job);
    job = NULL;
  }
  cubert_status_free(queued);
  /* The provisional candidate failed in the caller's call: its error is the call's, and nothing
     stays cached (the next call starts afresh). */
  if (!job) drop_entry_in(t, set, key, ENTRY_PROVISIONAL, provisional);
  return s;
}

/* Measures an entry this thread marked PENDING (measure), then launches the winner. */
static cubert_status tune_and_run(cubert_client *client, cubert_tuner *t,
                                  const cubert_tune_set *set, const cubert_tune_key *key,
                                  const void *args, uint64_t checksum, uint32_t excluded,
                                  const cubert_tune_call *call) {
  /* The caller's earlier errors are not the candidates': they are kept apart while the
     candidates run and given back before the winner's launch, which then meets them exactly
     as with a warm cache (stream/aside.c says why). */
  cubert_errors_aside aside;
  cubert_status s = cubert_client_errors_set_aside(client, &aside);
  if (s) {
    /* Publish "nothing measured" so that waiters on the PENDING entry measure themselves. */
    drop_entry_in(t, set, key, ENTRY_PENDING, 0);
    return s;
  }
  uint32_t winner = UINT32_MAX;
  int unmeasured = 0;
  /* Measurements run for real even in dry run (the reference's RealRun): a decision measured
     while warming caches is one the shipped cache keeps. The winner's launch below is dry. */
  cubert_dry_run_real_begin();
  /* The candidates write scratch copies of the caller's buffers (tune/scratch.h); the winner's
     launch below, outside the measurement, writes the caller's. */
  cubert_tune_scratch scratch;
  cubert_tune_scratch_begin(&scratch, client, call->read_only, call->read_only_count);
  s = measure(client, t, set, key, args, checksum, excluded, call->known_good, NULL, &winner,
              &unmeasured);
  cubert_tune_scratch_end(&scratch);
  cubert_dry_run_real_end();
  cubert_client_errors_put_back(client, &aside);
  if (s) return s;
  s = set->candidates[winner].launch(client, args);
  if (s && unmeasured) {
    /* The lone candidate was never tried: its failure is the key's answer, as when every
       measured candidate fails, and nothing stays cached (the failure may be transient). */
    drop_done_entry(t, set, key, winner, 0);
  }
  return s;
}

/* Removes the key's record naming `winner` from the disk file. */
static void drop_from_disk(cubert_tuner *t, const cubert_tune_set *set, const cubert_tune_key *key,
                           uint32_t winner) {
  cubert_tune_record drop;
  record_fill(&drop, set, set_checksum(set), key, winner, 0);
  disk_update(t, NULL, &drop);
}

cubert_status cubert_tune_lookup(cubert_client *client, const cubert_tune_set *set,
                                 const cubert_tune_key *key, cubert_tune_lookup_result *out_result,
                                 uint32_t *out_winner) {
  if (out_winner) *out_winner = UINT32_MAX;
  CUBERT_RETURN_IF_ERROR(check_client(client));
  if (!set || !key || !out_result || key->count > CUBERT_TUNE_KEY_MAX_FIELDS)
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                              "set, key and out_result must be non-NULL and the key at most %u "
                              "fields",
                              (unsigned)CUBERT_TUNE_KEY_MAX_FIELDS);
  *out_result = CUBERT_TUNE_MISS;
  CUBERT_RETURN_IF_ERROR(set_check(set));
  cubert_tuner *t;
  CUBERT_RETURN_IF_ERROR(tuner_get(client, &t));
  pthread_mutex_lock(&t->lock);
  tune_entry **at = find(t, set, key);
  uint32_t winner = UINT32_MAX;
  if (*at) {
    *out_result = (*at)->state == ENTRY_DONE ? CUBERT_TUNE_HIT : CUBERT_TUNE_PENDING;
    if ((*at)->state == ENTRY_DONE) winner = (*at)->winner;
  } else if (disk_lookup(t, set, set_checksum(set), key, &winner)) {
    tune_entry *e = calloc(1, sizeof(*e));
    if (e) { /* without memory the hit is still right; it is looked up on disk again */
      e->set = set;
      e->key = *key;
      e->state = ENTRY_DONE;
      e->winner = winner;
      *at = e;
    }
    t->stats.disk_hits++;
    *out_result = CUBERT_TUNE_HIT;
  }
  pthread_mutex_unlock(&t->lock);
  if (out_winner) *out_winner = winner;
  return NULL;
}

cubert_status cubert_tune_execute(cubert_client *client, const cubert_tune_set *set,
                                  const cubert_tune_key *key, const void *args) {
  const cubert_tune_call call = {0};
  return cubert_tune_execute_call(client, set, key, args, &call);
}

cubert_status cubert_tune_execute_reading(cubert_client *client, const cubert_tune_set *set,
                                          const cubert_tune_key *key, const void *args,
                                          cubert_handle *const *read_only, size_t read_only_count) {
  if (read_only_count && !read_only)
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                              "read_only is NULL but read_only_count is %zu; pass the handles "
                              "the candidates only read, or a count of 0",
                              read_only_count);
  const cubert_tune_call call = {.read_only = read_only, .read_only_count = read_only_count};
  return cubert_tune_execute_call(client, set, key, args, &call);
}

cubert_status cubert_tune_execute_call(cubert_client *client, const cubert_tune_set *set,
                                       const cubert_tune_key *key, const void *args,
                                       const cubert_tune_call *call) {
  CUBERT_RETURN_IF_ERROR(check_client(client));
  if (!set || !key || key->count > CUBERT_TUNE_KEY_MAX_FIELDS)
    return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT,
                              "set and key must be non-NULL and the key at most %u fields",
                              (unsigned)CUBERT_TUNE_KEY_MAX_FIELDS);
  cubert_tuner *t;
  CUBERT_RETURN_IF_ERROR(tuner_get(client, &t));
  uint32_t excluded = UINT32_MAX;
  for (;;) {
    pthread_mutex_lock(&t->lock);
    tune_entry **at = find(t, set, key);
    tune_entry *e = *at;
    while (e && e->state == ENTRY_PENDING && !pthread_equal(e->tuner, pthread_self())) {
      pthread_cond_wait(&t->done, &t->lock);
      at = find(t, set, key);
      e = *at;
    }
    if (e && e->state == ENTRY_PENDING) { /* re-entered from our own measurement */
      pthread_mutex_unlock(&t->lock);
      return run_default(client, set, key, args);
    }
    uint32_t winner = 0;
    uint64_t checksum = 0;
    int hit = e != NULL, from_disk = 0, provisional = 0;
    if (hit) {
      winner = e->winner;
      provisional = e->state == ENTRY_PROVISIONAL;
      t->stats.memory_hits++;
    } else {
      /* Slow path from here on: validate once per new key, not per call. */
      cubert_status s = set_check(set);
      if (!s && cubert_config_get()->autotune == CUBERT_AUTOTUNE_OFF) {
        pthread_mutex_unlock(&t->lock);
        return run_default(client, set, key, args);
      }
      e = s ? NULL : calloc(1, sizeof(*e));
      if (!s && !e) s = cubert_status_make(CUBERT_CODE_OUT_OF_MEMORY, "host allocation failed");
      if (s) {
        pthread_mutex_unlock(&t->lock);
        return s;
      }
      checksum = set_checksum(set);
      e->set = set;
      e->key = *key;
      if (excluded == UINT32_MAX && disk_lookup(t, set, checksum, key, &winner)) {
        e->state = ENTRY_DONE;
        e->winner = winner;
        t->stats.disk_hits++;
        from_disk = hit = 1;
      } else {
        e->state = ENTRY_PENDING;
        e->tuner = pthread_self();
      }
      *at = e;
    }
    pthread_mutex_unlock(&t->lock);
    if (!hit)
      return excluded == UINT32_MAX && background_applies(client, call)
                 ? tune_in_background(client, t, set, key, args, checksum, call)
                 : tune_and_run(client, t, set, key, args, checksum, excluded, call);
    if (from_disk)
      cubert_log(CUBERT_LOG_DEBUG, "tune", "%s: %s from the disk cache", set->name,
                 set->candidates[winner].name);
    cubert_status s = set->candidates[winner].launch(client, args);
    /* A provisional candidate is not a verdict to evict: the measurement under way decides. */
    if (!s || provisional) return s;
    /* The cached winner fails: forget it everywhere and measure the others. */
    cubert_log(CUBERT_LOG_INFO, "tune", "%s: cached winner %s failed (%s); evicted, retuning",
               set->name, set->candidates[winner].name, cubert_status_message(s));
    drop_done_entry(t, set, key, winner, 1);
    if (set->candidate_count == 1) return s;
    cubert_status_free(s);
    drop_from_disk(t, set, key, winner);
    excluded = winner;
  }
}

cubert_status cubert_tune_wait(cubert_client *client) {
  CUBERT_RETURN_IF_ERROR(check_client(client));
  cubert_tuner *t;
  CUBERT_RETURN_IF_ERROR(tuner_get(client, &t));
  cubert_tune_background_wait(t->bg);
  return NULL;
}

void cubert_tuner_background_stop(struct cubert_device *device) {
  cubert_tuner *t = atomic_load_explicit(&device->tuner, memory_order_acquire);
  if (t) cubert_tune_background_stop(t->bg);
}

cubert_status cubert_tune_stats_get(cubert_client *client, cubert_tune_stats *out) {
  CUBERT_RETURN_IF_ERROR(check_client(client));
  if (!out) return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT, "out is NULL");
  cubert_tuner *t;
  CUBERT_RETURN_IF_ERROR(tuner_get(client, &t));
  pthread_mutex_lock(&t->lock);
  *out = t->stats;
  pthread_mutex_unlock(&t->lock);
  return NULL;
}

cubert_status cubert_tune_cache_path(cubert_client *client, char *out, size_t capacity) {
  CUBERT_RETURN_IF_ERROR(check_client(client));
  if (!out) return cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT, "out is NULL");
  cubert_tuner *t;
  CUBERT_RETURN_IF_ERROR(tuner_get(client, &t));
  pthread_mutex_lock(&t->lock);
  cubert_status s = NULL;
  if (!t->path)
    s = cubert_status_make(CUBERT_CODE_UNAVAILABLE,
                           "no autotune cache folder (CUBERT_AUTOTUNE_CACHE=0, an unusable "
                           "folder, or none of CUBERT_CACHE_DIR, XDG_CACHE_HOME, HOME set)");
  else if (strlen(t->path) >= capacity)
    s = cubert_status_make(CUBERT_CODE_INVALID_ARGUMENT, "the path needs %zu bytes",
                           strlen(t->path) + 1);
  else
    memcpy(out, t->path, strlen(t->path) + 1);
  pthread_mutex_unlock(&t->lock);
  return s;
}

cubert_status cubert_tune_cache_foreach(cubert_client *client,
                                        void (*fn)(const cubert_tune_entry *entry, void *user),
                                        void *user, size_t *out_count) {
  if (out_count) *out_count = 0;
  char path[4096];
  CUBERT_RETURN_IF_ERROR(cubert_tune_cache_path(client, path, sizeof(path)));
  cubert_tuner *t;
  CUBERT_RETURN_IF_ERROR(tuner_get(client, &t));
  cubert_tune_record *records = NULL;
  size_t count = 0;
  const char *reason = cubert_tune_disk_load(path, t->identity, &records, &count);
  if (reason && strcmp(reason, CUBERT_CACHE_UNTRUSTED_REASON) != 0)
    cubert_log(CUBERT_LOG_WARN, "tune", "autotune cache file '%s' ignored (%s)", path, reason);
  for (size_t i = 0; fn && i < count; ++i) {
    const cubert_tune_record *r = &records[i];
    cubert_tune_entry entry = {r->set_name, r->checksum,    r->key,
                               r->winner,   r->winner_name, r->winner_ns};
    fn(&entry, user);
  }
  if (out_count) *out_count = count;
  free(records);
  return NULL;
}
