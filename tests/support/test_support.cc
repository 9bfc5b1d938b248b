#include "support/test_support.h"

#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string_view>

namespace fs = std::filesystem;

namespace perfkit::test {

std::string corpus_dir() {
  std::vector<std::string> candidates;
  if (const char* e = std::getenv("PERFKIT_CORPUS")) candidates.emplace_back(e);
  candidates.emplace_back(PERFKIT_CORPUS_DIR);
  candidates.emplace_back("/work/shared/data/perf-corpus");
  for (const auto& c : candidates)
    if (!c.empty() && fs::exists(fs::path(c) / "SOURCES.md")) return c;
  return "";
}

std::vector<std::string> corpus_files() {
  std::vector<std::string> out;
  std::string dir = corpus_dir();
  if (dir.empty()) return out;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (!e.is_regular_file()) continue;
    std::string p = e.path().string();
    std::string rel = p.substr(dir.size() + 1);
    if (rel.starts_with("_reference") || rel.starts_with("_derived") || rel == "SOURCES.md")
      continue;
    if (rel.ends_with(".bin") || rel.ends_with(".pevent")) continue;
    out.push_back(p);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string fixture(const std::string& name) {
  std::string p = std::string(PERFKIT_FIXTURES_DIR) + "/" + name;
  std::error_code ec;
  // a perf.data directory (record --threads) has its header in DIR/data
  const std::string file = fs::is_directory(p, ec) ? p + "/data" : p;
  return fs::file_size(file, ec) > 0 && !ec ? p : "";
}

std::string perfkit_bin() { return PERFKIT_BIN; }
std::string workload(const std::string& name) {
  return std::string(PERFKIT_WORKLOAD_DIR) + "/" + name;
}

bool have_perf() { return access("/usr/bin/perf", X_OK) == 0; }

namespace {
// The function the breakpoint probe watches.
__attribute__((noinline)) void breakpoint_probe_target(volatile int* v) { *v = *v + 1; }
}  // namespace

bool breakpoints_count() {
  static const bool counted = [] {
    perf_event_attr a{};
    a.size = sizeof a;
    a.type = PERF_TYPE_BREAKPOINT;
    a.bp_type = HW_BREAKPOINT_X;
    a.bp_addr = reinterpret_cast<std::uintptr_t>(&breakpoint_probe_target);
    a.bp_len = sizeof(long);
    a.disabled = 1;
    a.exclude_kernel = 1;
    a.exclude_hv = 1;
    const int fd = static_cast<int>(syscall(SYS_perf_event_open, &a, 0, -1, -1, 0));
    if (fd < 0) return false;
    ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
    volatile int v = 0;
    for (int i = 0; i < 3; ++i) breakpoint_probe_target(&v);
    ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
    std::uint64_t n = 0;
    const bool read_ok = read(fd, &n, sizeof n) == static_cast<ssize_t>(sizeof n);
    close(fd);
    return read_ok && n == 3;
  }();
  return counted;
}

std::string npm_consumer(const std::string& rel) {
  const std::string path = std::string(PERFKIT_CONSUMERS_DIR) + "/node_modules/" + rel;
  return access(path.c_str(), R_OK) == 0 ? path : "";
}

std::string find_tool(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::string_view rest = path ? path : "/usr/bin:/bin";
  while (!rest.empty()) {
    const auto colon = rest.find(':');
    std::string dir(rest.substr(0, colon));
    rest = colon == std::string_view::npos ? "" : rest.substr(colon + 1);
    const std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

bool in_ci() {
  const char* ci = std::getenv("CI");
  return ci && std::string_view(ci) == "true";
}

std::string sh(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'')
      out += "'\\''";
    else
      out += c;
  }
  return out + "'";
}

std::string first_difference(const std::string& ours, const std::string& theirs) {
  std::istringstream a(ours), b(theirs);
  std::string la, lb;
  for (int line = 1;; ++line) {
    const bool ga = static_cast<bool>(std::getline(a, la));
    const bool gb = static_cast<bool>(std::getline(b, lb));
    if (!ga && !gb) return "";
    if (la != lb || ga != gb)
      return "line " + std::to_string(line) + ":\n ours:   " + la + "\n theirs: " + lb;
  }
}

RunResult run(const std::string& cmd) {
  RunResult r;
  char err_path[] = "/tmp/perfkit-test-err-XXXXXX";
  int efd = mkstemp(err_path);
  if (efd >= 0) close(efd);
  std::string full = "(" + cmd + ") 2>" + err_path;
  FILE* p = popen(full.c_str(), "r");
  if (!p) return r;
  std::array<char, 65536> buf;
  std::size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  int st = pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  r.err = read_file(err_path);
  unlink(err_path);
  return r;
}

RunPair run_pair(const std::string& perf_cmd, const std::string& ours_cmd) {
  RunPair p{run(perf_cmd), run(ours_cmd)};
  if (p.theirs.status == p.ours.status && p.theirs.out == p.ours.out) return p;
  RunResult again = run(perf_cmd);
  if (again.status == p.theirs.status && again.out == p.theirs.out) return p;
  std::fprintf(stderr, "note: perf's output changed between two runs of `%s`: compared again\n",
               perf_cmd.c_str());
  return {std::move(again), run(ours_cmd)};
}

TempDir::TempDir() {
  char tmpl[] = "/tmp/perfkit-test-XXXXXX";
  char* d = mkdtemp(tmpl);
  dir_ = d ? d : "/tmp";
}

TempDir::~TempDir() {
  std::error_code ec;
  if (dir_ != "/tmp") fs::remove_all(dir_, ec);
}

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

void write_file(const std::string& path, const std::string& data) {
  std::ofstream f(path, std::ios::binary);
  f << data;
}

}  // namespace perfkit::test
