/* jitgen DIR SECONDS [tsc]: a tiny JIT runtime, as perf inject --jit expects one.
 * It writes the machine code of two functions (jit_spin and jit_count) into
 * executable memory and describes them in DIR/jit-PID.dump in the jitdump
 * format (perf's jitdump specification): a header, a CODE_LOAD per function
 * (jit_count's after its DEBUG_INFO: its lines in "jitsrc.js"), and, half
 * way through, a CODE_MOVE of jit_spin to a new address; then a CODE_CLOSE.
 * The dump is mapped executable, which puts its name in the recording for
 * perf inject to find. Timestamps are CLOCK_MONOTONIC (record with -k mono),
 * or with "tsc" TSC values (the arch-timestamp flag). x86-64 only. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

enum { kLoad = 0, kMove = 1, kDebugInfo = 2, kClose = 3 };

static int dump_fd = -1;
static int use_tsc = 0;

static uint64_t stamp(void) {
  if (use_tsc) {
    uint32_t lo, hi;
    __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
    return ((uint64_t)hi << 32) | lo;
  }
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void put(const void* p, size_t n) {
  if (write(dump_fd, p, n) != (ssize_t)n) {
    perror("jitgen: write");
    exit(1);
  }
}

static void prefix(uint32_t id, uint32_t size) {
  uint64_t t = stamp();
  put(&id, 4);
  put(&size, 4);
  put(&t, 8);
}

static void code_load(uint64_t addr, const char* name, uint64_t index, const uint8_t* code,
                      uint64_t size) {
  uint32_t ids[2] = {(uint32_t)getpid(), (uint32_t)syscall(SYS_gettid)};
  uint64_t fields[4] = {addr, addr, size, index};
  prefix(kLoad, (uint32_t)(16 + 8 + 32 + strlen(name) + 1 + size));
  put(ids, 8);
  put(fields, 32);
  put(name, strlen(name) + 1);
  put(code, size);
}

static void code_move(uint64_t from, uint64_t to, uint64_t size, uint64_t index) {
  uint32_t ids[2] = {(uint32_t)getpid(), (uint32_t)syscall(SYS_gettid)};
  uint64_t fields[5] = {to, from, to, size, index};
  prefix(kMove, 16 + 8 + 40);
  put(ids, 8);
  put(fields, 40);
}

/* Lines of jitsrc.js for the code at addr, addr+3 and addr+6. */
static void debug_info(uint64_t addr) {
  const char* file = "jitsrc.js";
  uint64_t head[2] = {addr, 3};
  prefix(kDebugInfo, (uint32_t)(16 + 16 + 3 * (16 + strlen(file) + 1)));
  put(head, 16);
  for (int i = 0; i < 3; ++i) {
    uint64_t at = addr + 3 * (uint64_t)i;
    int32_t line_discrim[2] = {10 + i, 0};
    put(&at, 8);
    put(line_discrim, 8);
    put(file, strlen(file) + 1);
  }
}

/* mov rax, rdi; 1: dec rax; jnz 1b; ret */
static const uint8_t spin_code[] = {0x48, 0x89, 0xf8, 0x48, 0xff, 0xc8, 0x75, 0xfb, 0xc3};

static void run(uint8_t* a, uint8_t* b, double seconds) {
  uint64_t (*fa)(uint64_t) = (uint64_t(*)(uint64_t))(void*)a;
  uint64_t (*fb)(uint64_t) = (uint64_t(*)(uint64_t))(void*)b;
  uint64_t end = now_ns() + (uint64_t)(seconds * 1e9);
  while (now_ns() < end) {
    fa(200000);
    fb(100000);
  }
}

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: jitgen DIR SECONDS\n");
    return 2;
  }
  double seconds = atof(argv[2]);
  use_tsc = argc > 3 && strcmp(argv[3], "tsc") == 0;
  char path[4096];
  snprintf(path, sizeof path, "%s/jit-%d.dump", argv[1], (int)getpid());
  dump_fd = open(path, O_CREAT | O_TRUNC | O_RDWR, 0644);
  if (dump_fd < 0) {
    perror(path);
    return 1;
  }
  struct {
    uint32_t magic, version, total_size, elf_mach, pad1, pid;
    uint64_t timestamp, flags;
  } header = {0x4A695444,       1, 40, 62 /* EM_X86_64 */, 0, (uint32_t)getpid(), stamp(),
              (uint64_t)use_tsc /* JITDUMP_FLAGS_ARCH_TIMESTAMP */};
  put(&header, sizeof header);
  long page = sysconf(_SC_PAGESIZE);
  void* marker = mmap(NULL, (size_t)page, PROT_READ | PROT_EXEC, MAP_PRIVATE, dump_fd, 0);
  if (marker == MAP_FAILED) {
    perror("jitgen: mmap of the dump");
    return 1;
  }
  uint8_t* code = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE | PROT_EXEC,
                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (code == MAP_FAILED) {
    perror("jitgen: mmap");
    return 1;
  }
  uint8_t *spin = code, *count = code + 0x40, *moved = code + 0x80;
  memcpy(spin, spin_code, sizeof spin_code);
  memcpy(count, spin_code, sizeof spin_code);
  code_load((uint64_t)(uintptr_t)spin, "jit_spin", 1, spin, sizeof spin_code);
  debug_info((uint64_t)(uintptr_t)count);
  code_load((uint64_t)(uintptr_t)count, "jit_count", 2, count, sizeof spin_code);
  run(spin, count, seconds / 2);
  memcpy(moved, spin, sizeof spin_code);
  code_move((uint64_t)(uintptr_t)spin, (uint64_t)(uintptr_t)moved, sizeof spin_code, 1);
  run(moved, count, seconds / 2);
  prefix(kClose, 16);
  munmap(marker, (size_t)page);
  close(dump_fd);
  return 0;
}
