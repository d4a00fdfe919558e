// A malloc that fails once the heap would pass PTOC_FAILMALLOC_MB megabytes of live
// allocations (preloaded into a test's child process by out_of_memory.py). Unlike an
// address-space limit, the process's memory checks (support::memoryHeadroom) do not
// see it coming, so it reaches the paths that must survive std::bad_alloc.
#define _GNU_SOURCE
#include <errno.h>
#include <malloc.h>
#include <stdatomic.h>
#include <stdlib.h>

extern void *__libc_malloc(size_t);
extern void __libc_free(void *);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);

static _Atomic long live;
static _Atomic long cap = -1;

static int over(size_t n) {
  long c = cap;
  if (c < 0) {
    const char *mb = getenv("PTOC_FAILMALLOC_MB");
    c = mb ? atol(mb) << 20 : 0;
    cap = c;
  }
  return c > 0 && live + (long)n > c;
}

static void *counted(void *p) {
  if (p) live += (long)malloc_usable_size(p);
  return p;
}

void *malloc(size_t n) {
  if (over(n)) { errno = ENOMEM; return NULL; }
  return counted(__libc_malloc(n));
}

void free(void *p) {
  if (p) live -= (long)malloc_usable_size(p);
  __libc_free(p);
}

void *calloc(size_t count, size_t size) {
  if (size && count > (size_t)-1 / size) { errno = ENOMEM; return NULL; }
  if (over(count * size)) { errno = ENOMEM; return NULL; }
  return counted(__libc_calloc(count, size));
}

void *realloc(void *p, size_t n) {
  if (over(n)) { errno = ENOMEM; return NULL; }
  long before = p ? (long)malloc_usable_size(p) : 0;
  void *q = __libc_realloc(p, n);
  if (q) live += (long)malloc_usable_size(q) - before;
  else if (n == 0) live -= before;
  return q;
}

void *memalign(size_t align, size_t n) {
  if (over(n)) { errno = ENOMEM; return NULL; }
  return counted(__libc_memalign(align, n));
}

void *aligned_alloc(size_t align, size_t n) { return memalign(align, n); }

int posix_memalign(void **out, size_t align, size_t n) {
  void *p = memalign(align, n);
  if (!p) return ENOMEM;
  *out = p;
  return 0;
}
