#include "record_test_support.h"

#include <cstdio>
#include <regex>
#include <sstream>

#include "abi/perf_event.h"
#include "perfdata/reader.h"

namespace perfkit::test {

Closing parse_closing(const std::string& err) {
  Closing c;
  std::smatch m;
  static const std::regex re(
      R"(\[ perfkit record: Captured and wrote [0-9.]+ MB .* \(([0-9]+) samples, ([0-9]+) lost\))");
  if (std::regex_search(err, m, re)) {
    c.found = true;
    c.samples = std::stoull(m[1]);
    c.lost = std::stoull(m[2]);
  }
  return c;
}

long count_samples(const std::string& path) {
  auto reader = perfdata::Reader::open(path);
  if (!reader) return -1;
  long n = 0;
  perfdata::ReadRecord r;
  for (;;) {
    auto more = (*reader)->next(r);
    if (!more) return -1;
    if (!*more) break;
    n += r.view.type == abi::kRecordSample;
  }
  return n;
}

long perf_sample_count(const std::string& path) {
  auto r =
      run("perf report --stats -i " + sh(path) + " 2>/dev/null | grep 'SAMPLE events' | head -1");
  std::smatch m;
  static const std::regex re(R"(SAMPLE events:\s+([0-9]+))");
  return std::regex_search(r.out, m, re) ? std::stol(m[1]) : -1;
}

namespace {
std::string input(const std::string& path) {
  return path.ends_with(".pipe") ? "-i - < " + sh(path) : "-i " + sh(path);
}
}  // namespace

std::string perf_report_errors(const std::string& path) {
  return run("perf report --stdio " + input(path) + " >/dev/null").err;
}

std::string perf_script_errors(const std::string& path) {
  return run("perf script " + input(path) + " >/dev/null").err;
}

std::string sorted_report(const std::string& tool, const std::string& path,
                          const std::string& sort) {
  auto r = run(tool + " report --stdio --no-children --sort " + sort + " -g none " + input(path) +
               " 2>/dev/null");
  std::istringstream in(r.out);
  std::string line, out;
  while (std::getline(in, line))
    if (!line.starts_with("# (Tip") && !line.empty()) out += line + "\n";
  return out;
}

std::string evlist(const std::string& path) {
  return run("perf evlist -v -i " + sh(path) + " 2>&1 | grep -v Tip").out;
}

std::vector<std::string> record_kinds_until_init(const std::string& path) {
  std::vector<std::string> kinds;
  auto reader = perfdata::Reader::open(path);
  if (!reader) return kinds;
  perfdata::ReadRecord r;
  std::string prev;
  int run_length = 0;
  auto flush = [&] {
    if (!prev.empty())
      kinds.push_back(run_length > 1 ? prev + " x" + std::to_string(run_length) : prev);
  };
  for (;;) {
    auto more = (*reader)->next(r);
    if (!more || !*more) break;
    std::string name = std::to_string(r.view.type);
    switch (r.view.type) {
      case abi::kRecordMmap:
        name = "MMAP";
        break;
      case abi::kRecordMmap2:
        name = "MMAP2";
        break;
      case abi::kRecordComm:
        name = "COMM";
        break;
      case abi::kRecordFork:
        name = "FORK";
        break;
      case abi::kRecordIdIndex:
        name = "ID_INDEX";
        break;
      case abi::kRecordThreadMap:
        name = "THREAD_MAP";
        break;
      case abi::kRecordCpuMap:
        name = "CPU_MAP";
        break;
      case abi::kRecordTimeConv:
        name = "TIME_CONV";
        break;
      case abi::kRecordEventUpdate:
        name = "EVENT_UPDATE";
        break;
      case abi::kRecordFinishedInit:
        name = "FINISHED_INIT";
        break;
      case abi::kRecordNamespaces:
        name = "NAMESPACES";
        break;
      default:
        break;
    }
    if (name == prev) {
      ++run_length;
    } else {
      flush();
      prev = name;
      run_length = 1;
    }
    if (r.view.type == abi::kRecordFinishedInit) break;
  }
  flush();
  return kinds;
}

std::string watched_workload() { return workload("watched"); }

std::uint64_t symbol_address(const std::string& exe, const std::string& symbol) {
  auto r = run("nm " + sh(exe) + " | awk '$3 == \"" + symbol + "\" {print $1}'");
  if (r.out.empty()) return 0;
  return std::stoull(r.out, nullptr, 16);
}

}  // namespace perfkit::test
