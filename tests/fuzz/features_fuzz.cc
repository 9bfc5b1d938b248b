// libFuzzer target for the header feature sections: input byte 0 is the
// feature id, byte 1 bit 0 the byte order, the rest the section. A section
// that parses must encode and parse back to the same value, and print.
#include <fcntl.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "dump/header_print_features.h"
#include "perfdata/feature_bpf.h"
#include "perfdata/features.h"

using namespace perfkit;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  const std::uint32_t id = data[0];
  const bool swap = data[1] & 1;
  Bytes section(data + 2, size - 2);
  perfdata::Features f;
  f.nrcpus = perfdata::NrCpus{4, 4};  // CPU_TOPOLOGY reads this many per-cpu ids
  if (!perfdata::parse_feature(id, section, swap, 0, f)) return 0;
  auto bytes = perfdata::encode_feature(f, id, swap);
  if (!bytes) return 0;  // e.g. a build-id name too long to re-encode
  perfdata::Features back;
  back.nrcpus = f.nrcpus;
  if (!perfdata::parse_feature(id, *bytes, swap, 0, back)) std::abort();
  auto again = perfdata::encode_feature(back, id, swap);
  if (!again || *again != *bytes) std::abort();
  if (f.bpf_prog_info)
    for (const auto& p : *f.bpf_prog_info) (void)perfdata::summarize_bpf_prog(p, swap);
  static int devnull = ::open("/dev/null", O_WRONLY);
  FdWriter out(devnull, "/dev/null", false, 1 << 12);
  perfdata::EventSet events;
  std::set<std::uint32_t> failed;
  dump::FeaturePrinter printer{events, f, failed, true, swap};
  printer.print(perfdata::FeatureBlob{id, 0, section}, out);
  (void)out.flush();
  return 0;
}
