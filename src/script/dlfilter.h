// DlFilter: perf script's --dlfilter, a shared object that sees each sample
// and keeps it or filters it out (perf-dlfilter(1)). perfkit implements the
// C ABI those objects are built against (perf/perf_dlfilter.h, version 0):
// the optional start, stop, filter_event, filter_event_early and
// filter_description functions, and the perf_dlfilter_fns table it fills in
// (resolve_ip, resolve_addr, args, resolve_address, insn, srcline, attr,
// object_code), so that filters built for perf run unchanged.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "base/error.h"
#include "machine/machine.h"
#include "session/session.h"

namespace perfkit::script {

// What a filter needs of perfkit while it runs: resolving addresses in the
// sample's thread, reading code, source lines.
class DlFilterHost {
 public:
  virtual ~DlFilterHost() = default;
  virtual machine::Machine& machine() = 0;
  virtual const abi::EventAttr& attr(std::size_t event) const = 0;
  virtual const std::string& event_name(std::size_t event) = 0;
  // Copies `n` bytes of code at `loc`: `n`, or 0 when they cannot be read.
  virtual std::size_t read_code(const machine::Location& loc, std::uint8_t* buf, std::size_t n) = 0;
  // The instruction at `loc` (perf's script_fetch_insn): its length, 0 if unknown.
  virtual unsigned fetch_insn(const machine::Location& loc, std::uint8_t (&code)[16]) = 0;
  // The source file and line of `loc` ("" when unknown).
  virtual std::pair<std::string, unsigned> srcline(const machine::Location& loc) = 0;
};

class DlFilter {
 public:
  // Finds `name` as perf does (a path; else the current directory, perf's
  // dlfilters directories, the dynamic linker's paths), loads it and calls
  // its start(). Errors: not found or not loadable (dlerror), start's
  // negative return.
  static Expected<std::unique_ptr<DlFilter>> load(const std::string& name,
                                                  std::vector<std::string> args,
                                                  DlFilterHost& host);
  ~DlFilter();
  DlFilter(const DlFilter&) = delete;
  DlFilter& operator=(const DlFilter&) = delete;

  // Whether the filter drops `s`: filter_event_early (`early`, before
  // perf's other output checks) or filter_event. Errors: a negative return.
  Expected<bool> drops(const session::ResolvedSample& s, bool early);
  // Calls stop() (once). Errors: its negative return.
  Status stop();

  // perf script --list-dlfilters: "List of available dlfilters:" and each
  // filter of the dlfilters directories with its description.
  static std::string list();

  struct Impl;

 private:
  DlFilter() = default;
  std::unique_ptr<Impl> impl_;
};

}  // namespace perfkit::script
