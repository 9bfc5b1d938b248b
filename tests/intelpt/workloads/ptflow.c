/* A workload for the Intel PT tests: every kind of control flow a decoder
 * must follow. Indirect calls through a table, a switch (jump table),
 * recursion deeper than the hardware's 64-entry return stack, longjmp
 * (returns that do not match their calls), a signal handler (asynchronous
 * entry and rt_sigreturn), a vdso call, string instructions and loops.
 * `ptflow N fork` also forks a child that runs code of its own (no exec)
 * while the parent waits for it. */
#include <setjmp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile int sink;
static volatile int got_signal;
static jmp_buf jb;

__attribute__((noinline)) static int leaf(int x) { return x * 3 + 1; }
__attribute__((noinline)) static int deep(int n) { return n <= 0 ? 0 : 1 + deep(n - 1); }
static int f1(int x) { return x + 1; }
static int f2(int x) { return x * 2; }
static int f3(int x) { return x - 3; }
static int (*const table[])(int) = {f1, f2, f3};

__attribute__((noinline)) static int dispatch(int x) {
  switch (x & 7) {
    case 0:
      return 10;
    case 1:
      return leaf(x);
    case 2:
      return 7;
    case 3:
      return x * x;
    case 4:
      return -x;
    case 5:
      return 3;
    case 6:
      return x >> 1;
    default:
      return 99;
  }
}

__attribute__((noinline)) static void jumper(int n) {
  if (n <= 0) longjmp(jb, 1);  // NOLINT: ends the recursion
  jumper(n - 1);
  sink++;
}

static void handler(int sig) { got_signal = sig; }

/* The forked child's own work: only the child runs it. */
__attribute__((noinline)) static int child_work(int n) {
  int acc = 0;
  /* long enough that time-sampled decodes (i100ns) always land in it */
  for (int i = 0; i < n * 40; ++i) acc += dispatch(i * 5) + table[(i + 1) % 3](i);
  return acc + deep(n * 3);
}

int main(int argc, char** argv) {
  int n = argc > 1 ? atoi(argv[1]) : 100;
  int acc = 0;
  for (int i = 0; i < n; ++i) {
    acc += table[i % 3](i);
    acc += dispatch(i);
    if (i % 7 == 0) acc += leaf(i);
  }
  acc += deep(100);
  if (!setjmp(jb)) jumper(20);
  signal(SIGUSR1, handler);
  raise(SIGUSR1);
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  acc += (int)(ts.tv_nsec & 1);
  char buf[256];
  memset(buf, acc, sizeof buf);
  memmove(buf + 1, buf, 100);
  sink = acc + buf[5] + got_signal;
  if (argc > 2 && strcmp(argv[2], "fork") == 0) {
    pid_t child = fork();
    if (child == 0) _exit(child_work(n) & 1);
    int status = 0;
    if (child > 0) waitpid(child, &status, 0);
    sink += status;
  }
  return 0;
}
