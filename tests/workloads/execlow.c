// execlow FILE PROGRAM [ARG...]: maps FILE (read-only) at a low address,
// then execs PROGRAM. The kernel drops the mapping at exec, but perf keeps
// every map a process ever had until another overlaps it: when FILE is a
// library PROGRAM loads (libc), perf then has two maps of it, the old one
// lowest, and its DWARF unwinder (libunwind, which looks for the tables at
// the lowest map of the DSO) goes wrong in that library. The tests compare
// perfkit's unwinding of such a process with perf's.
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: execlow FILE PROGRAM [ARG...]\n");
    return 2;
  }
  int fd = open(argv[1], O_RDONLY);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0) {
    perror(argv[1]);
    return 1;
  }
  void* low = (void*)0x10000000;
  if (mmap(low, (size_t)st.st_size, PROT_READ, MAP_PRIVATE | MAP_FIXED_NOREPLACE, fd, 0) != low) {
    perror("mmap");
    return 1;
  }
  close(fd);
  execv(argv[2], argv + 2);
  perror(argv[2]);
  return 1;
}
