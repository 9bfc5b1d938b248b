/* longnames: functions whose names are as long as C++ template names get
 * (perf report cuts a call-graph frame's name, and a column header, at
 * 1023 characters). main -> outer (1500 characters) -> {at_1023 (60%),
 * at_1024 (30%)}, and main -> at_1022 (10%). The first argument scales the
 * run time (about 1 ms per unit, default 50). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* Names built by pasting: X<n>(a) is n copies of `a`. */
#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#define X2(x) CAT(x, x)
#define X4(x) X2(X2(x))
#define X8(x) X2(X4(x))
#define X16(x) X4(X4(x))
#define X32(x) X2(X16(x))
#define X64(x) X4(X16(x))
#define X128(x) X2(X64(x))
#define X256(x) X4(X64(x))
#define X512(x) X2(X256(x))
#define X1024(x) X4(X256(x))
/* 1 + 1022, 1 + 1023, 1 + 1021 and 1 + 1499 characters */
#define AT_1023 CAT(p, CAT(X512(a), CAT(X256(a), CAT(X128(a), CAT(X64(a), CAT(X32(a), \
                CAT(X16(a), CAT(X8(a), CAT(X4(a), X2(a))))))))))
#define AT_1024 CAT(q, CAT(X1024(b), X16(c)))  /* 1 + 1024 + 16: cut in the middle */
#define AT_1022 CAT(r, CAT(X512(d), CAT(X256(d), CAT(X128(d), CAT(X64(d), CAT(X32(d), \
                CAT(X16(d), CAT(X8(d), CAT(X4(d), d)))))))))
#define OUTER CAT(s, CAT(X1024(e), CAT(X256(e), CAT(X128(e), CAT(X64(e), CAT(X16(e), \
              CAT(X8(e), CAT(X2(e), e))))))))

static volatile uint64_t sink;

__attribute__((noinline)) static uint64_t spin(uint64_t n, uint64_t seed) {
  uint64_t x = seed;
  for (uint64_t i = 0; i < n; ++i) x = x * 6364136223846793005ULL + 1442695040888963407ULL;
  return x;
}

/* A frame-pointer chain skips the caller of the leaf it samples (spin's,
 * here work): the long names are the frames above. Each adds to the result
 * after its call, so that no tail call hides its frame. */
__attribute__((noinline)) uint64_t work(uint64_t n, uint64_t s) { return spin(n, s) + 5; }
__attribute__((noinline)) uint64_t AT_1023(uint64_t n, uint64_t s) { return work(n * 6, s) + 1; }
__attribute__((noinline)) uint64_t AT_1024(uint64_t n, uint64_t s) { return work(n * 3, s) + 2; }
__attribute__((noinline)) uint64_t AT_1022(uint64_t n, uint64_t s) { return work(n, s) + 3; }
__attribute__((noinline)) uint64_t OUTER(uint64_t n, uint64_t s) {
  return AT_1023(n, s) + AT_1024(n, s) + 4;
}

int main(int argc, char** argv) {
  uint64_t m = argc > 1 ? strtoull(argv[1], NULL, 10) : 50;
  for (uint64_t i = 0; i < m; ++i) {
    sink += OUTER(100000, i);
    sink += AT_1022(100000, i);
  }
  printf("%llu\n", (unsigned long long)(sink & 0xff));
  return 0;
}
