// perf's configuration files as the commands read them: which files
// (from the environment), perf's checks of the variables every command
// reads (its perf_default_config), and each command's own variables
// turned into defaults that its options then override.
#pragma once

#include <optional>
#include <string>

#include "capture/record_options.h"
#include "config/config.h"
#include "report/report.h"

namespace perfkit::cli {

// $PERF_CONFIG alone when set, else /etc/perfconfig (not with
// $PERF_CONFIG_NOSYSTEM) and $HOME/.perfconfig (not with
// $PERF_CONFIG_NOGLOBAL).
config::Files config_files();

// The configuration. With `warn`, what perf says of the files (a bad
// line, a file of another owner) goes to stderr.
config::ConfigSet read_config(bool warn);

// perf's start-up pass over the variables every command reads (core.,
// hist., ui., call-graph., buildid., stat.): a bad value is perf's
// "Error in the given config file: wrong config key-value pair K=V"
// after the variable's own message, and the command does not run (false).
// buildid.dir sets $PERF_BUILDID_DIR. A bad boolean warns and reads false.
bool check_config(const config::ConfigSet& set);

// A boolean variable (perf's perf_config_bool), warning of a bad value.
std::optional<bool> config_bool(const config::ConfigSet& set, std::string_view key);

// report's defaults: report.children, report.group, report.percent-limit,
// report.sort_order (`sort_order`), hist.percentage and call-graph.*
// (print-type, order, threshold, print-limit), in the files' order.
void apply_report_config(const config::ConfigSet& set, report::ReportOptions& opts,
                         std::string& sort_order);

// record's -g: call-graph.record-mode (or record.call-graph) and
// call-graph.dump-size; record.build-id. nullopt when nothing is set.
struct RecordConfig {
  std::optional<capture::CallGraphOptions> call_graph;
  std::string build_id;  // cache, no-cache, skip or mmap
};
RecordConfig record_config(const config::ConfigSet& set);

// pager.CMD: whether the command's output may go through the pager.
bool pager_allowed(const config::ConfigSet& set, std::string_view command);

}  // namespace perfkit::cli
