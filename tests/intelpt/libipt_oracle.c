/* The libipt oracle: decodes a raw Intel PT trace with libipt's instruction
 * flow decoder (pt_insn_*) and prints the IP of every instruction, one per
 * line in hex, so that the tests can diff it against perfkit's decoder.
 * Decode errors go to stderr as "error <offset> <message>"; the decoder then
 * resyncs at the next PSB, as ptxed does.
 *
 *   libipt_oracle TRACE FILE:OFFSET:SIZE:VADDR...     (numbers in hex)
 *   libipt_oracle --count TRACE ...                  (only count instructions)
 *
 * This is a test tool built against libipt-dev; it is not part of perfkit. */
#include <intel-pt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint8_t* read_all(const char* path, size_t* size) {
  FILE* f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  uint8_t* buf = malloc(n > 0 ? (size_t)n : 1);
  if (n > 0 && fread(buf, 1, (size_t)n, f) != (size_t)n) {
    fclose(f);
    free(buf);
    return NULL;
  }
  fclose(f);
  *size = (size_t)n;
  return buf;
}

static int add_image(struct pt_image* image, char* spec) {
  char* parts[4];
  for (int i = 3; i > 0; --i) {
    char* colon = strrchr(spec, ':');
    if (!colon) return -1;
    *colon = 0;
    parts[i] = colon + 1;
  }
  parts[0] = spec;
  uint64_t offset = strtoull(parts[1], NULL, 16);
  uint64_t size = strtoull(parts[2], NULL, 16);
  uint64_t vaddr = strtoull(parts[3], NULL, 16);
  return pt_image_add_file(image, parts[0], offset, size, NULL, vaddr);
}

int main(int argc, char** argv) {
  int count_only = 0;
  int a = 1;
  if (a < argc && !strcmp(argv[a], "--count")) {
    count_only = 1;
    ++a;
  }
  if (a >= argc) {
    fprintf(stderr, "usage: libipt_oracle [--count] TRACE FILE:OFFSET:SIZE:VADDR...\n");
    return 2;
  }
  size_t size = 0;
  uint8_t* trace = read_all(argv[a], &size);
  if (!trace) {
    fprintf(stderr, "cannot read %s\n", argv[a]);
    return 2;
  }
  struct pt_config config;
  pt_config_init(&config);
  config.begin = trace;
  config.end = trace + size;
  config.cpu.vendor = pcv_intel;
  config.cpu.family = 6;
  config.cpu.model = 85;
  config.cpu.stepping = 4;
  pt_cpu_errata(&config.errata, &config.cpu);
  struct pt_insn_decoder* dec = pt_insn_alloc_decoder(&config);
  if (!dec) return 2;
  struct pt_image* image = pt_insn_get_image(dec);
  for (int i = a + 1; i < argc; ++i) {
    int err = add_image(image, argv[i]);
    if (err < 0) fprintf(stderr, "image %s: %s\n", argv[i], pt_errstr(pt_errcode(err)));
  }
  unsigned long long insns = 0;
  for (;;) {
    int status = pt_insn_sync_forward(dec);
    if (status < 0) break;
    for (;;) {
      while (status & pts_event_pending) {
        struct pt_event ev;
        status = pt_insn_event(dec, &ev, sizeof(ev));
        if (status < 0) break;
      }
      if (status < 0 || (status & pts_eos)) break;
      struct pt_insn insn;
      status = pt_insn_next(dec, &insn, sizeof(insn));
      if (status < 0) break;
      ++insns;
      if (!count_only) printf("%llx\n", (unsigned long long)insn.ip);
    }
    if (status < 0 && status != -pte_eos) {
      uint64_t offset = 0;
      pt_insn_get_offset(dec, &offset);
      fprintf(stderr, "error %llx %s\n", (unsigned long long)offset, pt_errstr(pt_errcode(status)));
    }
  }
  if (count_only) printf("%llu\n", insns);
  pt_insn_free_decoder(dec);
  free(trace);
  return 0;
}
