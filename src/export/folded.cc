#include "export/folded.h"

#include <algorithm>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "base/flat_map.h"

namespace perfkit::exports {

namespace {

using profile::Index;
using profile::kNone;

constexpr std::uint32_t kTracepointType = 2;  // PERF_TYPE_TRACEPOINT

// A folded line: its text and its weight.
using Line = std::pair<std::string, std::uint64_t>;

// The lines of `parts`, each in the order of its texts, merged into one
// such order; equal texts are one line with their weights summed.
std::vector<Line> merge_sorted(std::vector<std::vector<Line>>& parts) {
  std::vector<Line> out;
  std::size_t total = 0;
  for (const auto& p : parts) total += p.size();
  out.reserve(total);
  std::vector<std::size_t> at(parts.size(), 0);
  for (;;) {
    std::size_t best = parts.size();
    for (std::size_t k = 0; k < parts.size(); ++k)
      if (at[k] < parts[k].size() &&
          (best == parts.size() || parts[k][at[k]].first < parts[best][at[best]].first))
        best = k;
    if (best == parts.size()) break;
    Line& l = parts[best][at[best]++];
    if (!out.empty() && out.back().first == l.first)
      out.back().second += l.second;
    else
      out.push_back(std::move(l));
  }
  return out;
}

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

// Folds samples into "prefix;frames" -> weight. Each stack is first mapped
// to its path of tidied names (a prefix tree of name ids, so that stacks of
// other addresses in the same functions are one path), samples are summed
// by (prefix, path), and the text of each distinct pair is made once at the
// end; equal texts (the same path of two threads) are summed then.
class Folder {
 public:
  Folder(const profile::Profile& p, const StackcollapseOptions& names)
      : p_(p), names_(names), name_of_(p.funcs.size(), kUnset) {
    kernel_name_ = kNone;
    for (Index i = 0; i < p.strings.size(); ++i)
      if (p.strings.at(i) == "[kernel.kallsyms]") kernel_name_ = i;
  }

  // A prefix text ("comm", "comm-PID/TID", ""): its id for add().
  Index prefix(std::string text) {
    prefixes_.push_back(std::move(text));
    return static_cast<Index>(prefixes_.size() - 1);
  }
  // Sums by stack while the prefix stays (a dense array, no hashing per
  // sample), then by (prefix, path of names).
  void add(Index prefix, Index stack, std::uint64_t weight) {
    if (prefix != run_prefix_) flush_run(prefix);
    const std::size_t slot = stack == kNone ? p_.stacks.size() : stack;
    if (!run_seen_[slot]) {
      run_seen_[slot] = true;
      touched_.push_back(static_cast<Index>(slot));
    }
    run_[slot] += weight;
  }
  void flush_run(Index next_prefix) {
    if (run_.empty()) {
      run_.assign(p_.stacks.size() + 1, 0);
      run_seen_.assign(p_.stacks.size() + 1, false);
    }
    for (Index slot : touched_) {
      const Index stack = slot == p_.stacks.size() ? kNone : slot;
      sum(run_prefix_, stack, run_[slot]);
      run_[slot] = 0;
      run_seen_[slot] = false;
    }
    touched_.clear();
    run_prefix_ = next_prefix;
  }
  void sum(Index prefix, Index stack, std::uint64_t weight) {
    const Index path = path_of(stack);
    const std::uint64_t key = (std::uint64_t{prefix} << 32) | path;
    Index i = index_.find(key);
    if (i == kNone) {
      i = static_cast<Index>(sums_.size());
      index_.insert(key, i);
      sums_.push_back({prefix, path, 0});
    }
    sums_[i].weight += weight;
  }

  // Each distinct line's text and weight, in the order of the texts
  // (equal texts summed), made on `threads` threads: each makes and sorts
  // the texts of a share of the sums, and the shares are merged.
  std::vector<Line> lines(unsigned threads = 1) {
    flush_run(kNone);
    constexpr std::size_t kSumsPerShare = 2048;  // (fewer are not worth a thread)
    const std::size_t shares = std::clamp<std::size_t>(sums_.size() / kSumsPerShare, 1, threads);
    std::vector<std::vector<Line>> parts(shares);
    auto make = [&](std::size_t k) {
      const std::size_t begin = sums_.size() * k / shares, end = sums_.size() * (k + 1) / shares;
      std::vector<Line>& part = parts[k];
      part.reserve(end - begin);
      std::string frames;
      std::vector<Index> names;
      for (std::size_t i = begin; i < end; ++i) {
        const Sum& s = sums_[i];
        std::string line = prefixes_[s.prefix];
        path_text(s.path, frames, names);
        if (!frames.empty()) {
          if (!line.empty()) line.push_back(';');
          line += frames;
        }
        part.push_back({std::move(line), s.weight});
      }
      std::sort(part.begin(), part.end(),
                [](const Line& a, const Line& b) { return a.first < b.first; });
    };
    std::vector<std::thread> workers;
    std::vector<std::size_t> here{0};  // shares made on this thread
    for (std::size_t k = 1; k < shares; ++k) {
      try {  // (the library does not throw: a share whose thread cannot start is made here)
        workers.emplace_back(make, k);
      } catch (...) {
        here.push_back(k);
      }
    }
    for (std::size_t k : here) make(k);
    for (std::thread& t : workers) t.join();
    return merge_sorted(parts);
  }

 private:
  static constexpr Index kUnset = kNone - 1;
  struct Sum {
    Index prefix, path;
    std::uint64_t weight;
  };
  struct KeyHash {
    std::size_t operator()(std::uint64_t k) const { return mix64(k); }
  };
  struct Path {
    Index parent, name;
  };

  // The tidied name of `frame`'s function, as an id into names_text_.
  Index name_id(Index frame) {
    const Index func = p_.frames[frame].func;
    if (name_of_[func] != kUnset) return name_of_[func];
    const profile::Func& f = p_.funcs[func];
    const bool kernel = f.lib != kNone && p_.libs[f.lib].name == kernel_name_;
    std::string name = tidy_name(p_.strings.at(f.name), kernel, names_);
    auto [it, fresh] = name_ids_.try_emplace(std::move(name), names_text_.size());
    if (fresh) names_text_.push_back(&it->first);
    return name_of_[func] = it->second;
  }
  // The path of names of `stack` (kNone: no frame). Those of every stack
  // are made at the first call, in one pass over the table (a stack's
  // prefix comes before it).
  Index path_of(Index stack) {
    if (stack == kNone) return kNone;
    if (paths_of_.empty() && !p_.stacks.empty()) make_paths();
    return paths_of_[stack];
  }
  void make_paths() {
    paths_of_.resize(p_.stacks.size());
    for (std::size_t s = 0; s < p_.stacks.size(); ++s) {
      const profile::Stack& st = p_.stacks[s];
      const Index parent = st.prefix == kNone ? kNone : paths_of_[st.prefix];
      const Index name = name_id(st.frame);
      const std::uint64_t key = (std::uint64_t{parent} << 32) | name;
      Index path = path_index_.find(key);
      if (path == kNone) {
        path = static_cast<Index>(paths_.size());
        paths_.push_back({parent, name});
        path_index_.insert(key, path);
      }
      paths_of_[s] = path;
    }
  }
  // The names of `path` root first, each after a ';' unless the text is
  // still empty (an empty name leaves no field of its own there).
  void path_text(Index path, std::string& text, std::vector<Index>& names) const {
    text.clear();
    names.clear();
    for (Index q = path; q != kNone; q = paths_[q].parent) names.push_back(paths_[q].name);
    for (std::size_t i = names.size(); i-- > 0;) {
      if (!text.empty()) text.push_back(';');
      text += *names_text_[names[i]];
    }
  }

  const profile::Profile& p_;
  StackcollapseOptions names_;
  Index kernel_name_;
  std::vector<std::string> prefixes_;
  FlatMap<std::uint64_t, KeyHash> index_;
  std::vector<Sum> sums_;
  std::vector<Index> paths_of_;  // by stack
  std::vector<Index> name_of_;   // by function; kUnset until made
  std::unordered_map<std::string, Index> name_ids_;
  std::vector<const std::string*> names_text_;
  std::vector<Path> paths_;
  FlatMap<std::uint64_t, KeyHash> path_index_;
  // The sums by stack of the run of samples of one prefix (the last slot:
  // no stack), and the slots they touched.
  Index run_prefix_ = kNone;
  std::vector<std::uint64_t> run_;
  std::vector<bool> run_seen_;
  std::vector<Index> touched_;
};

// "stack weight" lines, already in the order of their stacks' text.
Status write_lines(const std::vector<Line>& lines, FdWriter& out) {
  for (const Line& l : lines) {
    out.write(l.first);
    out.print(" {}\n", l.second);
  }
  return out.flush();
}

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
  return write_lines(folder.lines(), out);
}

namespace {

// The folded lines of event `o.event` of `p`, in the order of their texts.
std::vector<Line> fold_event(const profile::Profile& p, const FoldedOptions& o) {
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
  return folder.lines(std::max(o.threads, 1u));
}

}  // namespace

Status write_folded(const profile::Profile& p, const FoldedOptions& o, FdWriter& out) {
  if (o.event >= p.events.size())
    return make_error("no event {} to fold (the profile has {})", o.event, p.events.size());
  return write_lines(fold_event(p, o), out);
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
  // (each side's lines are in text order, each text once: merged as such)
  std::vector<Line> b = fold_event(before, ob), a = fold_event(after, oa);
  std::vector<FoldedPairLine> lines;
  lines.reserve(std::max(b.size(), a.size()));
  std::size_t i = 0, j = 0;
  while (i < b.size() || j < a.size()) {
    if (j == a.size() || (i < b.size() && b[i].first < a[j].first)) {
      lines.push_back({std::move(b[i].first), b[i].second, 0});
      ++i;
    } else if (i == b.size() || a[j].first < b[i].first) {
      lines.push_back({std::move(a[j].first), 0, a[j].second});
      ++j;
    } else {
      lines.push_back({std::move(b[i].first), b[i].second, a[j].second});
      ++i, ++j;
    }
  }
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
