/* clockloop: reads the clock through the vdso (clock_gettime) at the
 * bottom of a recursion whose frames are large, built without frame
 * pointers. Its dwarf-callchain recordings unwind through [vdso] and run
 * past the end of the sampled stack. The first argument scales the run time
 * (about 1 ms per unit, default 50). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static volatile uint64_t sink;

__attribute__((noinline)) static uint64_t tick(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_nsec;
}

__attribute__((noinline)) static uint64_t descend(int depth, uint64_t calls) {
  volatile char frame[400];
  memset((char*)frame, depth, sizeof frame);
  if (depth == 0) {
    uint64_t s = 0;
    for (uint64_t i = 0; i < calls; ++i) s += tick();
    return s;
  }
  return descend(depth - 1, calls) + frame[depth % sizeof frame];
}

int main(int argc, char** argv) {
  uint64_t m = argc > 1 ? strtoull(argv[1], NULL, 10) : 50;
  for (uint64_t i = 0; i < m; ++i) sink += descend((int)(i % 30), 20000);
  printf("%llu\n", (unsigned long long)(sink & 0xff));
  return 0;
}
