// perf_event_attr printed field by field as perf's perf_event_attr__fprintf
// (perf 6.1): only non-zero fields, in its order and spelling.
#include <array>

#include "abi/perf_event.h"
#include "dump/header_print.h"

namespace perfkit::dump {

namespace {

using namespace perfkit::abi;

struct BitName {
  std::uint64_t bit;
  std::string_view name;
};

// perf's tables; its sample_type table lists IDENTIFIER before REGS_INTR and
// has no TRANSACTION.
constexpr std::array<BitName, 24> kSampleBits = {{
    {kSampleIp, "IP"},
    {kSampleTid, "TID"},
    {kSampleTime, "TIME"},
    {kSampleAddr, "ADDR"},
    {kSampleRead, "READ"},
    {kSampleCallchain, "CALLCHAIN"},
    {kSampleId, "ID"},
    {kSampleCpu, "CPU"},
    {kSamplePeriod, "PERIOD"},
    {kSampleStreamId, "STREAM_ID"},
    {kSampleRaw, "RAW"},
    {kSampleBranchStack, "BRANCH_STACK"},
    {kSampleRegsUser, "REGS_USER"},
    {kSampleStackUser, "STACK_USER"},
    {kSampleIdentifier, "IDENTIFIER"},
    {kSampleRegsIntr, "REGS_INTR"},
    {kSampleDataSrc, "DATA_SRC"},
    {kSampleWeight, "WEIGHT"},
    {kSamplePhysAddr, "PHYS_ADDR"},
    {kSampleAux, "AUX"},
    {kSampleCgroup, "CGROUP"},
    {kSampleDataPageSize, "DATA_PAGE_SIZE"},
    {kSampleCodePageSize, "CODE_PAGE_SIZE"},
    {kSampleWeightStruct, "WEIGHT_STRUCT"},
}};

constexpr std::array<BitName, 5> kReadFormatBits = {{
    {kFormatTotalTimeEnabled, "TOTAL_TIME_ENABLED"},
    {kFormatTotalTimeRunning, "TOTAL_TIME_RUNNING"},
    {kFormatId, "ID"},
    {kFormatGroup, "GROUP"},
    {kFormatLost, "LOST"},
}};

constexpr std::array<BitName, 19> kBranchBits = {{
    {kBranchUser, "USER"},
    {kBranchKernel, "KERNEL"},
    {kBranchHv, "HV"},
    {kBranchAny, "ANY"},
    {kBranchAnyCall, "ANY_CALL"},
    {kBranchAnyReturn, "ANY_RETURN"},
    {kBranchIndCall, "IND_CALL"},
    {kBranchAbortTx, "ABORT_TX"},
    {kBranchInTx, "IN_TX"},
    {kBranchNoTx, "NO_TX"},
    {kBranchCond, "COND"},
    {kBranchCallStack, "CALL_STACK"},
    {kBranchIndJump, "IND_JUMP"},
    {kBranchCall, "CALL"},
    {kBranchNoFlags, "NO_FLAGS"},
    {kBranchNoCycles, "NO_CYCLES"},
    {kBranchTypeSave, "TYPE_SAVE"},
    {kBranchHwIndex, "HW_INDEX"},
    {kBranchPrivSave, "PRIV_SAVE"},
}};

// The attr's flag bits in perf's order (the bitfield order).
constexpr std::array<BitName, 37> kFlagBits = {{
    {kAttrDisabled, "disabled"},
    {kAttrInherit, "inherit"},
    {kAttrPinned, "pinned"},
    {kAttrExclusive, "exclusive"},
    {kAttrExcludeUser, "exclude_user"},
    {kAttrExcludeKernel, "exclude_kernel"},
    {kAttrExcludeHv, "exclude_hv"},
    {kAttrExcludeIdle, "exclude_idle"},
    {kAttrMmap, "mmap"},
    {kAttrComm, "comm"},
    {kAttrFreq, "freq"},
    {kAttrInheritStat, "inherit_stat"},
    {kAttrEnableOnExec, "enable_on_exec"},
    {kAttrTask, "task"},
    {kAttrWatermark, "watermark"},
    {kAttrPreciseIpMask, "precise_ip"},
    {kAttrMmapData, "mmap_data"},
    {kAttrSampleIdAll, "sample_id_all"},
    {kAttrExcludeHost, "exclude_host"},
    {kAttrExcludeGuest, "exclude_guest"},
    {kAttrExcludeCallchainKernel, "exclude_callchain_kernel"},
    {kAttrExcludeCallchainUser, "exclude_callchain_user"},
    {kAttrMmap2, "mmap2"},
    {kAttrCommExec, "comm_exec"},
    {kAttrUseClockid, "use_clockid"},
    {kAttrContextSwitch, "context_switch"},
    {kAttrWriteBackward, "write_backward"},
    {kAttrNamespaces, "namespaces"},
    {kAttrKsymbol, "ksymbol"},
    {kAttrBpfEvent, "bpf_event"},
    {kAttrAuxOutput, "aux_output"},
    {kAttrCgroup, "cgroup"},
    {kAttrTextPoke, "text_poke"},
    {kAttrBuildId, "build_id"},
    {kAttrInheritThread, "inherit_thread"},
    {kAttrRemoveOnExec, "remove_on_exec"},
    {kAttrSigtrap, "sigtrap"},
}};

template <std::size_t N>
void format_bits(std::string& buf, std::uint64_t value, const std::array<BitName, N>& bits) {
  // Like perf, a value with no known bit leaves the buffer as the previous
  // field left it.
  std::string out;
  for (const auto& b : bits) {
    if (!(value & b.bit)) continue;
    if (!out.empty()) out += '|';
    out += b.name;
  }
  if (!out.empty()) buf = std::move(out);
}

}  // namespace

void for_each_attr_field(const abi::EventAttr& a,
                         const std::function<void(std::string_view, std::string_view)>& field) {
  std::string buf;
  auto hex = [&](std::string_view name, std::uint64_t v) {
    if (!v) return;
    buf = fmt::format("{:#x}", v);
    field(name, buf);
  };
  auto dec = [&](std::string_view name, std::uint64_t v) {
    if (!v) return;
    buf = fmt::format("{}", v);
    field(name, buf);
  };
  dec("type", a.type);
  dec("size", a.size);
  hex("config", a.config);
  dec("{ sample_period, sample_freq }", a.sample_period);
  if (a.sample_type) {
    format_bits(buf, a.sample_type, kSampleBits);
    field("sample_type", buf);
  }
  if (a.read_format) {
    format_bits(buf, a.read_format, kReadFormatBits);
    field("read_format", buf);
  }
  for (const auto& f : kFlagBits) {
    std::uint64_t v = a.flags & f.bit;
    if (f.bit == kAttrPreciseIpMask)
      v >>= kAttrPreciseIpShift;
    else
      v = v ? 1 : 0;
    dec(f.name, v);
  }
  dec("{ wakeup_events, wakeup_watermark }", a.wakeup_events);
  dec("bp_type", a.bp_type);
  hex("{ bp_addr, config1 }", a.config1);
  hex("{ bp_len, config2 }", a.config2);
  if (a.branch_sample_type) {
    format_bits(buf, a.branch_sample_type, kBranchBits);
    field("branch_sample_type", buf);
  }
  hex("sample_regs_user", a.sample_regs_user);
  dec("sample_stack_user", a.sample_stack_user);
  if (a.clockid) {
    buf = fmt::format("{}", a.clockid);
    field("clockid", buf);
  }
  hex("sample_regs_intr", a.sample_regs_intr);
  dec("aux_watermark", a.aux_watermark);
  dec("sample_max_stack", a.sample_max_stack);
  dec("aux_sample_size", a.aux_sample_size);
  dec("sig_data", a.sig_data);
}

}  // namespace perfkit::dump
