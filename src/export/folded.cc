#include "export/folded.h"

#include <algorithm>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/flat_map.h"

namespace perfkit::exports {

namespace {

using profile::Index;
using profile::kNone;

constexpr std::uint32_t kTracepointType = 2;  // PERF_TYPE_TRACEPOINT

// stackcollapse.py's tidy_function_name.
std::string tidy_name(std::string_view sym, bool kernel_lib, const StackcollapseOptions& o) {
  std::string s(sym);
  std::replace(s.begin(), s.end(), ';', ':');
  if (o.tidy_java) {
    std::erase(s, '<');
    std::erase(s, '>');
    // Python's `sym.find('/')` is truthy unless '/' is the first character.
    if (!s.empty() && s[0] == 'L' && s.find('/') != 0) s.erase(0, 1);
    if (auto paren = s.find('('); paren != std::string::npos) s.resize(paren);
  }
  if (o.annotate_kernel && kernel_lib) s += "_[k]";
  return s;
}

// Folds samples into "prefix;frames" -> weight. Samples are first summed by
// (prefix, stack) ids; the text of each distinct pair is made once at the
// end, and equal texts (the same stack of two threads) are summed then.
class Folder {
 public:
  Folder(const profile::Profile& p, const StackcollapseOptions& names) : p_(p), names_(names) {
    kernel_name_ = kNone;
    for (Index i = 0; i < p.strings.size(); ++i)
      if (p.strings.at(i) == "[kernel.kallsyms]") kernel_name_ = i;
  }

  // A prefix text ("comm", "comm-PID/TID", ""): its id for add().
  Index prefix(std::string text) {
    prefixes_.push_back(std::move(text));
    return static_cast<Index>(prefixes_.size() - 1);
  }
  void add(Index prefix, Index stack, std::uint64_t weight) {
    const std::uint64_t key = (std::uint64_t{prefix} << 32) | stack;
    Index i = index_.find(key);
    if (i == kNone) {
      i = static_cast<Index>(sums_.size());
      index_.insert(key, i);
      sums_.push_back({prefix, stack, 0});
    }
    sums_[i].weight += weight;
  }

  // Each distinct line's text and weight.
  std::unordered_map<std::string, std::uint64_t> lines() {
    std::unordered_map<std::string, std::uint64_t> lines;
    for (const Sum& s : sums_) {
      std::string line = prefixes_[s.prefix];
      const std::string& frames = stack_text(s.stack);
      if (!frames.empty()) {
        if (!line.empty()) line.push_back(';');
        line += frames;
      }
      lines[std::move(line)] += s.weight;
    }
    return lines;
  }
  Status write(FdWriter& out) {
    const auto all = lines();
    std::vector<const std::pair<const std::string, std::uint64_t>*> sorted;
    sorted.reserve(all.size());
    for (const auto& l : all) sorted.push_back(&l);
    std::sort(sorted.begin(), sorted.end(), [](auto* a, auto* b) { return a->first < b->first; });
    for (const auto* l : sorted) {
      out.write(l->first);
      out.print(" {}\n", l->second);
    }
    return out.flush();
  }

 private:
  struct Sum {
    Index prefix, stack;
    std::uint64_t weight;
  };
  struct KeyHash {
    std::size_t operator()(std::uint64_t k) const { return mix64(k); }
  };

  const std::string& stack_text(Index stack) {
    static const std::string kEmpty;
    if (stack == kNone) return kEmpty;
    if (stack >= texts_.size()) {
      texts_.resize(p_.stacks.size());
      done_.resize(p_.stacks.size());
    }
    if (done_[stack]) return texts_[stack];
    done_[stack] = true;
    const profile::Stack& s = p_.stacks[stack];
    std::string text = stack_text(s.prefix);
    const profile::Func& f = p_.funcs[p_.frames[s.frame].func];
    const bool kernel = f.lib != kNone && p_.libs[f.lib].name == kernel_name_;
    if (!text.empty()) text.push_back(';');
    text += tidy_name(p_.strings.at(f.name), kernel, names_);
    return texts_[stack] = std::move(text);
  }

  const profile::Profile& p_;
  StackcollapseOptions names_;
  Index kernel_name_;
  std::vector<std::string> prefixes_;
  FlatMap<std::uint64_t, KeyHash> index_;
  std::vector<Sum> sums_;
  std::vector<std::string> texts_;  // by stack, joined root first
  std::vector<bool> done_;
};

// stackcollapse.py's bottom entry: "comm", "comm-PID", "comm-PID/TID".
std::string comm_prefix(const profile::Profile& p, const profile::Thread& t, Index comm,
                        const StackcollapseOptions& o) {
  if (!o.include_comm) return {};
  std::string s(p.strings.at(comm));
  std::replace(s.begin(), s.end(), ' ', '_');
  const char* sep = "-";
  if (o.include_pid) {
    s += sep + std::to_string(static_cast<std::uint32_t>(t.pid));
    sep = "/";
  }
  if (o.include_tid) s += sep + std::to_string(static_cast<std::uint32_t>(t.tid));
  return s;
}

}  // namespace

Status write_stackcollapse(const profile::Profile& p, const StackcollapseOptions& o,
                           FdWriter& out) {
  Folder folder(p, o);
  for (const profile::Thread& t : p.threads) {
    Index comm = kNone, prefix = kNone;
    for (std::size_t i = 0; i < t.size(); ++i) {
      const profile::Event& e = p.events[t.event[i]];
      // perf hands tracepoint samples to the script's tracepoint handlers,
      // which stackcollapse.py does not have.
      if (e.type == kTracepointType) continue;
      // perf's python callchain is empty for an event without call chains.
      const bool chain = e.callchains;
      if (t.comm[i] != comm) prefix = folder.prefix(comm_prefix(p, t, comm = t.comm[i], o));
      folder.add(prefix, chain ? t.stack[i] : kNone, 1);
    }
  }
  return folder.write(out);
}

namespace {

// The folded lines of event `o.event` of `p`.
std::unordered_map<std::string, std::uint64_t> fold_event(const profile::Profile& p,
                                                          const FoldedOptions& o) {
  StackcollapseOptions names;
  names.include_comm = o.include_comm;
  names.annotate_kernel = o.annotate_kernel;
  Folder folder(p, names);
  // As stackcollapse (perf's and FlameGraph's): an event without call
  // chains folds to the process alone (e.g. Intel PT's --itrace without g).
  const bool chains = o.event < p.events.size() && p.events[o.event].callchains;
  for (const profile::Thread& t : p.threads) {
    Index comm = kNone, prefix = kNone;
    for (std::size_t i = 0; i < t.size(); ++i) {
      if (t.event[i] != o.event) continue;
      if (t.comm[i] != comm) prefix = folder.prefix(comm_prefix(p, t, comm = t.comm[i], names));
      folder.add(prefix, chains ? t.stack[i] : kNone, o.weight_period ? t.weight[i] : 1);
    }
  }
  return folder.lines();
}

}  // namespace

Status write_folded(const profile::Profile& p, const FoldedOptions& o, FdWriter& out) {
  if (o.event >= p.events.size())
    return make_error("no event {} to fold (the profile has {})", o.event, p.events.size());
  std::vector<std::pair<std::string, std::uint64_t>> sorted;
  for (auto& l : fold_event(p, o)) sorted.emplace_back(l.first, l.second);
  std::sort(sorted.begin(), sorted.end());
  for (const auto& [line, weight] : sorted) {
    out.write(line);
    out.print(" {}\n", weight);
  }
  return out.flush();
}

Expected<std::vector<FoldedPairLine>> folded_pair_lines(const profile::Profile& before,
                                                        std::size_t before_event,
                                                        const profile::Profile& after,
                                                        std::size_t after_event,
                                                        const FoldedOptions& o) {
  if (before_event >= before.events.size() || after_event >= after.events.size())
    return make_error("no such event to fold");
  FoldedOptions ob = o, oa = o;
  ob.event = before_event;
  oa.event = after_event;
  std::unordered_map<std::string, std::pair<std::uint64_t, std::uint64_t>> both;
  for (auto& [line, w] : fold_event(before, ob)) both[line].first += w;
  for (auto& [line, w] : fold_event(after, oa)) both[line].second += w;
  std::vector<FoldedPairLine> lines;
  lines.reserve(both.size());
  for (auto& [line, w] : both) lines.push_back({line, w.first, w.second});
  std::sort(lines.begin(), lines.end(),
            [](const FoldedPairLine& a, const FoldedPairLine& b) { return a.stack < b.stack; });
  return lines;
}

Status write_folded_pair(const profile::Profile& before, std::size_t before_event,
                         const profile::Profile& after, std::size_t after_event,
                         const FoldedOptions& o, FdWriter& out) {
  PK_ASSIGN(auto lines, folded_pair_lines(before, before_event, after, after_event, o));
  for (const FoldedPairLine& l : lines) {
    out.write(l.stack);
    out.print(" {} {}\n", l.before, l.after);
  }
  return out.flush();
}

}  // namespace perfkit::exports
