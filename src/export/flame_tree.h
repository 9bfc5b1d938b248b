// FlameTree: the samples of a profile merged by call path into one tree of
// function names, root "all", then one node per process (or thread), then
// the frames root first: what flame graphs draw. Children keep the order
// they were first met in the recording (perf's flamegraph.py) and each node
// its own (self) weight and its total.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/flat_map.h"
#include "profile/profile.h"

namespace perfkit::exports {

enum class FlameKind : std::uint8_t { kRoot, kProcess, kUser, kKernel };

struct FlameNode {
  profile::Index name = 0;  // in FlameTree::names
  FlameKind kind = FlameKind::kUser;
  profile::Index dso = profile::kNone;  // the frame's lib (profile id), kNone if none
  profile::Index parent = profile::kNone, first_child = profile::kNone, last_child = profile::kNone,
                 next = profile::kNone;
  std::uint64_t self = 0, total = 0;
};

struct FlameTreeOptions {
  // The events whose samples go in; empty: every event but tracepoints
  // (perf's Python scripts see no tracepoint samples without a handler).
  std::vector<std::size_t> events;
  bool weight_period = false;  // else each sample weighs 1
  // The process level: perf's flamegraph.py ("comm (pid)", "comm" for pid
  // 0) or FlameGraph's stackcollapse-perf.pl ("comm").
  bool comm_with_pid = true;
  // perf's Python callchain is empty for an event without call chains: the
  // sample then weighs on its process node (else on its leaf frame).
  bool chainless_on_process = true;
};

class FlameTree {
 public:
  FlameTree(const profile::Profile& p, const FlameTreeOptions& o);

  const std::vector<FlameNode>& nodes() const { return nodes_; }
  std::string_view name(const FlameNode& n) const { return names_.at(n.name); }
  const profile::Profile& profile() const { return p_; }

 private:
  profile::Index child(profile::Index parent, profile::Index name, FlameKind kind,
                       profile::Index dso);
  profile::Index node_of(profile::Index top, profile::Index stack);

  struct KeyHash {
    std::size_t operator()(std::uint64_t k) const { return mix64(k); }
  };
  const profile::Profile& p_;
  profile::StringTable names_;
  std::vector<FlameNode> nodes_;
  FlatMap<std::uint64_t, KeyHash> children_;  // (parent, name) -> node
  FlatMap<std::uint64_t, KeyHash> memo_;      // (process node, stack) -> node
  std::vector<profile::Index> func_names_;    // profile func -> name id
};

}  // namespace perfkit::exports
