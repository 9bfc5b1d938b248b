/* watched: writes a global variable a known number of times, for the
 * hardware-breakpoint tests (perfkit record -e mem:ADDR:w). Built without PIE
 * so that `nm` gives the variable's run-time address. The first argument is
 * the number of writes (default 1000). */
#include <stdlib.h>

volatile long watched_counter;

__attribute__((noinline)) static void bump(long i) { watched_counter = i; }

int main(int argc, char** argv) {
  long n = argc > 1 ? strtol(argv[1], NULL, 10) : 1000;
  for (long i = 0; i < n; ++i) bump(i);
  return 0;
}
