#include "dump/session_dump.h"

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
      : printer_(reader, opts), out_(out) {}

  Status on_delivery(const perfdata::ReadRecord& rec) override {
    return printer_.deliver(rec, out_);
  }
  // perf's machine__resolve: the sample's thread, then the map of its ip
  // (the kernel's for kernel samples, the thread's for user ones).
  Status on_sample(const session::ResolvedSample& s) override {
    print_sample_resolution(s, out_);
    return ok();
  }
  void finish() { printer_.print_stats(out_); }

 private:
  RecordPrinter printer_;
  FdWriter& out_;
};

}  // namespace

Status run_report_dump(session::Session& session, const RecordPrinterOptions& opts, FdWriter& out) {
  const perfdata::Reader& reader = session.reader();
  DumpVisitor v(reader, opts, out);
  out.write(RecordPrinter::ordering_warning(reader));
  session.set_callchains(false, false, 0);
  session.set_unordered(!RecordPrinter::perf_orders(reader));
  PK_TRY(session.run(v));
  v.finish();
  return out.flush();
}

}  // namespace perfkit::dump
