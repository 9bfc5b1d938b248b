/* memfdcode: runs a loop of machine code it wrote into a memfd and mapped
 * executable, the way JIT runtimes double-map their code: samples land in
 * a DSO named "/memfd:memfdcode (deleted)" that has no symbols. The first
 * argument scales the run time (about 1 ms per unit, default 50). x86-64. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

int main(int argc, char** argv) {
  uint64_t ms = argc > 1 ? strtoull(argv[1], NULL, 10) : 50;
  /* loop: sub $1,%rdi; jnz loop; ret */
  static const uint8_t code[] = {0x48, 0x83, 0xef, 0x01, 0x75, 0xfa, 0xc3};
  int fd = memfd_create("memfdcode", 0);
  if (fd < 0 || write(fd, code, sizeof code) != (ssize_t)sizeof code) {
    perror("memfdcode: memfd");
    return 1;
  }
  void* p = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
  if (p == MAP_FAILED) {
    perror("memfdcode: mmap");
    return 1;
  }
  close(fd);
  void (*loop)(uint64_t) = (void (*)(uint64_t))p;
  for (uint64_t i = 0; i < ms; ++i) loop(4000000);
  return 0;
}
