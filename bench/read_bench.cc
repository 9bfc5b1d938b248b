// read_bench FILE [REPEAT]: reads every record of FILE and fully decodes each
// sample (and the sample_id trailer of the rest), in file order, on one core.
// Prints the median time, MB/s and records/s as "key=value" words.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <vector>

#include "perfdata/reader.h"
#include "record/sample.h"

using namespace perfkit;

namespace {

struct Pass {
  double seconds = 0;
  std::uint64_t records = 0;
  std::uint64_t samples = 0;
  std::uint64_t checksum = 0;
};

Expected<Pass> one_pass(const std::string& path) {
  auto start = std::chrono::steady_clock::now();
  PK_ASSIGN(auto reader, perfdata::Reader::open(path));
  Pass p;
  perfdata::ReadRecord rec;
  record::Sample s;
  const auto& events = reader->events();
  for (;;) {
    PK_ASSIGN(bool got, reader->next(rec));
    if (!got) break;
    ++p.records;
    int idx = events.attr_index(rec.view);
    if (idx < 0) continue;
    const auto& layout = events[static_cast<std::size_t>(idx)].layout;
    if (rec.view.type == abi::kRecordSample) {
      PK_TRY(record::decode_sample(rec.view, layout, s));
      ++p.samples;
      p.checksum += s.ip + s.time + s.callchain.size();
    } else if (rec.view.type < abi::kRecordUserTypeStart) {
      p.checksum += record::decode_sample_id(rec.view, layout).time;
    }
  }
  p.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return p;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    fmt::print(stderr, "usage: read_bench FILE [REPEAT]\n");
    return 2;
  }
  int repeat = argc > 2 ? std::atoi(argv[2]) : 5;
  std::vector<double> times;
  Pass last;
  for (int i = 0; i < repeat; ++i) {
    auto p = one_pass(argv[1]);
    if (!p) {
      fmt::print(stderr, "read_bench: {}\n", p.error().message());
      return 1;
    }
    times.push_back(p->seconds);
    last = *p;
  }
  std::sort(times.begin(), times.end());
  double med = times[times.size() / 2];
  auto file = MappedFile::open(argv[1]);
  double mb = file ? static_cast<double>(file->size()) / 1e6 : 0;
  fmt::print(
      "seconds={:.4f} MB={:.1f} MB/s={:.0f} records={} samples={} records/s={:.0f} checksum={}\n",
      med, mb, mb / med, last.records, last.samples, static_cast<double>(last.records) / med,
      last.checksum);
  return 0;
}
