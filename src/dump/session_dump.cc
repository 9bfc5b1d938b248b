#include "dump/session_dump.h"

#include <unordered_map>

#include "abi/perf_event.h"

namespace perfkit::dump {

void print_sample_resolution(const session::ResolvedSample& s, FdWriter& out) {
  const machine::Thread& t = *s.thread;
  out.print(" ... thread: {}:{}\n", t.comm ? *t.comm : std::string(), t.tid);
  std::string_view dso = s.loc.map && s.loc.map->dso ? std::string_view(s.loc.map->dso->long_name)
                         : s.loc.level == machine::kLevelHyper ? "[hypervisor]"
                                                               : "<not found>";
  out.print(" ...... dso: {}\n", dso);
}

namespace {

class DumpVisitor : public session::SampleVisitor {
 public:
  DumpVisitor(const perfdata::Reader& reader, const RecordPrinterOptions& opts, FdWriter& out)
      : printer_(reader, opts), reader_(reader), out_(out), diff_tool_(opts.diff_tool) {}

  Status on_delivery(const perfdata::ReadRecord& rec) override {
    return printer_.deliver(rec, out_);
  }
  // perf's machine__resolve: the sample's thread, then the map of its ip
  // (the kernel's for kernel samples, the thread's for user ones).
  Status on_sample(const session::ResolvedSample& s) override {
    if (diff_tool_ && (s.sample->sample_type & abi::kSampleRead)) return resolve_each_value(s);
    print_sample_resolution(s, out_);
    return ok();
  }
  void finish() {
    if (!diff_tool_) printer_.print_stats(out_);
  }

 private:
  // perf diff's tool takes a sample that reads counters once per value of
  // a known id that changed since its last one (perf's
  // deliver_sample_value), resolving it each time.
  Status resolve_each_value(const session::ResolvedSample& s) {
    const record::ReadValues& read = s.sample->read;
    for (std::uint64_t i = 0; i < read.nr; ++i) {
      const record::ReadValues::Value v = read.at(i);
      if (reader_.events().index_of_id(v.id) < 0) continue;
      std::uint64_t& last = last_value_[v.id];
      const std::uint64_t delta = v.value - last;
      last = v.value;
      if (delta) print_sample_resolution(s, out_);
    }
    return ok();
  }

  RecordPrinter printer_;
  const perfdata::Reader& reader_;
  FdWriter& out_;
  bool diff_tool_;
  std::unordered_map<std::uint64_t, std::uint64_t> last_value_;  // by sample id
};

}  // namespace

Status run_report_dump(session::Session& session, const RecordPrinterOptions& opts, FdWriter& out) {
  const perfdata::Reader& reader = session.reader();
  DumpVisitor v(reader, opts, out);
  out.write(RecordPrinter::ordering_warning(reader));
  session.set_callchains(false, false, 0);
  session.set_unordered(opts.unordered || !RecordPrinter::perf_orders(reader));
  PK_TRY(session.run(v));
  v.finish();
  return out.flush();
}

}  // namespace perfkit::dump
