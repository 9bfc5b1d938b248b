// A deterministic workload for counting tests: calls counted_function()
// exactly N times (argv[1], default 1000) and touches M pages (argv[2],
// default 0) so page-fault counts move with the argument. The function's
// address (for an execute breakpoint, mem:ADDR:x) comes from its symbol.
#include <stdlib.h>
#include <string.h>

volatile unsigned long sink;

__attribute__((noinline, used)) void counted_function(unsigned long i) {
  sink += i;
  __asm__ volatile("" ::: "memory");
}

int main(int argc, char** argv) {
  unsigned long calls = argc > 1 ? strtoul(argv[1], NULL, 0) : 1000;
  unsigned long pages = argc > 2 ? strtoul(argv[2], NULL, 0) : 0;
  for (unsigned long i = 0; i < calls; ++i) counted_function(i);
  if (pages) {
    char* p = malloc(pages * 4096);
    if (!p) return 2;
    for (unsigned long i = 0; i < pages; ++i) p[i * 4096] = (char)i;
    sink += (unsigned char)p[(pages - 1) * 4096];
    free(p);
  }
  return 0;
}
