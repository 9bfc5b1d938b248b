#include "export/perf_json.h"

#include "abi/perf_event.h"
#include "export/json.h"
#include "machine/machine.h"
#include "perfdata/features.h"
#include "record/sample.h"

namespace perfkit::exports {

namespace {

// A new line at `depth` tabs, after a comma when `comma`.
void delimit(fmt::memory_buffer& b, bool comma, int depth) {
  if (comma) b.push_back(',');
  b.push_back('\n');
  for (int i = 0; i < depth; ++i) b.push_back('\t');
}

void key(fmt::memory_buffer& b, bool comma, int depth, std::string_view k) {
  delimit(b, comma, depth);
  json_string(b, k);
  b.append(std::string_view(": "));
}

void key_string(fmt::memory_buffer& b, bool comma, int depth, std::string_view k,
                std::string_view v) {
  key(b, comma, depth, k);
  json_string(b, v);
}

template <class T>
void key_number(fmt::memory_buffer& b, bool comma, int depth, std::string_view k, T v) {
  key(b, comma, depth, k);
  fmt::format_to(std::back_inserter(b), "{}", v);
}

void write_header(perfdata::Reader& r, const std::string& captured_on, fmt::memory_buffer& b) {
  const perfdata::FileHeader& h = r.header();
  perfdata::Features f;
  if (auto parsed = perfdata::parse_features(r.features(), r.swapped())) f = std::move(*parsed);
  key_number(b, false, 2, "header-version", h.version);
  if (!captured_on.empty()) key_string(b, true, 2, "captured-on", captured_on);
  key_number(b, true, 2, "data-offset", h.pipe ? 0 : h.data.offset);
  key_number(b, true, 2, "data-size", h.pipe ? 0 : h.data.size);
  key_number(b, true, 2, "feat-offset", h.pipe ? 0 : h.feature_offset());
  key_string(b, true, 2, "hostname", f.hostname.value_or(""));
  key_string(b, true, 2, "os-release", f.osrelease.value_or(""));
  key_string(b, true, 2, "arch", f.arch.value_or(""));
  key_string(b, true, 2, "cpu-desc", f.cpudesc.value_or(""));
  key_string(b, true, 2, "cpuid", f.cpuid.value_or(""));
  key_number(b, true, 2, "nrcpus-online", f.nrcpus ? f.nrcpus->online : 0);
  key_number(b, true, 2, "nrcpus-avail", f.nrcpus ? f.nrcpus->available : 0);
  if (f.clock_data) {
    key_number(b, true, 2, "clockid", f.clock_data->clockid);
    key_number(b, true, 2, "clock-time", f.clock_data->clockid_ns);
    key_number(b, true, 2, "real-time", f.clock_data->tod_ns);
  }
  key_string(b, true, 2, "perf-version", f.version.value_or(""));
  key(b, true, 2, "cmdline");
  b.push_back('[');
  const auto& args = f.cmdline ? *f.cmdline : std::vector<std::string>{};
  for (std::size_t i = 0; i < args.size(); ++i) {
    delimit(b, i != 0, 3);
    json_string(b, args[i]);
  }
  delimit(b, false, 2);
  b.push_back(']');
}

// The file's opening, its header block and the start of "samples".
void write_opening(perfdata::Reader& r, const std::string& captured_on, fmt::memory_buffer& b) {
  b.push_back('{');
  delimit(b, false, 1);
  b.append(std::string_view("\"linux-perf-json-version\": 1"));
  delimit(b, true, 1);
  b.append(std::string_view("\"headers\": {"));
  write_header(r, captured_on, b);
  delimit(b, false, 1);
  b.push_back('}');
  delimit(b, true, 1);
  b.append(std::string_view("\"samples\": ["));
}

class JsonWriter : public session::SampleVisitor {
 public:
  JsonWriter(session::Session& s, const std::string& captured_on, FdWriter& out)
      : session_(s), captured_on_(captured_on), out_(out), b_(out.buffer()) {
    // A file's header is known now; a stream's features come as records
    // ahead of its samples, so its header waits for the first sample.
    if (!s.reader().is_pipe()) open();
  }
  void open() {
    if (opened_) return;
    opened_ = true;
    write_opening(session_.reader(), captured_on_, b_);
  }

  Status on_sample(const session::ResolvedSample& s) override {
    open();
    const record::Sample& smp = *s.sample;
    if (samples_++) b_.push_back(',');
    delimit(b_, false, 2);
    b_.push_back('{');
    key_number(b_, false, 3, "timestamp", static_cast<std::int64_t>(smp.time));
    key_number(b_, true, 3, "pid", s.thread->pid);
    key_number(b_, true, 3, "tid", s.thread->tid);
    if (smp.sample_type & abi::kSampleCpu) key_number(b_, true, 3, "cpu", smp.cpu);
    key_string(b_, true, 3, "comm", s.comm ? std::string_view(*s.comm) : "");
    key(b_, true, 3, "callchain");
    b_.push_back('[');
    if (smp.sample_type & abi::kSampleCallchain)
      raw_chain(s);
    else
      entry(smp.ip, s.loc);
    delimit(b_, false, 3);
    b_.push_back(']');
    delimit(b_, false, 2);
    b_.push_back('}');
    out_.maybe_flush();
    return ok();
  }
  std::uint64_t samples() const { return samples_; }

 private:
  // Every address of the recorded chain, context markers aside (they set
  // the mode the next addresses resolve in, user at first).
  void raw_chain(const session::ResolvedSample& s) {
    std::uint8_t cpumode = abi::kMiscUser;
    bool first = true;
    machine::Machine& m = session_.machine();
    for (std::uint64_t i = 0; i < s.sample->callchain.size(); ++i) {
      const std::uint64_t ip = s.sample->callchain[i];
      if (ip >= abi::kContextMax) {
        if (ip == abi::kContextHv) cpumode = abi::kMiscHypervisor;
        if (ip == abi::kContextKernel) cpumode = abi::kMiscKernel;
        if (ip == abi::kContextUser) cpumode = abi::kMiscUser;
        continue;
      }
      if (!first) b_.push_back(',');
      first = false;
      entry(ip, m.resolve(*s.thread, cpumode, ip));
    }
  }
  void entry(std::uint64_t ip, const machine::Location& loc) {
    delimit(b_, false, 4);
    b_.push_back('{');
    key(b_, false, 5, "ip");
    fmt::format_to(std::back_inserter(b_), "\"0x{:x}\"", ip);
    if (loc.symbol >= 0) {
      const std::string_view name = session_.machine().symbol_name(loc);
      if (!name.empty()) {
        b_.push_back(',');
        key_string(b_, false, 5, "symbol", name);
        if (loc.map && loc.dso && !loc.dso->short_name.empty()) {
          b_.push_back(',');
          key_string(b_, false, 5, "dso", loc.dso->short_name);
        }
      }
    }
    delimit(b_, false, 4);
    b_.push_back('}');
  }

  session::Session& session_;
  const std::string& captured_on_;
  FdWriter& out_;
  fmt::memory_buffer& b_;
  std::uint64_t samples_ = 0;
  bool opened_ = false;
};

}  // namespace

Expected<PerfJsonStats> write_perf_json(session::Session& session, const std::string& captured_on,
                                        FdWriter& out) {
  auto& b = out.buffer();
  JsonWriter w(session, captured_on, out);
  PK_TRY(session.run(w));
  w.open();
  delimit(b, false, 1);
  b.push_back(']');
  delimit(b, false, 0);
  b.append(std::string_view("}\n"));
  PK_TRY(out.flush());
  return PerfJsonStats{w.samples(), out.offset()};
}

}  // namespace perfkit::exports
