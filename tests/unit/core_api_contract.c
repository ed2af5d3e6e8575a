/* Public API fidelity (issue 10, "Fidelity fixes"): enums and selectors out of range are
   INVALID_ARGUMENT, selector NOT_FOUND does not talk about handles, unbalanced allocation
   windows are refused, memory_report holds every installed pool, a profile token of another
   device is NOT_FOUND, a failed launch fails every open profile on its stream, allocation
   failures of create/empty are IO-kind OUT_OF_MEMORY, cubert_status_make is exported from
   the shared library, and the default log level stays silent for work that succeeds. */
#include <criterion/criterion.h>
#include <cubert/cubert.h>
#include <cubert/kernels.h>
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "cpu/api.h"
#include "device.h"
#include "unit/core_capture.h"

#define OK(expr)                                                       \
  do {                                                                 \
    cubert_status s_ = (expr);                                         \
    cr_assert(s_ == NULL, "%s: %s", #expr, cubert_status_message(s_)); \
  } while (0)

/* Asserts the code and that the message contains `needle` (NULL: anything). */
#define CODE(expr, code, needle)                                                                   \
  do {                                                                                             \
    cubert_status s_ = (expr);                                                                     \
    cr_assert_eq(cubert_status_code(s_), (code), "%s: expected %s, got %s", #expr,                 \
                 cubert_code_name(code), s_ ? cubert_status_message(s_) : "success");              \
    const char *n_ = (needle);                                                                     \
    cr_assert(!n_ || strstr(cubert_status_message(s_), n_), "%s: message lacks \"%s\": %s", #expr, \
              n_ ? n_ : "", cubert_status_message(s_));                                            \
    cubert_status_free(s_);                                                                        \
  } while (0)

static cubert_client *client;

static void setup(void) {
  OK(cubert_client_create("cpu", &client));
}

static void teardown(void) {
  cubert_client_release(client);
}

TestSuite(core_api_contract, .init = setup, .fini = teardown);

Test(core_api_contract, empty_selectors_are_invalid_argument) {
  cubert_client *c = (cubert_client *)&c; /* overwritten with NULL */
  CODE(cubert_client_create("", &c), CUBERT_CODE_INVALID_ARGUMENT, "empty");
  cr_assert_null(c);
  CODE(cubert_client_create("opencl:", &c), CUBERT_CODE_INVALID_ARGUMENT, "opencl:");
  CODE(cubert_client_create("cpu:", &c), CUBERT_CODE_INVALID_ARGUMENT, "cpu:");
  CODE(cubert_client_create(":0", &c), CUBERT_CODE_INVALID_ARGUMENT, "backend");
}

static void expect_device_not_found(const char *selector) {
  cubert_client *c = NULL;
  cubert_status s = cubert_client_create(selector, &c);
  cr_assert_eq(cubert_status_code(s), CUBERT_CODE_NOT_FOUND, "\"%s\": %s", selector,
               cubert_status_message(s));
  cr_assert_null(strstr(cubert_status_message(s), "handle"), "\"%s\": %s", selector,
                 cubert_status_message(s));
  cr_assert(strstr(cubert_status_message(s), "device"), "%s", cubert_status_message(s));
  cubert_status_free(s);
}

Test(core_api_contract, selector_not_found_does_not_talk_about_handles) {
  expect_device_not_found("nosuch");
  expect_device_not_found("cpu:7");
}

Test(core_api_contract, invalid_enums_are_invalid_argument) {
  cubert_handle *h = NULL;
  OK(cubert_client_empty(client, 1024, &h));
  uint64_t info[2] = {256, 1};
  cubert_kernel_args args = {&h, 1, info, 2};
  CODE(cubert_client_launch_mode(client, &cubert_kernel_fill_u32, cubert_cube_count_new_3d(1, 1, 1),
                                 cubert_cube_dim_new_3d(256, 1, 1), &args,
                                 (cubert_execution_mode)99),
       CUBERT_CODE_INVALID_ARGUMENT, "99");
  cubert_layout_desc desc = {
      .strategy = (cubert_layout_strategy)77, .rank = 2, .shape = {4, 4}, .elem_size = 4};
  cubert_tensor t;
  CODE(cubert_client_empty_tensor(client, &desc, &t), CUBERT_CODE_INVALID_ARGUMENT, "77");
  cubert_layout l;
  CODE(cubert_layout_compute(&desc, 0, &l), CUBERT_CODE_INVALID_ARGUMENT, "strategy");
  CODE(cubert_client_allocation_mode(client, (cubert_allocation_mode)5),
       CUBERT_CODE_INVALID_ARGUMENT, NULL);
  cubert_handle_release(h);
}

Test(core_api_contract, unbalanced_allocation_mode_auto_is_invalid_argument) {
  CODE(cubert_client_allocation_mode(client, CUBERT_ALLOCATION_AUTO), CUBERT_CODE_INVALID_ARGUMENT,
       "PERSISTENT");
  OK(cubert_client_allocation_mode(client, CUBERT_ALLOCATION_PERSISTENT));
  OK(cubert_client_allocation_mode(client, CUBERT_ALLOCATION_PERSISTENT));
  OK(cubert_client_allocation_mode(client, CUBERT_ALLOCATION_AUTO));
  OK(cubert_client_allocation_mode(client, CUBERT_ALLOCATION_AUTO));
  CODE(cubert_client_allocation_mode(client, CUBERT_ALLOCATION_AUTO), CUBERT_CODE_INVALID_ARGUMENT,
       NULL);
}

Test(core_api_contract, memory_report_covers_every_installed_pool) {
  enum { POOLS = 200 };
  static cubert_pool_config pools[POOLS];
  for (int i = 0; i < POOLS; ++i)
    pools[i] = (cubert_pool_config){.kind = CUBERT_POOL_SLICED,
                                    .page_size = (uint64_t)(i + 1) * 4096,
                                    .max_slice_size = (uint64_t)(i + 1) * 4096};
  cubert_memory_config config = {
      .preset = CUBERT_POOLS_EXPLICIT, .pools = pools, .pool_count = POOLS};
  OK(cubert_client_install_memory_pools(client, &config));
  static cubert_memory_report report;
  OK(cubert_client_memory_report(client, &report));
  cr_assert_eq(report.pool_count, POOLS + 1, "%zu pools reported", report.pool_count);
  cr_assert_eq(report.pools[POOLS - 1].config.page_size, POOLS * 4096);
  cr_assert_eq(report.pools[POOLS].config.kind, CUBERT_POOL_PERSISTENT);
}

Test(core_api_contract, profile_token_of_another_device_is_not_found) {
  cubert_client *other = NULL;
  OK(cubert_client_create("cpu!private", &other));
  cubert_profile_token mine, theirs;
  OK(cubert_client_profile_start(client, &mine));
  OK(cubert_client_profile_start(other, &theirs));
  cubert_profile_duration d;
  CODE(cubert_client_profile_end(client, theirs, &d), CUBERT_CODE_NOT_FOUND, "another device");
  /* neither profile was ended by the mix-up */
  OK(cubert_client_profile_end(other, theirs, &d));
  OK(cubert_client_profile_end(client, mine, &d));
  CODE(cubert_client_profile_end(client, mine, &d), CUBERT_CODE_NOT_REGISTERED, NULL);
  cubert_client_release(other);
}

static void failing_cpu(const cubert_cpu_ctx *ctx) {
  if (ctx->unit_begin == 0) cubert_cpu_fail(ctx, "injected failure 5150");
}

static const cubert_kernel_def failing = {.name = "failing", .cpu = failing_cpu};

Test(core_api_contract, a_failed_launch_fails_every_open_profile_on_its_stream) {
  cubert_profile_token a, b, c;
  OK(cubert_client_profile_start(client, &a));
  OK(cubert_client_profile_start(client, &b));
  OK(cubert_client_profile_start(client, &c));
  OK(cubert_client_launch(client, &failing, cubert_cube_count_new_3d(1, 1, 1),
                          cubert_cube_dim_new_3d(1, 1, 1), NULL));
  cubert_profile_duration d;
  CODE(cubert_client_profile_end(client, b, &d), CUBERT_CODE_PROFILE_FAILED, "5150");
  CODE(cubert_client_profile_end(client, a, &d), CUBERT_CODE_PROFILE_FAILED, "5150");
  CODE(cubert_client_profile_end(client, c, &d), CUBERT_CODE_PROFILE_FAILED, "5150");
  /* the error was reported through the profiles; the stream is clean again */
  OK(cubert_client_sync(client));
  OK(cubert_client_profile_start(client, &a));
  OK(cubert_client_profile_end(client, a, &d));
  /* errors collected by a sync still fail the profiles open around them */
  OK(cubert_client_profile_start(client, &a));
  OK(cubert_client_launch(client, &failing, cubert_cube_count_new_3d(1, 1, 1),
                          cubert_cube_dim_new_3d(1, 1, 1), NULL));
  CODE(cubert_client_sync(client), CUBERT_CODE_SERVER_UNHEALTHY, "5150");
  CODE(cubert_client_profile_end(client, a, &d), CUBERT_CODE_PROFILE_FAILED, "5150");
}

/* Bytes of address space the process maps now (/proc/self/status VmSize), or 0. */
static uint64_t mapped_bytes(void) {
  FILE *f = fopen("/proc/self/status", "r");
  if (!f) return 0;
  char line[256];
  unsigned long long kib = 0;
  while (fgets(line, sizeof line, f))
    if (sscanf(line, "VmSize: %llu kB", &kib) == 1) break;
  fclose(f);
  return (uint64_t)kib * 1024;
}

Test(core_api_contract, allocation_failures_of_create_are_io_out_of_memory) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  cr_skip_test("an address-space limit and a sanitizer's shadow memory do not mix");
#endif
  uint64_t mapped = mapped_bytes();
  if (!mapped) cr_skip_test("no /proc/self/status here");
  /* Room for bookkeeping, not for a 1 GiB page: the server's storage allocation fails. */
  struct rlimit old, tight;
  cr_assert_eq(getrlimit(RLIMIT_AS, &old), 0);
  tight = old;
  tight.rlim_cur = mapped + (256u << 20);
  cr_assert_eq(setrlimit(RLIMIT_AS, &tight), 0);
  cubert_handle *h = NULL;
  cubert_status s = cubert_client_empty(client, 1u << 30, &h);
  uint32_t data[4] = {1, 2, 3, 4};
  cubert_status s2 = NULL;
  static char big[1 << 20];
  static cubert_handle *kept[512]; /* kept until the limit is hit */
  int count = 0;
  for (; count < 512 && !s2; ++count)
    s2 = cubert_client_create_buffer(client, big, sizeof big, &kept[count]);
  for (int i = 0; i < count; ++i) cubert_handle_release(kept[i]);
  setrlimit(RLIMIT_AS, &old);
  cr_assert_eq(cubert_status_code(s), CUBERT_CODE_OUT_OF_MEMORY, "%s", cubert_status_message(s));
  cr_assert_eq(cubert_status_kind(s), CUBERT_KIND_IO, "kind %s",
               cubert_kind_name(cubert_status_kind(s)));
  cr_assert_null(h);
  cr_assert_eq(cubert_status_code(s2), CUBERT_CODE_OUT_OF_MEMORY, "%s", cubert_status_message(s2));
  cr_assert_eq(cubert_status_kind(s2), CUBERT_KIND_IO, "%s", cubert_status_message(s2));
  cubert_status_free(s);
  cubert_status_free(s2);
  /* usable again once memory is back */
  OK(cubert_client_create_buffer(client, data, sizeof data, &h));
  cubert_handle_release(h);
  /* a launch's OUT_OF_MEMORY keeps its LaunchError kind */
  cubert_status launch_oom = cubert_status_make(CUBERT_CODE_OUT_OF_MEMORY, "launch");
  cr_assert_eq(cubert_status_kind(launch_oom), CUBERT_KIND_LAUNCH);
  cubert_status_free(launch_oom);
}

/* True when the ELF shared object at `path` defines `name` in its dynamic symbol table (what
   a program linking it can call). Read from the file, not loaded: loading a second copy of the
   library next to the static one trips ASan's ODR check. */
static int exports_symbol(const char *path, const char *name) {
  FILE *f = fopen(path, "rb");
  if (!f) return 0;
  fseek(f, 0, SEEK_END);
  long size = ftell(f);
  fseek(f, 0, SEEK_SET);
  unsigned char *image = size > 0 ? malloc((size_t)size) : NULL;
  int found = 0;
  if (image && fread(image, 1, (size_t)size, f) == (size_t)size &&
      (size_t)size >= sizeof(Elf64_Ehdr) && memcmp(image, ELFMAG, SELFMAG) == 0 &&
      image[EI_CLASS] == ELFCLASS64) {
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *)image;
    const Elf64_Shdr *sh = (const Elf64_Shdr *)(image + eh->e_shoff);
    for (int i = 0; i < eh->e_shnum && !found; ++i) {
      if (sh[i].sh_type != SHT_DYNSYM) continue;
      const Elf64_Sym *syms = (const Elf64_Sym *)(image + sh[i].sh_offset);
      const char *names = (const char *)(image + sh[sh[i].sh_link].sh_offset);
      for (size_t k = 0; k < sh[i].sh_size / sizeof(Elf64_Sym); ++k)
        if (syms[k].st_shndx != SHN_UNDEF && ELF64_ST_BIND(syms[k].st_info) == STB_GLOBAL &&
            strcmp(names + syms[k].st_name, name) == 0)
          found = 1;
    }
  }
  free(image);
  fclose(f);
  return found;
}

static cubert_status callback_with_own_error(cubert_client *c, void *user) {
  (void)c;
  (void)user;
  return cubert_status_make(CUBERT_CODE_UNAVAILABLE, "callback says %s", "no");
}

Test(core_api_contract, status_make_is_exported_for_callbacks) {
  const char *path = getenv("CUBERT_SHARED_LIBRARY");
  cr_assert_not_null(path, "CUBERT_SHARED_LIBRARY is not set (tests/CMakeLists.txt sets it)");
  cr_assert(exports_symbol(path, "cubert_status_free"), "%s: no dynamic symbols read", path);
  cr_assert(exports_symbol(path, "cubert_status_make"),
            "cubert_status_make is not exported from %s", path);
  /* a callback's own error comes back unchanged */
  CODE(cubert_client_exclusive(client, callback_with_own_error, NULL), CUBERT_CODE_UNAVAILABLE,
       "callback says no");
  cr_assert_null(cubert_status_make(CUBERT_CODE_OK, "ok"));
}

Test(core_api_contract, default_log_level_is_silent_for_work_that_succeeds) {
  unsetenv("CUBERT_LOG");
  /* a capped pool that spills into the next one: succeeds, so nothing to tell the user */
  cubert_pool_config pools[2] = {
      {.kind = CUBERT_POOL_SLICED, .page_size = 4096, .max_pool_size = 4096},
      {.kind = CUBERT_POOL_SLICED, .page_size = 4096},
  };
  cubert_memory_config config = {.preset = CUBERT_POOLS_EXPLICIT, .pools = pools, .pool_count = 2};
  core_capture cap;
  cr_assert(core_capture_begin(&cap));
  cubert_status s = cubert_client_install_memory_pools(client, &config);
  cubert_handle *a = NULL, *b = NULL;
  if (!s) s = cubert_client_empty(client, 4096, &a);
  if (!s) s = cubert_client_empty(client, 4096, &b);
  if (!s) s = cubert_client_sync(client);
  const char *text = core_capture_end(&cap);
  cr_assert_null(s, "%s", cubert_status_message(s));
  cr_assert_str_empty(text, "the default log level printed: %s", text);
  cubert_memory_report report = {0};
  OK(cubert_client_memory_report(client, &report));
  cr_assert_eq(report.pools[1].usage.number_allocs, 1, "the second buffer did not spill");
  cubert_handle_release(a);
  cubert_handle_release(b);
}
