#include "export/flame_tree.h"

#include <algorithm>

namespace perfkit::exports {

namespace {

using profile::Index;
using profile::kNone;

constexpr std::uint32_t kTracepointType = 2;  // PERF_TYPE_TRACEPOINT

std::uint64_t pair_key(Index a, Index b) { return (std::uint64_t{a} << 32) | b; }

// flamegraph.py's get_libtype_from_dso: the kernel, or a vmlinux.
bool kernel_dso(std::string_view name) {
  return name == "[kernel.kallsyms]" || name.ends_with("/vmlinux");
}

}  // namespace

FlameTree::FlameTree(const profile::Profile& p, const FlameTreeOptions& o) : p_(p) {
  nodes_.push_back({names_.intern("all"), FlameKind::kRoot});
  func_names_.assign(p.funcs.size(), kNone);
  std::vector<bool> wanted(p.events.size(), o.events.empty());
  for (std::size_t e : o.events)
    if (e < wanted.size()) wanted[e] = true;
  if (o.events.empty())
    for (std::size_t e = 0; e < p.events.size(); ++e)
      wanted[e] = p.events[e].type != kTracepointType;
  std::vector<std::size_t> next(p.threads.size(), 0);
  std::vector<Index> process(p.threads.size(), kNone), process_comm(p.threads.size(), kNone);
  for (Index ti : p.order) {
    const profile::Thread& t = p.threads[ti];
    const std::size_t i = next[ti]++;
    if (!wanted[t.event[i]]) continue;
    if (process_comm[ti] != t.comm[i]) {
      process_comm[ti] = t.comm[i];
      std::string label(p.strings.at(t.comm[i]));
      if (o.comm_with_pid && t.pid != 0)
        label += " (" + std::to_string(static_cast<std::uint32_t>(t.pid)) + ")";
      const bool kernel = o.comm_with_pid && t.pid == 0;
      process[ti] =
          child(0, names_.intern(label), kernel ? FlameKind::kKernel : FlameKind::kProcess, kNone);
    }
    const bool use_stack = p.events[t.event[i]].callchains || !o.chainless_on_process;
    const Index leaf =
        use_stack && t.stack[i] != kNone ? node_of(process[ti], t.stack[i]) : process[ti];
    nodes_[leaf].self += o.weight_period ? t.weight[i] : 1;
  }
  // Totals, children after their parents: a reverse pass adds each node's
  // total into its parent's.
  for (FlameNode& n : nodes_) n.total = n.self;
  for (std::size_t i = nodes_.size(); i-- > 1;) nodes_[nodes_[i].parent].total += nodes_[i].total;
}

Index FlameTree::child(Index parent, Index name, FlameKind kind, Index dso) {
  const std::uint64_t key = pair_key(parent, name);
  Index i = children_.find(key);
  if (i != kNone) return i;
  i = static_cast<Index>(nodes_.size());
  children_.insert(key, i);
  FlameNode n;
  n.name = name;
  n.kind = kind;
  n.dso = dso;
  n.parent = parent;
  nodes_.push_back(n);
  FlameNode& pn = nodes_[parent];
  if (pn.last_child == kNone)
    pn.first_child = i;
  else
    nodes_[pn.last_child].next = i;
  pn.last_child = i;
  return i;
}

// The node of `stack` under the process node `top`, made (with its
// prefixes) when new; one probe when the pair was met before.
Index FlameTree::node_of(Index top, Index stack) {
  const std::uint64_t key = pair_key(top, stack);
  Index i = memo_.find(key);
  if (i != kNone) return i;
  const profile::Stack& s = p_.stacks[stack];
  const Index parent = s.prefix == kNone ? top : node_of(top, s.prefix);
  const profile::Frame& f = p_.frames[s.frame];
  const profile::Func& fn = p_.funcs[f.func];
  Index& name = func_names_[f.func];
  if (name == kNone) name = names_.intern(p_.strings.at(fn.name));
  const bool kernel = fn.lib != kNone && kernel_dso(p_.strings.at(p_.libs[fn.lib].name));
  i = child(parent, name, kernel ? FlameKind::kKernel : FlameKind::kUser, fn.lib);
  memo_.insert(key, i);
  return i;
}

}  // namespace perfkit::exports
