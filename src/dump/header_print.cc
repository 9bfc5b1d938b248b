#include "dump/header_print.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <ctime>
#include <set>

#include "abi/names.h"
#include "dump/header_print_features.h"

namespace perfkit::dump {

using namespace perfkit::abi;
using perfdata::FeatureBlob;
using perfdata::Features;

namespace {

// The last feature perf 6.1 knows: it neither prints nor lists later ids.
constexpr std::uint32_t kPerfLastFeature = kFeatPmuCaps + 1;

std::string captured_on(const perfdata::Reader& reader, const HeaderPrintOptions& opts) {
  std::time_t t = 0;
  if (opts.captured_on) {
    t = static_cast<std::time_t>(*opts.captured_on);
  } else {
    struct stat st {};
    int rc = reader.name() == "<stdin>" ? ::fstat(STDIN_FILENO, &st)
                                        : ::stat(reader.header_path().c_str(), &st);
    if (rc == 0) t = st.st_mtime;
  }
  char buf[64];
  if (!::ctime_r(&t, buf)) return "?\n";
  return buf;
}

void print_banner(const perfdata::Reader& reader, const HeaderPrintOptions& opts, FdWriter& out) {
  const auto& h = reader.header();
  const bool pipe = reader.is_pipe();
  out.print("# ========\n");
  out.print("# captured on    : {}", captured_on(reader, opts));
  out.print("# header version : {}\n", h.version);
  out.print("# data offset    : {}\n", pipe ? 0 : h.data.offset);
  out.print("# data size      : {}\n", pipe ? 0 : h.data.size);
  out.print("# feat offset    : {}\n", pipe ? 0 : h.feature_offset());
}

// Parses one section into `f`; a section that does not parse leaves its
// feature as the printer's "could not read" state, as perf's does.
void absorb(const FeatureBlob& blob, bool swap, const HeaderPrintOptions& opts, Features& f,
            std::set<std::uint32_t>& failed) {
  auto st = perfdata::parse_feature(blob.id, blob.data, swap, blob.offset, f);
  if (st) {
    failed.erase(blob.id);
    return;
  }
  failed.insert(blob.id);
  if (opts.warn) opts.warn(st.error().message());
}

// perf processes the sections in file order and stops at the first it cannot
// process: the later ones print as if absent, but for EVENT_DESC, which perf
// reads again to print. A single file's DIR_FORMAT is such a stop (perf reads
// it only for a perf.data directory); EVENT_DESC never is (perf ignores its
// errors).
//
// Unlike perf, which reads a section from the file descriptor without regard
// to its size (a truncated NRCPUS takes the next section's bytes), perfkit
// reads only the section: a section too short for its content is an error.
void process_like_perf(const perfdata::Reader& reader, const HeaderPrintOptions& opts, Features& f,
                       std::set<std::uint32_t>& failed) {
  bool stopped = false;
  for (const auto& blob : reader.features()) {
    if (blob.id == 0 || blob.id >= kPerfLastFeature) continue;
    // Not printed: perf's checks of trace formats and build-ids are not copied.
    if (blob.id == kFeatTracingData || blob.id == kFeatBuildId) continue;
    if (stopped && blob.id != kFeatEventDesc) continue;
    if (blob.id == kFeatDirFormat && !reader.is_dir()) {
      stopped = true;
      continue;
    }
    absorb(blob, reader.swapped(), opts, f, failed);
    bool ignored = blob.id == kFeatEventDesc;
    if (failed.count(blob.id) && !ignored) stopped = true;
  }
}

Status print_file_mode(const perfdata::Reader& reader, const HeaderPrintOptions& opts,
                       FdWriter& out) {
  Features f;
  std::set<std::uint32_t> failed;
  process_like_perf(reader, opts, f, failed);
  FeaturePrinter p{reader.events(), f, failed, opts.full, reader.swapped()};
  print_banner(reader, opts, out);
  for (const auto& blob : reader.features())
    if (blob.id > 0 && blob.id < kPerfLastFeature) p.print(blob, out);
  out.print("# missing features: ");
  for (std::uint32_t id = 1; id < kPerfLastFeature; ++id)
    if (!reader.header().has_feature(id)) out.print("{} ", feature_name(id));
  out.print("\n# ========\n#\n");
  return out.status();
}

}  // namespace

void print_pipe_feature(const perfdata::Reader& reader, const FeatureBlob& blob,
                        const HeaderPrintOptions& opts, Features& seen, FdWriter& out) {
  if (blob.id == 0 || blob.id >= kPerfLastFeature) return;
  std::set<std::uint32_t> failed;
  absorb(blob, reader.swapped(), opts, seen, failed);
  // perf stops at a feature record it cannot process, printing nothing of it.
  if (!failed.empty()) return;
  FeaturePrinter p{reader.events(), seen, failed, opts.full, reader.swapped()};
  p.print(blob, out);
}

Status print_header_info(const perfdata::Reader& reader, const HeaderPrintOptions& opts,
                         FdWriter& out) {
  if (!reader.is_pipe()) return print_file_mode(reader, opts, out);
  print_banner(reader, opts, out);
  out.print("# ========\n#\n");
  const perfdata::Reader* source = &reader;
  std::unique_ptr<perfdata::Reader> scan;
  if (reader.features().empty() && !reader.file_bytes().empty()) {
    // Nothing read yet from a mapped stream: read it through once, as perf
    // does for --header-only, with a reader of its own.
    PK_ASSIGN(scan, perfdata::Reader::open_memory(reader.file_bytes(), reader.name()));
    perfdata::ReadRecord rec;
    for (;;) {
      auto got = scan->next(rec);
      if (!got || !*got) break;  // perf prints the features read before an error
    }
    source = scan.get();
  }
  Features seen;
  for (const auto& blob : source->features()) print_pipe_feature(*source, blob, opts, seen, out);
  return out.status();
}

Status print_header_only(perfdata::Reader& reader, const HeaderPrintOptions& opts, FdWriter& out) {
  if (reader.is_pipe() && reader.features().empty() && reader.file_bytes().empty()) {
    perfdata::ReadRecord rec;
    for (;;) {
      auto got = reader.next(rec);
      if (!got) {
        if (opts.warn) opts.warn(got.error().message());
        break;  // perf prints the features read before a bad record
      }
      if (!*got) break;
    }
  }
  return print_header_info(reader, opts, out);
}

std::string normalize_cpu_list(std::string_view list) {
  // perf_cpu_map__new: numbers and ranges separated by commas; it stops at
  // anything else. An empty list is a map holding only cpu -1.
  std::vector<long> cpus;
  std::size_t i = 0;
  auto number = [&](long& v) {
    if (i >= list.size() || list[i] < '0' || list[i] > '9') return false;
    v = 0;
    while (i < list.size() && list[i] >= '0' && list[i] <= '9') {
      v = v * 10 + (list[i++] - '0');
      if (v >= 0x7fffffff) return false;  // perf rejects cpus from INT_MAX on
    }
    return true;
  };
  for (;;) {
    long a = 0, b = 0;
    if (!number(a)) break;
    b = a;
    if (i < list.size() && list[i] == '-') {
      ++i;
      if (!number(b) || b < a) break;
    }
    for (long c = a; c <= b && cpus.size() < 65536; ++c) cpus.push_back(c);
    if (i < list.size() && list[i] == ',') {
      ++i;
      continue;
    }
    break;
  }
  if (cpus.empty()) return "-1";
  std::sort(cpus.begin(), cpus.end());
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  std::string out;
  for (std::size_t k = 0; k < cpus.size();) {
    std::size_t end = k;
    while (end + 1 < cpus.size() && cpus[end + 1] == cpus[end] + 1) ++end;
    if (!out.empty()) out += ',';
    out += end == k ? fmt::format("{}", cpus[k]) : fmt::format("{}-{}", cpus[k], cpus[end]);
    k = end + 1;
  }
  return out;
}

}  // namespace perfkit::dump
