/* cpuloop: a deterministic CPU-bound workload with a known call tree.
 * main -> run -> {hot (60%), warm (30%), cool (10%)} -> spin. The first
 * argument scales the run time (about 1 ms per unit, default 50). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static volatile uint64_t sink;

__attribute__((noinline)) static uint64_t spin(uint64_t n, uint64_t seed) {
  uint64_t x = seed;
  for (uint64_t i = 0; i < n; ++i) x = x * 6364136223846793005ULL + 1442695040888963407ULL;
  return x;
}

/* The seed changes every call so the compiler cannot hoist the pure calls. */
__attribute__((noinline)) uint64_t hot(uint64_t n, uint64_t s) { return spin(n * 6, s); }
__attribute__((noinline)) uint64_t warm(uint64_t n, uint64_t s) { return spin(n * 3, s + 1); }
__attribute__((noinline)) uint64_t cool(uint64_t n, uint64_t s) { return spin(n, s + 2); }

__attribute__((noinline)) static void run(uint64_t millions) {
  for (uint64_t i = 0; i < millions; ++i) {
    sink += hot(100000, i);
    sink += warm(100000, i);
    sink += cool(100000, i);
  }
}

int main(int argc, char** argv) {
  uint64_t m = argc > 1 ? strtoull(argv[1], NULL, 10) : 50;
  run(m);
  printf("%llu\n", (unsigned long long)(sink & 0xff));
  return 0;
}
