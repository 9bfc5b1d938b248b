#include "report/report_threads.h"

#include <fmt/format.h>

#include <algorithm>

namespace perfkit::report {
namespace {

template <class T>
int digits(T v) {
  return static_cast<int>(fmt::formatted_size("{}", v));
}

}  // namespace

void ThreadCounters::add(std::int32_t pid, std::int32_t tid, std::size_t event,
                         const std::string& name, std::uint64_t value) {
  auto t = std::find(threads_.begin(), threads_.end(), std::make_pair(pid, tid));
  const auto ti = static_cast<std::size_t>(t - threads_.begin());
  if (t == threads_.end()) {
    threads_.emplace_back(pid, tid);
    values_.emplace_back(counters_.size(), 0);
  }
  auto c = std::find_if(counters_.begin(), counters_.end(),
                        [&](const Counter& k) { return k.event == event; });
  const auto ci = static_cast<std::size_t>(c - counters_.begin());
  if (c == counters_.end()) {
    counters_.push_back({event, name});
    for (auto& row : values_) row.push_back(0);
  }
  values_[ti][ci] += value;
}

void ThreadCounters::print(FdWriter& out, bool raw) const {
  if (raw)
    print_raw(out);
  else
    print_pretty(out);
}

// A row per thread: pid, tid, then each counter, right-aligned to the
// widest of its name and values (pid and tid at least 3 wide).
void ThreadCounters::print_pretty(FdWriter& out) const {
  int pid_w = 3, tid_w = 3;
  std::vector<int> w;
  for (const Counter& c : counters_) w.push_back(static_cast<int>(c.name.size()));
  for (std::size_t i = 0; i < threads_.size(); ++i) {
    pid_w = std::max(pid_w, digits(threads_[i].first));
    tid_w = std::max(tid_w, digits(threads_[i].second));
    for (std::size_t j = 0; j < counters_.size(); ++j) w[j] = std::max(w[j], digits(values_[i][j]));
  }
  out.print("# {:>{}}  {:>{}}", "PID", pid_w, "TID", tid_w);
  for (std::size_t j = 0; j < counters_.size(); ++j) out.print("  {:>{}}", counters_[j].name, w[j]);
  out.write("\n");
  for (std::size_t i = 0; i < threads_.size(); ++i) {
    out.print("  {:>{}}  {:>{}}", threads_[i].first, pid_w, threads_[i].second, tid_w);
    for (std::size_t j = 0; j < counters_.size(); ++j) out.print("  {:>{}}", values_[i][j], w[j]);
    out.write("\n");
  }
}

// perf's raw listing: a header line, then every thread and counter as
// pid, tid, name, event index (hex) and count, all on one line (perf ends
// none of them).
void ThreadCounters::print_raw(FdWriter& out) const {
  int pid_w = 3, tid_w = 3, name_w = 4, raw_w = 3, count_w = 5;
  for (const auto& [pid, tid] : threads_) {
    pid_w = std::max(pid_w, digits(pid));
    tid_w = std::max(tid_w, digits(tid));
  }
  for (const Counter& c : counters_) {
    name_w = std::max(name_w, static_cast<int>(c.name.size()));
    raw_w = std::max(raw_w, static_cast<int>(fmt::formatted_size("{:x}", c.event)));
  }
  for (const auto& row : values_)
    for (std::uint64_t v : row) count_w = std::max(count_w, digits(v));
  out.print("# {:>{}}  {:>{}}  {:>{}}  {:>{}}  {:>{}}\n", "PID", pid_w, "TID", tid_w, "Name",
            name_w, "Raw", raw_w, "Count", count_w);
  for (std::size_t i = 0; i < threads_.size(); ++i)
    for (std::size_t j = 0; j < counters_.size(); ++j)
      out.print("  {:>{}}  {:>{}}  {:>{}}  {:>{}x}  {:>{}}", threads_[i].first, pid_w,
                threads_[i].second, tid_w, counters_[j].name, name_w, counters_[j].event, raw_w,
                values_[i][j], count_w);
}

}  // namespace perfkit::report
