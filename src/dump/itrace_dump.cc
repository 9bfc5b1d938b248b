#include "dump/itrace_dump.h"

#include "abi/perf_event.h"
#include "intelpt/packet_dump.h"

namespace perfkit::dump {

AuxtraceDumper intel_pt_auxtrace_dumper() {
  return [](const AuxtraceDumpRequest& req, FdWriter& out) -> Status {
    if (req.auxtrace_type != abi::kAuxtraceIntelPt) return ok();
    out.write(std::string_view(".\n"));
    intelpt::dump_packets(req.data, out);
    return out.status();
  };
}

}  // namespace perfkit::dump
