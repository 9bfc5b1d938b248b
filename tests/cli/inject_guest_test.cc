// perfkit inject --guest-data: a guest's recording merged into its host's.
// perf 6.1's own --guest-data fails on every input (its guest event buffer
// is never allocated), so perf is the oracle for reading the result: both
// recordings' side-band records, in time order, the guest's with a guest
// cpumode and a guest event of their own; and perfkit reads it as perf.
#include "inject/inject_guest.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <sstream>

#include "support/test_support.h"

namespace perfkit {
namespace {

TEST(GuestData, ParsesPerfsArguments) {
  auto g = inject::parse_guest_data("guest.data,4242");
  ASSERT_TRUE(g);
  EXPECT_EQ(g->path, "guest.data");
  EXPECT_EQ(g->machine_pid, 4242u);
  EXPECT_EQ(g->time_offset, 0u);
  EXPECT_EQ(g->time_scale, 1.0);
  g = inject::parse_guest_data("g.data,0x10,0xffffe42722c64c41,1.5");
  ASSERT_TRUE(g);
  EXPECT_EQ(g->machine_pid, 16u);
  EXPECT_EQ(g->time_offset, 0xffffe42722c64c41ULL);
  EXPECT_EQ(g->time_scale, 1.5);
  for (const char* bad : {"", "guest.data", "guest.data,0", "guest.data,12,0,0"}) {
    auto b = inject::parse_guest_data(bad);
    ASSERT_FALSE(b) << bad;
    EXPECT_NE(b.error().message().find("--guest-data option requires guest perf.data file name"),
              std::string::npos);
  }
}

TEST(GuestData, TscConversionRoundTrips) {
  inject::TscConversion tc;
  tc.time_shift = 31, tc.time_mult = 1431655765, tc.time_zero = 123456789;
  tc.cap_user_time_zero = true;
  for (std::uint64_t ns : {200000000ULL, 38963660630007ULL, 1ULL << 50}) {
    const std::uint64_t back = tc.to_time(tc.to_tsc(ns));
    EXPECT_LE(back, ns);
    EXPECT_GE(back + 2, ns);
  }
}

// The PERF_RECORD_ lines perf script shows with the side-band records.
std::vector<std::string> record_lines(const std::string& file, const std::string& fields = "") {
  auto r =
      test::run("perf script --show-task-events --show-mmap-events -i " + test::sh(file) + fields);
  EXPECT_EQ(r.status, 0) << r.err;
  std::vector<std::string> out;
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);)
    if (line.find("PERF_RECORD_") != std::string::npos) out.push_back(line);
  return out;
}

class InjectGuest : public ::testing::Test {
 protected:
  void SetUp() override {
    PK_SKIP_WITHOUT_PERF();
    host_ = dir_.path("host.data");
    guest_ = dir_.path("guest.data");
    const std::string loop = test::sh(test::workload("cpuloop"));
    // The "VM": a shell that names itself as QEMU's VCPU 0 thread and spins,
    // recorded with its switches; the "guest": cpuloop on CPU 0 meanwhile.
    const std::string cmd =
        "(sleep 0.1; taskset -c 0 perf record -q -e cpu-clock --sample-identifier -o " +
        test::sh(guest_) + " -- " + loop +
        " 40) & perf record -q -e cpu-clock --sample-identifier --switch-events -o " +
        test::sh(host_) + " -- sh -c 'echo $$ > " + test::sh(dir_.path("pid")) +
        "; printf \"CPU 0/KVM\" > /proc/self/comm; i=0; while [ $i -lt 150000 ]; do " +
        "i=$((i+1)); done'; wait";
    auto rec = test::run(cmd + " >/dev/null 2>&1");
    ASSERT_EQ(rec.status, 0) << rec.err;
    pid_ = test::run("cat " + test::sh(dir_.path("pid"))).out;
    pid_.erase(pid_.find_last_not_of("\n") + 1);
    ASSERT_FALSE(pid_.empty());
  }
  test::RunResult inject(const std::string& out, const std::string& extra = "") {
    return test::run(test::perfkit_bin() + " inject -i " + test::sh(host_) +
                     " --guest-data=" + guest_ + "," + pid_ + extra + " -o " + test::sh(out));
  }
  test::TempDir dir_;
  std::string host_, guest_, pid_;
};

TEST_F(InjectGuest, MergesAsDocumented) {
  const std::string out = dir_.path("out.data");
  auto inj = inject(out);
  ASSERT_EQ(inj.status, 0) << inj.err;
  // a guest event of its own: exclude_host, PERF_SAMPLE_IDENTIFIER
  auto ev = test::run("perf evlist -v -i " + test::sh(out));
  ASSERT_EQ(ev.status, 0) << ev.err;
  EXPECT_NE(ev.out.find("cpu-clock:G: "), std::string::npos) << ev.out;
  EXPECT_NE(ev.out.find("exclude_host: 1"), std::string::npos) << ev.out;
  // the ID_INDEX: the new ids per thread, the VCPU's, with the machine pid
  auto dump = test::run("perf report -D -i " + test::sh(out) + " 2>/dev/null | grep machine_pid");
  EXPECT_NE(dump.out.find("cpu: -1  tid: " + pid_ + "  machine_pid: " + pid_ + "  vcpu: 0"),
            std::string::npos)
      << dump.out;
  // every record of both, the guest's marked as a guest's, in time order
  const auto host = record_lines(host_), guest = record_lines(guest_);
  const auto merged = record_lines(out);
  ASSERT_FALSE(guest.empty());
  EXPECT_EQ(merged.size(), host.size() + guest.size());
  for (const auto* part : {&host, &guest})
    for (const std::string& line : *part)
      EXPECT_NE(std::find(merged.begin(), merged.end(), line), merged.end()) << line;
  double last = 0;
  for (const std::string& line : merged) {
    const auto colon = line.find(": PERF_RECORD_");
    const auto space = line.rfind(' ', colon);
    const double t = std::strtod(line.substr(space + 1, colon - space - 1).c_str(), nullptr);
    EXPECT_GE(t, last) << line;
    last = std::max(last, t);
  }
  const auto marked = record_lines(out, " -F comm,tid,time,misc");
  int guest_marked = 0;
  for (const std::string& line : marked)
    guest_marked +=
        line.find(" cpuloop ") != std::string::npos && line.find('G') != std::string::npos;
  EXPECT_GE(guest_marked, 3);
  // the guest's build-ids in the table, under the machine pid; perfkit
  // reads the file as perf does
  for (const char* cmd :
       {"buildid-list", "script", "script --show-task-events --show-mmap-events", "script -D"}) {
    const std::string in = std::string(" ") + cmd + " -i " + test::sh(out);
    auto p = test::run("perf" + in), k = test::run(test::perfkit_bin() + in);
    EXPECT_EQ(k.status, 0) << k.err;
    EXPECT_EQ(p.out, k.out) << cmd;
  }
  EXPECT_NE(test::run("perf buildid-list -i " + test::sh(out)).out.find("cpuloop"),
            std::string::npos);
}

TEST_F(InjectGuest, ErrorsAsPerf) {
  const std::string out = dir_.path("out.data");
  // no VCPU thread of that process: perf's message, no output
  auto none = test::run(test::perfkit_bin() + " inject -i " + test::sh(host_) +
                        " --guest-data=" + guest_ + ",1 -o " + test::sh(out));
  EXPECT_NE(none.status, 0);
  EXPECT_NE(none.err.find("No VCPU threads found for pid 1"), std::string::npos) << none.err;
  EXPECT_NE(test::run("test -e " + test::sh(out)).status, 0);
  // perf's usage error for a malformed argument
  auto bad = test::run(test::perfkit_bin() + " inject -i " + test::sh(host_) +
                       " --guest-data=" + guest_ + " -o " + test::sh(out));
  EXPECT_EQ(bad.status, 129);
  EXPECT_NE(bad.err.find("--guest-data option requires guest perf.data file name, guest machine "
                         "PID, and optionally guest timestamp offset"),
            std::string::npos)
      << bad.err;
  // the merged file needs a file on both sides
  auto pipe = test::run(test::perfkit_bin() + " inject -i " + test::sh(host_) +
                        " --guest-data=" + guest_ + "," + pid_ + " -o - >/dev/null");
  EXPECT_NE(pipe.status, 0);
  // --guestmount: the guest's directory holds its build-ids
  auto mount = inject(out, " --guestmount " + test::sh(dir_.path("nowhere")));
  EXPECT_NE(mount.status, 0);
  EXPECT_NE(mount.err.find("Failed to add guest build IDs"), std::string::npos) << mount.err;
  ASSERT_EQ(test::run("mkdir -p " + test::sh(dir_.path("mnt/" + pid_))).status, 0);
  EXPECT_EQ(inject(out, " --guestmount " + test::sh(dir_.path("mnt"))).status, 0);
}

}  // namespace
}  // namespace perfkit
