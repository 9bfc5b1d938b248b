#include "cli/lbr_synthetic.h"

#include <cstdlib>
#include <map>
#include <sstream>

#include "abi/layout.h"
#include "abi/perf_event.h"
#include "perfdata/writer.h"
#include "record/encode.h"
#include "support/test_support.h"

namespace perfkit::test {

using namespace perfkit::abi;
using record::RecordBuilder;

namespace {

constexpr std::uint64_t kBase = 0x555555554000ULL;
constexpr std::uint32_t kPid = 4242;

std::uint64_t branch_flags(const LbrBranch& b) {
  return (b.mispred ? 1u : 0u) | (b.predicted ? 2u : 0u) | (b.in_tx ? 4u : 0u) |
         (b.abort ? 8u : 0u) | (static_cast<std::uint64_t>(b.cycles) << 4) |
         (static_cast<std::uint64_t>(b.type) << 20);
}

// One instruction of objdump's listing that transfers control.
struct Insn {
  std::uint64_t addr = 0, next = 0, target = 0;
  std::string mnemonic;
};

// The control transfers of each function of `binary`, by objdump.
std::map<std::string, std::vector<Insn>> transfers(const std::string& binary) {
  std::map<std::string, std::vector<Insn>> out;
  auto r = run("objdump -d --no-show-raw-insn " + sh(binary));
  std::istringstream in(r.out);
  std::string line, fn;
  Insn* last = nullptr;
  for (std::string line; std::getline(in, line);) {
    if (line.size() > 18 && line.back() == ':' && line.find(" <") == 16) {
      fn = line.substr(18, line.size() - 20);
      last = nullptr;
      continue;
    }
    const auto colon = line.find(":\t");
    if (fn.empty() || colon == std::string::npos) continue;
    const std::uint64_t addr = std::strtoull(line.substr(0, colon).c_str(), nullptr, 16);
    if (last) last->next = addr, last = nullptr;
    std::istringstream ops(line.substr(colon + 2));
    Insn i;
    i.addr = addr;
    ops >> i.mnemonic;
    if (!(i.mnemonic[0] == 'j' || i.mnemonic == "call" || i.mnemonic == "ret")) continue;
    std::string target;
    if (ops >> target) i.target = std::strtoull(target.c_str(), nullptr, 16);  // 0: indirect
    out[fn].push_back(i);
    last = &out[fn].back();
  }
  return out;
}

// The COMM and MMAP2 (its text segment: file offset 0x1000 at its ELF
// address 0x1000) of process kPid running `binary`.
void add_process(std::vector<std::vector<std::uint8_t>>& records, const RecordLayout& layout,
                 const std::string& binary) {
  auto with_id = [&](RecordBuilder b, std::uint64_t time) {
    record::SampleId s;
    s.pid = s.tid = kPid;
    s.time = time;
    b.sample_id(s, layout);
    records.push_back(b.finish());
  };
  with_id(RecordBuilder(kRecordComm, kMiscCommExec).u32(kPid).u32(kPid).string("cpuloop"), 1000);
  with_id(RecordBuilder(kRecordMmap2, kMiscUser)
              .u32(kPid)
              .u32(kPid)
              .u64(kBase + 0x1000)
              .u64(0x1000)
              .u64(0x1000)
              .u32(0)
              .u32(0)
              .u64(0)
              .u64(0)
              .u32(5)  // PROT_READ | PROT_EXEC
              .u32(2)  // MAP_PRIVATE
              .string(binary),
          1001);
}

std::string write_file(const std::string& path, const perfdata::EventSet& events,
                       const std::vector<std::vector<std::uint8_t>>& records,
                       const std::vector<perfdata::FeatureData>& features) {
  auto w = perfdata::Writer::create(path, {});
  if (!w) return w.error().message();
  if (auto st = (*w)->begin(events); !st) return st.error().message();
  for (const auto& r : records)
    if (auto st = (*w)->write(r); !st) return st.error().message();
  if (auto st = (*w)->finish(events, features); !st) return st.error().message();
  return "";
}

}  // namespace

std::string write_lbr_recording(const std::string& path, const std::string& binary,
                                const std::vector<LbrSample>& samples) {
  perfdata::EventSet events;
  EventAttr a;
  a.type = kTypeHardware;
  a.config = 0;  // cycles
  a.sample_period = 100000;
  a.sample_type = kSampleIp | kSampleTid | kSampleTime | kSamplePeriod | kSampleBranchStack;
  // (HW_INDEX: perf 6.1 reads stacks without it wrongly when it accounts cycles)
  a.branch_sample_type = kBranchAny | kBranchUser | kBranchHwIndex;
  a.set(kAttrSampleIdAll);
  a.set(kAttrDisabled);
  a.set(kAttrExcludeKernel);
  events.add(a, {1});
  std::vector<std::vector<std::uint8_t>> records;
  add_process(records, events[0].layout, binary);
  std::uint64_t time = 2000;
  for (const LbrSample& s : samples) {
    RecordBuilder b(kRecordSample, kMiscUser);
    b.u64(kBase + s.ip).u32(kPid).u32(kPid).u64(time += 1000).u64(100000);
    b.u64(s.branches.size()).u64(UINT64_MAX);  // nr, hw_idx
    for (const LbrBranch& br : s.branches)
      b.u64(kBase + br.from).u64(kBase + br.to).u64(branch_flags(br));
    records.push_back(b.finish());
  }
  return write_file(path, events, records, {{kFeatBranchStack, {}}});
}

std::string write_guest_recording(const std::string& path, const std::string& binary,
                                  bool guest_kernel_mmap, bool in_hypervisor) {
  perfdata::EventSet events;
  EventAttr a;
  a.type = kTypeSoftware;
  a.config = 0;  // cpu-clock
  a.sample_period = 100000;
  a.sample_type = kSampleIp | kSampleTid | kSampleTime | kSamplePeriod;
  a.set(kAttrSampleIdAll);
  a.set(kAttrDisabled);
  events.add(a, {1});
  std::vector<std::vector<std::uint8_t>> records;
  add_process(records, events[0].layout, binary);
  if (guest_kernel_mmap) {
    // perf kvm's synthesized guest kernel map: pid 0 (the default guest),
    // pgoff the address of _text
    RecordBuilder b(kRecordMmap, kMiscGuestKernel);
    b.u32(0)
        .u32(0)
        .u64(kGuestText)
        .u64(0x1000000)
        .u64(kGuestText)
        .string("[guest.kernel.kallsyms]_text");
    record::SampleId s;
    b.sample_id(s, events[0].layout);
    records.push_back(b.finish());
  }
  const std::uint64_t kernel_ips[] = {kGuestText + 0x10, kGuestText + 0x150, kGuestText + 0x2a0,
                                      kGuestText + 0x1000, kGuestModule + 0x20};
  std::uint64_t time = 2000;
  for (int n = 0; n < 30; ++n) {
    const int kind = n % 3;  // host user, guest kernel, guest user
    const std::uint16_t misc = kind == 0   ? kMiscUser
                               : kind == 1 ? kMiscGuestKernel
                                           : kMiscGuestUser;
    const std::uint32_t pid = kind == 0 || in_hypervisor ? kPid : 777;
    const std::uint64_t user_ip = in_hypervisor ? kBase + 0x1150 : 0x401000;
    const std::uint64_t ip = kind == 0   ? kBase + 0x1150
                             : kind == 1 ? kernel_ips[(n / 3) % 5]
                                         : user_ip + 0x10 * (n % 2);
    RecordBuilder b(kRecordSample, misc);
    b.u64(ip).u32(pid).u32(pid + n % 2).u64(time += 1000).u64(100000);
    records.push_back(b.finish());
  }
  return write_file(path, events, records, {});
}

std::vector<LbrSample> cpuloop_lbr_samples(const std::string& binary) {
  auto fns = transfers(binary);
  auto find = [&](const std::string& fn, const std::string& mnemonic, std::size_t nth = 0) {
    for (const Insn& i : fns[fn])
      if ((i.mnemonic == mnemonic || (mnemonic == "j*" && i.mnemonic[0] == 'j')) && nth-- == 0)
        return i;
    return Insn{};
  };
  const Insn spin_back = find("spin", "j*", 1);  // the loop's back edge
  const Insn spin_exit = find("spin", "j*", 0);  // its early exit
  const Insn spin_ret = find("spin", "ret");
  const Insn run_back = find("run", "j*", 1);
  std::vector<LbrSample> out;
  if (!spin_back.addr || !spin_ret.addr || !run_back.addr) return out;
  const char* callers[] = {"hot", "warm", "cool"};
  for (int n = 0; n < 240; ++n) {
    const std::string caller = callers[n % 3];
    const Insn call = find(caller, "call");
    const Insn run_call = find("run", "call", static_cast<std::size_t>(n % 3));
    const Insn caller_ret = find(caller, "ret");
    LbrSample s;
    auto add = [&](const Insn& i, std::uint64_t to, std::uint16_t cycles, std::uint8_t type,
                   bool predicted) {
      s.branches.push_back({i.addr, to, cycles, type, predicted, !predicted});
    };
    if (n % 4 != 3) {
      // in spin's loop: its back edge taken 1-4 times since the call
      s.ip = spin_back.target + (n % 2 ? 2 : 0);
      for (int k = 0; k < 1 + n % 4; ++k)
        add(spin_back, spin_back.target, static_cast<std::uint16_t>(5 + (n + k) % 4), 1, k != 2);
      add(call, call.target, static_cast<std::uint16_t>(2 + n % 3), 4, true);
    } else {
      // back in run after spin and the caller returned
      s.ip = run_call.next;
      add(caller_ret, run_call.next, 3, 6, true);
      add(spin_ret, call.next, static_cast<std::uint16_t>(4 + n % 5), 6, true);
      if (spin_exit.addr && n % 8 == 7) add(spin_exit, spin_exit.target, 0, 1, false);
      add(call, call.target, 2, 4, true);
    }
    add(run_call, run_call.target, static_cast<std::uint16_t>(10 + n % 7), 4, true);
    add(run_back, run_back.target, static_cast<std::uint16_t>(20 + n % 3), 1, n % 5 != 0);
    // a few in transactions, some of them aborted; some neither predicted
    // nor mispredicted
    if (n % 7 == 0) s.branches[0].in_tx = true, s.branches[0].abort = n % 14 == 0;
    if (n % 9 == 4) s.branches.back().predicted = s.branches.back().mispred = false;
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace perfkit::test
