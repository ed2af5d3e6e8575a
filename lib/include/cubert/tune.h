/** @file
   cubert — autotune: choose among launch variants by measuring them on the device
   (docs/TUNING.md, `docs/architecture.md#profiling-tracing-and-autotune`).

   A tunable set is an ordered list of candidates that all compute the same thing from the same
   arguments (say, one reduction with different cube dims). The first time a key (an anchored
   description of the problem: sizes rounded to powers of two, dtypes, ...) is seen on a
   device, cubert_tune_execute() measures the valid candidates with the device's own timing and
   remembers the fastest, in memory (per device) and on disk (per device identity, under
   CUBERT_CACHE_DIR); every later call with that key runs the winner directly.

   Environment (read once, docs/environment.md):
   - CUBERT_AUTOTUNE=off|minimal|full: off: the first valid candidate, nothing measured or
     cached; minimal: the known-good default for the device family when the kernel
     library's table has one for the set (nothing measured), else only the priority-0
     candidates are measured; full (default): every valid candidate.
   - CUBERT_AUTOTUNE_BACKGROUND=auto|off|on: under full, whether the kernel library's operations
     measure a new key in a background thread while its first call runs a provisional
     candidate (see cubert_tune_execute, "Background tuning"); auto (default): on, except on the
     CPU server.
   - CUBERT_AUTOTUNE_LEVEL=minimal|balanced|extensive|full (or 0..3): how coarsely
     cubert_tune_key_add_anchored rounds sizes (cubert_tune_level); balanced by default.
   - CUBERT_AUTOTUNE_CACHE=0: ignore the disk cache (memory only).
   - CUBERT_AUTOTUNE_CHECKS=1: compare every measured candidate's result with the default
     candidate's, for sets that say where their result is (cubert_tune_set.output); a candidate
     that disagrees is reported and cannot win. Off by default: it reads the result back once
     per candidate, and refills the candidates' scratch copies before each (see
     cubert_tune_execute).
   - CUBERT_LOG=info,tune: one line per measured candidate and per decision.
   - CUBERT_PROFILE, CUBERT_TRACE: launches made while a candidate is measured carry
     "(tuning <set>/<candidate>)" after the kernel name. */
#ifndef CUBERT_TUNE_H
#define CUBERT_TUNE_H

#include <stddef.h>
#include <stdint.h>

#include "cubert/export.h"
#include "cubert/layout.h"
#include "cubert/status.h"

CUBERT_EXTERN_C_BEGIN

typedef struct cubert_client cubert_client; /**< A client of one device (client.h). */
typedef struct cubert_handle cubert_handle; /**< A buffer of a client (client.h). */

/** The most fields a tuning key holds. */
#define CUBERT_TUNE_KEY_MAX_FIELDS 8
/** The most timed runs per candidate after one warm-up run; the median decides. */
#define CUBERT_TUNE_SAMPLES 5

/** A tuning key: up to CUBERT_TUNE_KEY_MAX_FIELDS 64-bit fields, compared field by field.
   Zero-initialise it, then append with cubert_tune_key_add*(). Two calls share a cached winner
   exactly when their sets and keys are equal. */
typedef struct cubert_tune_key {
  uint32_t count;                              /**< fields in use */
  uint64_t fields[CUBERT_TUNE_KEY_MAX_FIELDS]; /**< fields [0, count) */
} cubert_tune_key;

/** Launches one candidate on `client` with the caller's arguments (what cubert_tune_execute
   received). Tuning runs it several times with the same arguments; while it is measured, every
   buffer it may write is a scratch copy (see cubert_tune_execute), so an in-place or accumulating
   candidate changes the caller's data only once, in the winner's final launch. Returns its
   launch status. */
typedef cubert_status (*cubert_tune_launch_fn)(cubert_client *client, const void *args);

/** Optional: nonzero when the candidate can run this key (e.g. a cube dim the device allows).
   Invalid candidates are neither measured nor run. */
typedef int (*cubert_tune_valid_fn)(const cubert_client *client, const cubert_tune_key *key,
                                    const void *args);

/** One way to compute the set's result. */
typedef struct cubert_tune_candidate {
  const char *name;             /**< unique within the set; part of the set's checksum */
  cubert_tune_launch_fn launch; /**< runs the candidate */
  cubert_tune_valid_fn valid;   /**< NULL: valid for every key */
  /** Priority group: CUBERT_AUTOTUNE=minimal measures only group 0 (falling back to every
     valid candidate when group 0 has none for the key); full measures all groups. */
  uint32_t priority;
} cubert_tune_candidate;

/** Where the candidates of a set write their result, for CUBERT_AUTOTUNE_CHECKS=1 (the
   reference's `autotune-checks`): `count` elements of `dtype` from byte `offset` of `handle`.
   Float elements (F32, F64) agree when both are NaN, both the same infinity, or
   |got - reference| <= tolerance * (the largest finite |reference| element, at least 1); other
   dtypes (and F16, compared as stored) must be equal byte for byte. */
typedef struct cubert_tune_output {
  cubert_handle *handle; /**< the buffer the candidates write (read from its scratch copy) */
  uint64_t offset;       /**< bytes from the start of the handle */
  uint64_t count;        /**< elements */
  cubert_dtype dtype;    /**< F32 / F64: with tolerance; others exact */
  double tolerance;      /**< relative to the reference's largest element (see above) */
} cubert_tune_output;

/** Optional: fills *out with the result region of a call's `args` (what the candidates'
   launches received) and returns nonzero; returns 0 when the call has nothing to compare. Called
   after a candidate's warm-up run, so a scratch buffer the candidates allocate on first need
   already exists. */
typedef int (*cubert_tune_output_fn)(const void *args, cubert_tune_output *out);

/** In memory a set is identified by its address (the hit path compares pointers, not names):
   it must stay valid and unchanged while any client of a device that ran it lives, which static
   tables are; on disk it is identified by its name and checksum. */
typedef struct cubert_tune_set {
  /** Names the operation in the caches: 1..63 characters of [A-Za-z0-9_.:-], unique in the
     program (two sets with one name and different candidates simply invalidate each other's
     disk entries). */
  const char *name;
  const cubert_tune_candidate *candidates; /**< [candidate_count], ordered: the first valid one
                                              is the default (CUBERT_AUTOTUNE=off) */
  uint32_t candidate_count;                /**< 1..256 */
  /** Optional checksum of whatever else decides the candidates' speed (their kernel sources,
     say). It joins the checksum of the candidate names that keys every disk entry, so a
     changed kernel invalidates stale winners. 0: names only. */
  uint64_t source_checksum;
  /** Optional (NULL: never checked): the result region, for CUBERT_AUTOTUNE_CHECKS=1. With the
     checks on, tuning reads each measured candidate's result after its warm-up run and compares
     it with the result of the first candidate that ran (in set order: the default, the one
     CUBERT_AUTOTUNE=off runs; cubecl compares with its last). A candidate that disagrees is
     logged at warn with the first differing element, counted in
     cubert_tune_stats.candidates_mismatched and excluded, as a failed one is: it cannot win. */
  cubert_tune_output_fn output;
} cubert_tune_set;

/** Rounds x up to a power of `base` (0 means 2), then clamps it to [min, max] (max 0: no upper
   bound), as the reference's anchor(): with base 2, 1000 and 1024 both give 1024 and 4096
   stays 4096, so nearby sizes share one cached winner. x of 0 or 1 gives 1 (before the clamp).
   Pure; never fails. */
CUBERT_API uint64_t cubert_tune_anchor(uint64_t x, uint64_t max, uint64_t min, uint64_t base);

/** Anchor granularity (CUBERT_AUTOTUNE_LEVEL, the reference's autotune level): how coarsely
   sizes are rounded into keys, so how many sizes share one tuning. */
typedef enum cubert_tune_level {
  CUBERT_TUNE_LEVEL_MINIMAL = 0,   /**< coarser: powers of 1.25 x base (2.5): fewer tunings */
  CUBERT_TUNE_LEVEL_BALANCED = 1,  /**< powers of base (2), the default */
  CUBERT_TUNE_LEVEL_EXTENSIVE = 2, /**< finer: powers of 0.75 x base (1.5) */
  CUBERT_TUNE_LEVEL_FULL = 3,      /**< no rounding: every size is its own key */
} cubert_tune_level;

/** cubert_tune_anchor at a level, as the reference's anchor(): FULL returns x (clamped);
   BALANCED is cubert_tune_anchor; MINIMAL and EXTENSIVE round x up to ceil(b^k), the smallest
   such value >= x, with b = max(base x 1.25 or x 0.75, 1.1) (base 0 means 2). With base 2:
   1, 3, 100, 1000, 4096, 5000 give 1, 7, 245, 1526, 9537, 9537 (minimal) and 1, 4, 130, 1478,
   4988, 7482 (extensive). Pure; never fails; a level out of the enum counts as BALANCED. */
CUBERT_API uint64_t cubert_tune_anchor_level(uint64_t x, uint64_t max, uint64_t min, uint64_t base,
                                             cubert_tune_level level);

/** @{ */
/** Appends `value` unchanged / anchored with cubert_tune_anchor_level(value, 0, 1, 2, level),
   level from CUBERT_AUTOTUNE_LEVEL (default balanced: powers of 2; the usual treatment of
   sizes). INVALID_ARGUMENT when key is NULL or already full. */
CUBERT_API cubert_status cubert_tune_key_add(cubert_tune_key *key, uint64_t value);
CUBERT_API cubert_status cubert_tune_key_add_anchored(cubert_tune_key *key, uint64_t value);
/** @} */

/** Runs the set's best candidate for `key` on `client` with `args` and returns its status.

   Known key (in memory, or on disk for this device identity with a matching checksum): the
   winner is launched directly (no measurement). A cached winner whose launch fails is evicted
   from both caches and the key is tuned again without it.

   Scratch copies: candidates being measured never write memory the caller can see. While they
   run (warm-ups, samples, result checks), each buffer that a launch binds or that
   cubert_client_write writes is used through a copy of its whole allocation, made at its first
   such use on the calling stream and kept until the measurement ends (one allocation and one
   device copy per buffer and tuning, not per sample); reads of it during the measurement read
   the copy.
   Exempt, used in place: buffers created during the measurement (the candidates' own) and those
   the call declares read-only (cubert_tune_execute_reading). With CUBERT_AUTOTUNE_CHECKS=1 the
   copies are refilled from the caller's buffers before each candidate's warm-up, so every
   candidate is checked on the caller's data. Only the winner's final launch, after the
   measurement, runs on the caller's buffers. A failure to make a copy (OUT_OF_MEMORY) is the
   candidate's failure, as below.

   Unknown key: a key with a single valid candidate (see CUBERT_AUTOTUNE) is not measured: that
   candidate is launched directly and remembered in memory only (when its launch fails, nothing
   is remembered). Otherwise every valid candidate is run once to warm up and then timed up to
   CUBERT_TUNE_SAMPLES times, round-robin over the candidates, through cubert_client_profile()
   on the calling stream (device timestamps on OpenCL, host clock after a sync on the CPU server;
   each run is synchronised, other streams keep their work and results). After each round, a
   candidate whose fastest run is more than 1.5x the fastest run of any candidate is eliminated
   (it cannot win), and sampling stops once one contender is left; the median of the
   contenders' samples decides. A candidate that fails is skipped and logged at info; the winner
   is cached and then launched once more, and that launch's status is returned. When every
   candidate fails, the last failure is returned and nothing is cached. Errors the calling
   stream's earlier asynchronous work raised are not the candidates': they are kept apart while
   the candidates run and returned by the stream's next flush/sync/read, as when the key is
   cached (work queued behind them, the winner's launch included, is skipped as usual).

   Background tuning (the kernel library's operations; internal calls that can keep their
   arguments beyond the call): under CUBERT_AUTOTUNE=full with CUBERT_AUTOTUNE_BACKGROUND on
   (auto: every device but the CPU server), the first call of an unknown key launches a
   provisional candidate at once on the caller's stream (the device family's known-good one
   where the library has one, else the default) and returns its status; a worker thread of the
   device then measures every valid candidate as above, on its own client and stream, with a
   copy of the arguments and scratch copies of every buffer the candidates bind (inputs
   included), and publishes and persists the winner. Until then, calls with the key launch the
   provisional candidate (cubert_tune_lookup says PENDING); afterwards the winner. The caller's
   buffers are only read (to make the copies) and its stream never carries a measurement, so its
   errors stay where they were raised. When every candidate fails in the background (the
   caller released a buffer the copy needed, say), the provisional candidate stays the key's
   choice in memory only. When the device's last client the program made is released, the
   worker is stopped: the running measurement is cancelled at its next step, the queued ones
   are dropped, and those keys are neither remembered nor written to disk (the next process
   measures them again). cubert_tune_wait waits for the queue.

   Thread-safety: any number of threads may call this for one client or device. When several
   threads ask for the same unknown key, one measures it and the others wait for its verdict
   and then launch the winner. Why wait rather than run the default candidate meanwhile: the
   measurements need the device to themselves (each sample holds the device lock and syncs the
   stream), so concurrent default launches would stall behind them anyway and, worse, delay
   and perturb the very timings being taken; waiting costs one tuning, once per key and device.
   A candidate that calls cubert_tune_execute() with the key being tuned on the same thread
   gets the default candidate instead of a deadlock. Do not call this for an untuned key from
   inside cubert_client_exclusive(): the measuring thread needs the device lock.

   Returns INVALID_ARGUMENT (NULL client/set/key, bad set name or candidate, two candidates of
   one name), UNAVAILABLE when
   no candidate is valid for the key, OUT_OF_MEMORY, or a candidate's status. */
CUBERT_API cubert_status cubert_tune_execute(cubert_client *client, const cubert_tune_set *set,
                                             const cubert_tune_key *key, const void *args);

/** As cubert_tune_execute, declaring the buffers that no candidate writes: the
   `read_only_count` handles of `read_only` are used in place while the candidates are measured,
   without a scratch copy (cubert_tune_execute treats every buffer as possibly written). A buffer
   bound through another handle is used in place only when its bytes lie inside a declared
   handle's, so declare a handle only when no candidate writes any of its bytes (an input that
   shares its buffer with an output is not read-only). Declarations of a tuning nested in a
   candidate's launch are ignored (its buffers are the outer tuning's copies). The handles are
   only read for the duration of the call. INVALID_ARGUMENT for a NULL read_only with a nonzero
   count; otherwise as cubert_tune_execute. */
CUBERT_API cubert_status cubert_tune_execute_reading(cubert_client *client,
                                                     const cubert_tune_set *set,
                                                     const cubert_tune_key *key, const void *args,
                                                     cubert_handle *const *read_only,
                                                     size_t read_only_count);

/** Blocks until the background worker of `client`'s device (see cubert_tune_execute,
   "Background tuning") has measured every key queued so far and published their winners (in
   memory and on disk), then returns NULL. Returns at once when nothing is queued, when the
   worker is not running, and when called from inside a candidate the worker measures.
   INVALID_ARGUMENT for NULL, NOT_FOUND for a released client. Thread-safe. */
CUBERT_API cubert_status cubert_tune_wait(cubert_client *client);

/** What the tuner knows of a key (cubert_tune_lookup). */
typedef enum cubert_tune_lookup_result {
  CUBERT_TUNE_MISS = 0,    /**< not tuned: cubert_tune_execute would measure it */
  CUBERT_TUNE_HIT = 1,     /**< tuned (in memory, or on disk for this device): a winner */
  CUBERT_TUNE_PENDING = 2, /**< being measured now, by this thread, another or the background
                              worker */
} cubert_tune_lookup_result;

/** Looks the key up without running anything (the reference's Tuner::fastest): the in-memory
   cache, then this device's disk cache, as cubert_tune_execute does first. On a hit, *out_winner
   (may be NULL) gets the winner's index in `set` and the key is answered from memory from now
   on (a disk hit counts in disk_hits, as in cubert_tune_execute); otherwise *out_winner is
   UINT32_MAX. Nothing is measured or launched, and a miss remembers nothing. INVALID_ARGUMENT
   for NULL client/set/key/out_result and for a set that cubert_tune_execute refuses.
   Thread-safe. */
CUBERT_API cubert_status cubert_tune_lookup(cubert_client *client, const cubert_tune_set *set,
                                            const cubert_tune_key *key,
                                            cubert_tune_lookup_result *out_result,
                                            uint32_t *out_winner);

/** Counters of one device's tuner since its client was created (all clients of the device
   share them). */
typedef struct cubert_tune_stats {
  uint64_t memory_hits;           /**< calls answered from memory */
  uint64_t disk_hits;             /**< keys first answered from the disk cache */
  uint64_t tunings;               /**< keys decided by tuning (measured, or a lone candidate) */
  uint64_t candidates_measured;   /**< candidates run for measurement (failures included) */
  uint64_t candidates_failed;     /**< of those, the ones that failed */
  uint64_t evictions;             /**< cached winners that failed at launch */
  uint64_t disk_writes;           /**< cache files written */
  uint64_t disk_rejected;         /**< cache files ignored (truncated, garbage, foreign, or
                                       owned or writable by another user) */
  uint64_t samples;               /**< timed runs taken (warm-up runs not included) */
  uint64_t candidates_eliminated; /**< candidates dropped before their last sample: too slow
                                     to win (see cubert_tune_execute) */
  uint64_t candidates_mismatched; /**< candidates excluded because their result disagreed with
                                     the default's (CUBERT_AUTOTUNE_CHECKS=1) */
  uint64_t background_tunings;    /**< of `tunings`, the keys measured by the background worker
                                     (cubert_tune_wait) */
} cubert_tune_stats;

/** Copies the counters. INVALID_ARGUMENT for NULL arguments. Thread-safe. */
CUBERT_API cubert_status cubert_tune_stats_get(cubert_client *client, cubert_tune_stats *out);

/** One disk-cache entry as cubert_tune_cache_foreach() reports it. Strings live only for the
   callback. */
typedef struct cubert_tune_entry {
  const char *set_name;    /**< cubert_tune_set.name */
  uint64_t checksum;       /**< of the set's candidate names and source checksum */
  cubert_tune_key key;     /**< the problem */
  uint32_t winner;         /**< candidate index */
  const char *winner_name; /**< candidate name */
  uint64_t winner_ns;      /**< its median, ns */
} cubert_tune_entry;

/** Writes the path of this device's cache file (whether or not it exists) into out. Returns
   UNAVAILABLE when there is no cache folder (CUBERT_AUTOTUNE_CACHE=0, or neither
   CUBERT_CACHE_DIR, XDG_CACHE_HOME nor HOME is set) and INVALID_ARGUMENT when it does not
   fit. */
CUBERT_API cubert_status cubert_tune_cache_path(cubert_client *client, char *out, size_t capacity);

/** Calls fn for every entry of this device's cache file (none when the file is missing or
   invalid; *out_count gets the number of entries, may be NULL). Reads the file; does not touch
   the in-memory cache. */
CUBERT_API cubert_status cubert_tune_cache_foreach(cubert_client *client,
                                                   void (*fn)(const cubert_tune_entry *entry,
                                                              void *user),
                                                   void *user, size_t *out_count);

CUBERT_EXTERN_C_END

#endif /* CUBERT_TUNE_H */
