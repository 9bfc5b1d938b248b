/* shares: three functions that each do their own work, in shares the
 * arguments set, for perfkit diff's tests: `shares UNITS HOT WARM COOL`
 * runs UNITS rounds of HOT, WARM and COOL thousand iterations of each
 * function's own loop (defaults 40 6 3 1: about 60%, 30% and 10%). A run
 * with HOT doubled is the regression a CI gate must catch. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static volatile uint64_t sink;

#define WORK(name, mul)                                                 \
  __attribute__((noinline)) uint64_t name(uint64_t n, uint64_t s) {     \
    uint64_t x = s;                                                     \
    for (uint64_t i = 0; i < n; ++i) x = x * (mul) + 1442695040888963407ULL; \
    return x;                                                           \
  }

WORK(hot, 6364136223846793005ULL)
WORK(warm, 2862933555777941757ULL)
WORK(cool, 3202034522624059733ULL)

int main(int argc, char** argv) {
  uint64_t units = argc > 1 ? strtoull(argv[1], NULL, 10) : 40;
  uint64_t h = argc > 2 ? strtoull(argv[2], NULL, 10) : 6;
  uint64_t w = argc > 3 ? strtoull(argv[3], NULL, 10) : 3;
  uint64_t c = argc > 4 ? strtoull(argv[4], NULL, 10) : 1;
  for (uint64_t u = 0; u < units; ++u) {
    sink += hot(h * 100000, u);
    sink += warm(w * 100000, u);
    sink += cool(c * 100000, u);
  }
  printf("%llu\n", (unsigned long long)(sink & 0xff));
  return 0;
}
