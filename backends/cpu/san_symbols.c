/* cubert CPU server — the kernel sanitizer's source lines (san_symbols.h).

   A report names the line of the access from the code address of the instrumentation call
   (its return address). The sanitize copy of every kernel file carries DWARF line tables and
   the inlined-call records that -g1 keeps (cmake/CubertKernels.cmake), whatever the build type,
   so the lookup works in Release builds too. libdw's Dwfl reads them from the process's own
   modules (/proc/self/maps): the line table gives the innermost source position, which for an
   access inside an inlined accessor of cubert/cube.h is the header's; the chain of
   DW_TAG_inlined_subroutine scopes around the address gives each call site outwards, and the
   innermost one in the kernel's own file is the line the kernel author wrote.

   Reports are rare (one per launch at most) and cold; the hot path never comes here. The Dwfl
   session is built at the first report, kept for the process (a report at a new module reports
   the process's modules again) and, like the cache, guarded by one mutex: libdw's handles are
   not thread-safe, and reports come from any worker. A lookup runs on a short-lived thread of
   its own (the default stack), since the unit that reports may be on a small fiber stack. */
#include "cpu/san_symbols.h"

#include <dlfcn.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if CUBERT_HAVE_LIBDW
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#endif

static const char *base_name(const char *path) {
  const char *slash = strrchr(path, '/');
  return slash ? slash + 1 : path;
}

/* "module+0xoffset": what a report says where it has no line. */
static void code_address(const void *pc, char *out, size_t size) {
  Dl_info info;
  if (pc && dladdr(pc, &info) && info.dli_fname)
    snprintf(out, size, "%s+0x%" PRIxPTR, base_name(info.dli_fname),
             (uintptr_t)pc - (uintptr_t)info.dli_fbase);
  else
    snprintf(out, size, "%p", pc);
}

#if CUBERT_HAVE_LIBDW

static Dwfl *session;
static const Dwfl_Callbacks callbacks = {
    .find_elf = dwfl_linux_proc_find_elf,
    .find_debuginfo = dwfl_standard_find_debuginfo,
};

/* The process's modules; `again`: reported afresh (a library loaded since the last look). */
static Dwfl *modules(int again) {
  if (!session) {
    session = dwfl_begin(&callbacks);
    if (!session) return NULL;
    again = 1;
  }
  if (again) {
    dwfl_report_begin(session);
    int failed = dwfl_linux_proc_report(session, getpid()) != 0;
    if (dwfl_report_end(session, NULL, NULL) != 0 || failed) return NULL;
  }
  return session;
}

static Dwfl_Module *module_at(Dwarf_Addr a) {
  Dwfl *d = modules(0);
  Dwfl_Module *m = d ? dwfl_addrmodule(d, a) : NULL;
  if (!m && (d = modules(1)) != NULL) m = dwfl_addrmodule(d, a);
  return m;
}

typedef struct place {
  const char *file;
  int line;
} place;

/* The call sites of the inlined functions around `a`, innermost first, after `out[0]`. */
static int call_sites(Dwfl_Module *m, Dwarf_Addr a, place *out, int n, int max) {
  Dwarf_Addr bias = 0;
  Dwarf_Die *cu = dwfl_module_addrdie(m, a, &bias);
  Dwarf_Files *files = NULL;
  size_t file_count = 0;
  if (!cu || dwarf_getsrcfiles(cu, &files, &file_count) != 0) return n;
  Dwarf_Die *scopes = NULL;
  int k = dwarf_getscopes(cu, a - bias, &scopes);
  for (int i = 0; i < k && n < max; ++i) {
    if (dwarf_tag(&scopes[i]) != DW_TAG_inlined_subroutine) continue;
    Dwarf_Attribute at;
    Dwarf_Word file = 0, line = 0;
    if (!dwarf_attr(&scopes[i], DW_AT_call_file, &at) || dwarf_formudata(&at, &file) != 0 ||
        !dwarf_attr(&scopes[i], DW_AT_call_line, &at) || dwarf_formudata(&at, &line) != 0)
      continue;
    const char *name = file < file_count ? dwarf_filesrc(files, file, NULL, NULL) : NULL;
    if (name) out[n++] = (place){name, (int)line};
  }
  free(scopes);
  return n;
}

/* The line of `pc` (lock held): see cubert_cpu_san_symbols_where. */
static int lookup(const void *pc, const char *kernel_file, char *out, size_t size) {
  /* The return address is the instruction after the call: look up the call's last byte. */
  const Dwarf_Addr a = (Dwarf_Addr)(uintptr_t)pc - 1;
  Dwfl_Module *m = module_at(a);
  Dwfl_Line *l = m ? dwfl_module_getsrc(m, a) : NULL;
  place p[16];
  int line = 0;
  const char *file = l ? dwfl_lineinfo(l, NULL, &line, NULL, NULL, NULL) : NULL;
  if (!file || line <= 0) {
    char code[128];
    code_address(pc, code, sizeof code);
    snprintf(out, size, "%s (no line: %s)", code,
             m ? "no line table there: not built by cubert_add_kernels, or stripped"
               : "no module of the process holds it");
    return 0;
  }
  p[0] = (place){file, line};
  const int n = call_sites(m, a, p, 1, (int)(sizeof p / sizeof p[0]));
  int pick = 0;
  if (kernel_file) {
    const char *want = base_name(kernel_file);
    for (int i = 0; i < n; ++i)
      if (strcmp(base_name(p[i].file), want) == 0) {
        pick = i;
        break;
      }
  }
  snprintf(out, size, "%s:%d", base_name(p[pick].file), p[pick].line);
  return 1;
}

#else

static int lookup(const void *pc, const char *kernel_file, char *out, size_t size) {
  (void)kernel_file;
  char code[128];
  code_address(pc, code, sizeof code);
  snprintf(out, size, "%s (no line: cubert was built without libdw, Debian libdw-dev)", code);
  return 0;
}

#endif

/* Reports at one place repeat (a test, a loop of launches): the last few answers. */
enum { CACHE_SIZE = 32, TEXT_BYTES = 256 };
typedef struct cached {
  const void *pc;
  const char *kernel_file;
  int found;
  char text[TEXT_BYTES];
} cached;
static cached cache[CACHE_SIZE];
static unsigned cache_next;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* The lookup runs on a thread of its own: a report comes from a unit, which may run on a fiber
   with a small stack, and libdw's line-table parser takes more than that (it overflowed one). */
static void *lookup_thread(void *arg) {
  cached *c = arg;
  c->found = lookup(c->pc, c->kernel_file, c->text, sizeof c->text);
  return NULL;
}

static void no_thread(cached *c) {
  char code[128];
  code_address(c->pc, code, sizeof code);
  snprintf(c->text, sizeof c->text, "%s (no line: no thread could be started for the lookup)",
           code);
}

int cubert_cpu_san_symbols_where(const void *pc, const char *kernel_file, char *out, size_t size) {
  if (!size) return 0;
  pthread_mutex_lock(&lock);
  cached *hit = NULL;
  for (unsigned i = 0; i < CACHE_SIZE && !hit; ++i)
    if (cache[i].pc == pc && cache[i].kernel_file == kernel_file && cache[i].text[0])
      hit = &cache[i];
  if (!hit) {
    hit = &cache[cache_next++ % CACHE_SIZE];
    hit->pc = pc;
    hit->kernel_file = kernel_file;
    hit->found = 0;
    pthread_t thread;
    if (pthread_create(&thread, NULL, lookup_thread, hit) == 0)
      pthread_join(thread, NULL);
    else
      no_thread(hit);
  }
  snprintf(out, size, "%s", hit->text);
  const int found = hit->found;
  pthread_mutex_unlock(&lock);
  return found;
}
