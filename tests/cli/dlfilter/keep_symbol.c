/* A dlfilter for the tests (built against perf's own header, as any filter
 * is): keeps the samples whose ip resolves to the function given as its
 * first --dlarg ("spin" by default), and prints on stderr what the API told
 * it of the first samples, so that perf and perfkit can be compared. */
#include <perf/perf_dlfilter.h>
#include <stdio.h>
#include <string.h>
struct perf_dlfilter_fns perf_dlfilter_fns;
static const char *keep = "spin";
static long seen, kept;
int start(void **data, void *ctx) {
  int argc = 0;
  char **argv = perf_dlfilter_fns.args(ctx, &argc);
  if (argc > 0) keep = argv[0];
  fprintf(stderr, "start argc=%d\n", argc);
  return 0;
}
int filter_event(void *data, const struct perf_dlfilter_sample *s, void *ctx) {
  const struct perf_dlfilter_al *al = perf_dlfilter_fns.resolve_ip(ctx);
  struct perf_event_attr *a = perf_dlfilter_fns.attr(ctx);
  __u32 len = 0;
  const __u8 *insn = perf_dlfilter_fns.insn(ctx, &len);
  ++seen;
  if (seen <= 3)
    fprintf(stderr, "%u %d/%d cpu=%d t=%llu p=%llu ip=%llx %s sym=%s+%u [%llx,%llx) dso=%s k=%u comm=%s ev=%s type=%u cfg=%llu st=%llx cc=%llu insn=%u mode=%u\n",
            s->size, s->pid, s->tid, s->cpu, (unsigned long long)s->time, (unsigned long long)s->period,
            (unsigned long long)s->ip, al->dso ? al->dso : "-", al->sym ? al->sym : "-", al->symoff,
            (unsigned long long)al->sym_start, (unsigned long long)al->sym_end, al->dso ? "y" : "n", al->is_kernel_ip,
            al->comm, s->event, a->type, (unsigned long long)a->config, (unsigned long long)a->sample_type,
            (unsigned long long)s->raw_callchain_nr, len, s->cpumode);
  if (!al->sym || strcmp(al->sym, keep)) return 1;
  ++kept;
  return 0;
}
int stop(void *data, void *ctx) { fprintf(stderr, "stop seen=%ld kept=%ld\n", seen, kept); return 0; }
const char *filter_description(const char **l) { *l = "long"; return "keeps one function's samples"; }
