#include "cli/perfconfig.h"

#include <fmt/format.h>

#include <cstdlib>

namespace perfkit::cli {

namespace {

const char* env(const char* name) {
  const char* v = std::getenv(name);
  return v && *v ? v : nullptr;
}

// Calls `fn(key, value)` for each variable in the files' order.
template <class Fn>
void each(const config::ConfigSet& set, Fn&& fn) {
  for (const config::Section& s : set.sections())
    for (const config::Item& i : s.items) fn(s.name + "." + i.name, i.value);
}

// strtod of the whole leading number, as perf reads its thresholds;
// nullopt when no number starts the value.
std::optional<double> leading_double(const std::string& v) {
  char* end = nullptr;
  const double d = std::strtod(v.c_str(), &end);
  if (end == v.c_str()) return std::nullopt;
  return d;
}

// record's call-graph modes as perf's parse_callchain_record_opt reads a
// config value, with its messages.
bool check_record_mode(const std::string& v) {
  auto cg = capture::parse_call_graph(v);
  if (cg) return true;
  const std::string_view mode = std::string_view(v).substr(0, v.find(','));
  if (mode == "dwarf")
    fmt::print(stderr, "callchain: Incorrect stack dump size (max 65528): {}\n",
               v.substr(v.find(',') + 1));
  else if (mode == "lbr")
    fmt::print(stderr, "callchain: No more arguments needed for --call-graph lbr\n");
  else if (mode != "fp")
    fmt::print(stderr, "callchain: Unknown --call-graph option value: {}\n", v);
  return mode == "fp";  // perf takes "fp,N" (N: a frame limit)
}

// A dump size as perf's get_stack_size reads it: a number (any base)
// up to 65528, rounded up to 8 bytes.
std::optional<std::uint32_t> dump_size(const std::string& v) {
  char* end = nullptr;
  const unsigned long long n = std::strtoull(v.c_str(), &end, 0);
  if (end == v.c_str() || *end) return std::nullopt;
  const unsigned long long size = (n + 7) & ~7ull;
  if (size == 0 || size > 65528) return std::nullopt;
  return static_cast<std::uint32_t>(size);
}

// One call-graph.* variable: false (after perf's message) when bad.
bool check_call_graph(const std::string& name, const std::string& v) {
  if (name == "record-mode") return check_record_mode(v);
  if (name == "dump-size") {
    if (dump_size(v)) return true;
    fmt::print(stderr, "callchain: Incorrect stack dump size (max 65528): {}\n", v);
    return false;
  }
  if (name == "print-type") {
    if (v == "graph" || v == "flat" || v == "fractal" || v == "folded") return true;
    fmt::print(stderr, "Invalid callchain mode: {}\n", v);
    return false;
  }
  if (name == "order") {
    if (v == "caller" || v == "callee") return true;
    fmt::print(stderr, "Invalid callchain order: {}\n", v);
    return false;
  }
  if (name == "sort-key") {
    // (perf's words match as prefixes)
    for (std::string_view w : {"function", "address", "srcline", "branch"})
      if (!v.empty() && w.starts_with(v)) return true;
    fmt::print(stderr, "Invalid callchain sort key: {}\n", v);
    return false;
  }
  if (name == "threshold" && !leading_double(v)) {
    fmt::print(stderr, "Invalid callchain threshold: {}\n", v);
    return false;
  }
  if (name == "print-limit" && !leading_double(v)) {
    fmt::print(stderr, "Invalid callchain print limit: {}\n", v);
    return false;
  }
  return true;
}

bool check_one(const std::string& key, const std::string& v) {
  if (key.starts_with("call-graph.")) return check_call_graph(key.substr(11), v);
  if (key == "hist.percentage") return v == "relative" || v == "absolute";
  if (key == "ui.show-headers" || key == "stat.big-num") {
    if (!config::parse_bool(v)) fmt::print(stderr, "bad config value for '{}', ignoring...\n", key);
    return true;
  }
  if (key == "buildid.dir") {
    ::setenv("PERF_BUILDID_DIR", v.c_str(), 1);
    return true;
  }
  return true;
}

}  // namespace

config::Files config_files() {
  config::Files f;
  if (const char* p = env("PERF_CONFIG")) f.exclusive = p;
  if (const char* home = env("HOME")) f.user = std::string(home) + "/.perfconfig";
  f.read_system = !env("PERF_CONFIG_NOSYSTEM");
  f.read_user = !env("PERF_CONFIG_NOGLOBAL");
  return f;
}

config::ConfigSet read_config(bool warn) {
  std::vector<std::string> warnings;
  config::ConfigSet set = config::load(config_files(), warnings);
  if (warn)
    for (const std::string& w : warnings) fmt::print(stderr, "{}\n", w);
  return set;
}

bool check_config(const config::ConfigSet& set) {
  bool good = true;
  each(set, [&](const std::string& key, const std::string& v) {
    if (!good || check_one(key, v)) return;
    fmt::print(stderr, "Error in the given config file: wrong config key-value pair {}={}\n", key,
               v);
    good = false;
  });
  return good;
}

std::optional<bool> config_bool(const config::ConfigSet& set, std::string_view key) {
  const std::string* v = set.get(key);
  if (!v) return std::nullopt;
  std::optional<bool> b = config::parse_bool(*v);
  if (!b) {
    fmt::print(stderr, "bad config value for '{}', ignoring...\n", key);
    return false;
  }
  return b;
}

void apply_report_config(const config::ConfigSet& set, report::ReportOptions& opts,
                         std::string& sort_order) {
  each(set, [&](const std::string& key, const std::string& v) {
    if (key == "report.children") {
      opts.children = config_bool(set, key).value_or(false) ? -1 : 0;
    } else if (key == "report.group") {
      opts.group = config_bool(set, key).value_or(false) ? 1 : 0;
    } else if (key == "report.percent-limit") {
      opts.percent_limit = opts.chain_min_percent = std::strtof(v.c_str(), nullptr);
    } else if (key == "report.sort_order") {
      sort_order = v;
    } else if (key == "hist.percentage") {
      opts.relative = v == "relative";
    } else if (key == "call-graph.print-type") {
      (void)report::parse_callchain_arg(v, opts);
      opts.chain_mode_given = false;
    } else if (key == "call-graph.sort-key") {
      // (one of -g's key words: function, address, srcline)
      const bool given = opts.chain_mode_given;
      (void)report::parse_callchain_arg(v, opts);
      opts.chain_mode_given = given;
    } else if (key == "call-graph.order") {
      opts.caller_order = v == "caller";
      opts.order_given = true;
    } else if (key == "call-graph.threshold") {
      opts.chain_min_percent = leading_double(v).value_or(opts.chain_min_percent);
    } else if (key == "call-graph.print-limit") {
      opts.chain_print_limit = static_cast<std::uint32_t>(leading_double(v).value_or(0));
    }
  });
}

RecordConfig record_config(const config::ConfigSet& set) {
  RecordConfig rc;
  std::optional<std::uint32_t> size;
  each(set, [&](const std::string& key, const std::string& v) {
    if (key == "call-graph.record-mode" || key == "record.call-graph") {
      auto cg = capture::parse_call_graph(v);
      if (cg)
        rc.call_graph = *cg;
      else if (v.starts_with("fp"))
        rc.call_graph = capture::CallGraphOptions{capture::CallGraphMode::kFp};
      size.reset();
    } else if (key == "call-graph.dump-size") {
      size = dump_size(v);
    } else if (key == "record.build-id") {
      rc.build_id = v;
    }
  });
  if (rc.call_graph && size) rc.call_graph->dump_size = *size;
  if (rc.call_graph) rc.call_graph->dwarf_data_addresses = false;
  return rc;
}

bool pager_allowed(const config::ConfigSet& set, std::string_view command) {
  return config_bool(set, fmt::format("pager.{}", command)).value_or(true);
}

}  // namespace perfkit::cli
