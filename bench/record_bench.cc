// record_bench: perfkit record and perf record side by side on the same
// CPU-bound workload, several runs each, medians and ratios of:
//   samples captured and lost (read back from each file with perfkit's reader),
//   the recorder's own CPU time (its rusage and its children's, minus the
//     CPU time the workload reports for itself),
//   the workload's slowdown (its wall time recorded / not recorded).
//
//   record_bench PERFKIT RUNS WORKLOAD_MS [record options...]
//   record_bench --workload MS     (the workload: spins MS ms of CPU, then
//                                   writes "wall_s cpu_s" to $RECORD_BENCH_OUT)
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "abi/perf_event.h"
#include "perfdata/reader.h"

namespace {

using Clock = std::chrono::steady_clock;

double seconds(const timeval& t) { return static_cast<double>(t.tv_sec) + t.tv_usec / 1e6; }

int workload(long ms) {
  const auto start = Clock::now();
  volatile std::uint64_t x = 1;
  rusage ru{};
  for (;;) {
    for (int i = 0; i < 100000; ++i) x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    getrusage(RUSAGE_SELF, &ru);
    if ((seconds(ru.ru_utime) + seconds(ru.ru_stime)) * 1000 >= ms) break;
  }
  const double wall = std::chrono::duration<double>(Clock::now() - start).count();
  if (const char* out = std::getenv("RECORD_BENCH_OUT")) {
    std::ofstream f(out);
    f << wall << " " << seconds(ru.ru_utime) + seconds(ru.ru_stime) << "\n";
  }
  return 0;
}

struct Run {
  double recorder_cpu = 0;  // seconds
  double workload_wall = 0;
  std::uint64_t samples = 0, lost = 0;
};

// Runs argv to completion; returns its rusage (with its children's).
rusage run_command(const std::vector<std::string>& argv) {
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = fork();
  if (pid == 0) {
    int null = open("/dev/null", O_WRONLY);
    dup2(null, STDOUT_FILENO);
    dup2(null, STDERR_FILENO);
    execvp(args[0], args.data());
    _exit(127);
  }
  int status = 0;
  rusage ru{};
  wait4(pid, &status, 0, &ru);
  return ru;
}

std::pair<double, double> read_workload_report(const std::string& path) {
  std::ifstream f(path);
  double wall = 0, cpu = 0;
  f >> wall >> cpu;
  return {wall, cpu};
}

void count(const std::string& path, Run& r) {
  auto reader = perfkit::perfdata::Reader::open(path);
  if (!reader) return;
  perfkit::perfdata::ReadRecord rec;
  for (;;) {
    auto more = (*reader)->next(rec);
    if (!more || !*more) break;
    if (rec.view.type == perfkit::abi::kRecordSample) ++r.samples;
    if (rec.view.type == perfkit::abi::kRecordLost && rec.view.bytes.size() >= 24)
      r.lost += perfkit::load<std::uint64_t>(rec.view.bytes.data() + 16, false);
  }
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::string(argv[1]) == "--workload") return workload(std::atol(argv[2]));
  if (argc < 4) {
    std::fprintf(stderr, "usage: record_bench PERFKIT RUNS WORKLOAD_MS [record options...]\n");
    return 2;
  }
  const std::string perfkit = argv[1], self = "/proc/self/exe";
  const int runs = std::atoi(argv[2]);
  const std::string ms = argv[3];
  std::vector<std::string> opts(argv + 4, argv + argc);
  char exe[4096];
  ssize_t n = readlink(self.c_str(), exe, sizeof exe - 1);
  exe[n > 0 ? n : 0] = 0;
  char dir_template[] = "/tmp/record-bench-XXXXXX";
  const std::string dir = mkdtemp(dir_template);
  const std::string report = dir + "/workload.txt", data = dir + "/out.data";
  setenv("RECORD_BENCH_OUT", report.c_str(), 1);

  std::vector<double> base_wall;
  std::vector<std::vector<double>> cpu(2), wall(2), samples(2), lost(2);
  const std::vector<std::string> tools = {perfkit, "perf"};
  for (int i = 0; i < runs; ++i) {
    run_command({exe, "--workload", ms});
    base_wall.push_back(read_workload_report(report).first);
    for (std::size_t t = 0; t < tools.size(); ++t) {
      std::vector<std::string> cmd = {tools[t], "record", "-q", "-o", data};
      cmd.insert(cmd.end(), opts.begin(), opts.end());
      cmd.insert(cmd.end(), {"--", exe, "--workload", ms});
      rusage ru = run_command(cmd);
      auto [w, c] = read_workload_report(report);
      Run r;
      r.recorder_cpu = seconds(ru.ru_utime) + seconds(ru.ru_stime) - c;
      r.workload_wall = w;
      count(data, r);
      cpu[t].push_back(r.recorder_cpu);
      wall[t].push_back(r.workload_wall);
      samples[t].push_back(static_cast<double>(r.samples));
      lost[t].push_back(static_cast<double>(r.lost));
    }
  }
  const double base = median(base_wall);
  auto row = [](const char* name, double a, double b, const char* unit, bool ratio) {
    std::printf("  %-22s perfkit %10.3f%s   perf %10.3f%s", name, a, unit, b, unit);
    if (ratio && b > 0) std::printf("   ratio %5.2f", a / b);
    std::printf("\n");
  };
  std::string joined;
  for (const auto& o : opts) joined += " " + o;
  std::printf("== record%s: %s ms CPU-bound workload, %d runs, medians\n", joined.c_str(),
              ms.c_str(), runs);
  row("samples captured", median(samples[0]), median(samples[1]), "", true);
  row("samples lost", median(lost[0]), median(lost[1]), "", false);
  row("recorder CPU time", median(cpu[0]), median(cpu[1]), "s", true);
  row("workload slowdown", median(wall[0]) / base, median(wall[1]) / base, "x", true);
  std::remove(report.c_str());
  std::remove(data.c_str());
  std::remove((data + ".old").c_str());
  rmdir(dir.c_str());
  return 0;
}
