// TracepointFormatter: the trace event formats a recording carries
// (HEADER_TRACING_DATA: header page, ftrace and event format files, printk
// strings, saved cmdlines) parsed with libtraceevent, and tracepoint RAW
// payloads printed as perf script prints them (tep_print_event's INFO part,
// nanosecond flag, no plugins, kernel addresses named through a resolver).
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/bytes.h"
#include "base/error.h"

struct tep_handle;

namespace perfkit::session {

class Session;

// Names a kernel address for %pS-style fields: the symbol's name and start,
// and its module name or "" for the kernel proper; false when unknown.
using KernelSymbolResolver = std::function<bool(std::uint64_t addr, std::string& name,
                                                std::uint64_t& start, std::string& module)>;

class TracepointFormatter {
 public:
  ~TracepointFormatter();
  TracepointFormatter(const TracepointFormatter&) = delete;
  TracepointFormatter& operator=(const TracepointFormatter&) = delete;

  // Parses the tracing data. Errors: a bad magic or a section that runs past
  // the end (naming which); formats libtraceevent rejects are skipped, as
  // perf skips them, and reported through `warn`.
  static Expected<std::unique_ptr<TracepointFormatter>> create(
      Bytes tracing_data, const std::function<void(const std::string&)>& warn);

  void set_kernel_resolver(KernelSymbolResolver r);
  // Whether the event with this id (attr.config) has a format.
  bool knows(std::uint64_t id) const;
  // "sys:name" of the event, or "" when unknown.
  std::string event_name(std::uint64_t id) const;
  // The event's own fields (not the common_ ones), in the format's order;
  // empty when it has no format.
  std::vector<std::string> field_names(std::uint64_t id) const;
  // The number in field `name` of a payload of event `id` (perf's
  // evsel__intval); false when the event or field is unknown or the payload
  // too short for it.
  bool number_field(std::uint64_t id, const char* name, Bytes raw, std::uint64_t& value) const;
  // Appends the formatted payload of a sample of event `id` on `cpu`.
  // With `fields_only`, each field as " name=value" without the event's
  // print format (perf report --raw-trace).
  void format(std::uint64_t id, int cpu, Bytes raw, fmt::memory_buffer& out,
              bool fields_only = false);

 private:
  TracepointFormatter();
  static char* resolve(void* priv, unsigned long long* addr, char** mod);

  tep_handle* tep_ = nullptr;
  KernelSymbolResolver resolver_;
  std::string resolved_name_, resolved_module_;
};

// The formatter for the tracing data `session`'s reader holds now, naming
// kernel addresses through its machine; nullptr without tracing data or
// when it does not parse (said through `warn`).
std::unique_ptr<TracepointFormatter> session_tracepoint_formatter(
    Session& session, const std::function<void(const std::string&)>& warn);

}  // namespace perfkit::session
