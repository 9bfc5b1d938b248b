/* deepstack: deep and varied call stacks, as parsers, interpreters and
 * compilers make them, for bench/run's deep-stack recordings.
 *
 * Sixteen functions call one another recursively; which one a frame calls
 * next comes from the path's number (one of 4096), so the stacks are 10 to
 * 30 frames deep and several thousand distinct paths long, each ending in a
 * short spin. The first argument is the run time in milliseconds (about;
 * default 1000). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile uint64_t sink;

typedef uint64_t (*step_fn)(uint32_t path, int depth, uint64_t x);
static step_fn steps[16];

__attribute__((noinline)) static uint64_t spin(uint64_t x) {
  for (int i = 0; i < 2000; ++i) x = x * 6364136223846793005ULL + 1442695040888963407ULL;
  return x;
}

/* The next function: bits of the path chosen by the depth. */
static inline uint64_t next(uint32_t path, int depth, uint64_t x) {
  if (depth <= 0) return spin(x);
  uint32_t h = path * 2654435761u + (uint32_t)depth * 40503u;
  return steps[(h >> 11) & 15](path, depth - 1, x + (uint64_t)depth);
}

#define STEP(n)                                                                      \
  __attribute__((noinline)) static uint64_t step##n(uint32_t p, int d, uint64_t x) { \
    uint64_t r = next(p, d, x ^ (n));                                                \
    sink += r & 1; /* no tail call: the frame stays on the stack */                  \
    return r + (n);                                                                  \
  }
STEP(0)
STEP(1) STEP(2) STEP(3) STEP(4) STEP(5) STEP(6) STEP(7) STEP(8) STEP(9) STEP(10) STEP(11) STEP(12)
    STEP(13) STEP(14) STEP(15)

        static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

int main(int argc, char** argv) {
  step_fn all[16] = {step0, step1, step2,  step3,  step4,  step5,  step6,  step7,
                     step8, step9, step10, step11, step12, step13, step14, step15};
  for (int i = 0; i < 16; ++i) steps[i] = all[i];
  double ms = argc > 1 ? strtod(argv[1], NULL) : 1000;
  double end = now_ms() + ms;
  uint64_t x = 1;
  for (uint32_t i = 0; now_ms() < end; ++i) {
    for (uint32_t k = 0; k < 64; ++k) {
      uint32_t path = (i * 64 + k) * 2246822519u % 4096;
      x = steps[path & 15](path, 10 + (int)(path % 21), x);
    }
  }
  printf("%llu\n", (unsigned long long)(sink + (x & 0xff)));
  return 0;
}
