#include "abi/names.h"

#include <array>

#include "abi/perf_event.h"

namespace perfkit::abi {

namespace {

constexpr std::array<std::string_view, kRecordKernelTypeMax> kKernelNames = {
    "TOTAL",        "MMAP",
    "LOST",         "COMM",
    "EXIT",         "THROTTLE",
    "UNTHROTTLE",   "FORK",
    "READ",         "SAMPLE",
    "MMAP2",        "AUX",
    "ITRACE_START", "LOST_SAMPLES",
    "SWITCH",       "SWITCH_CPU_WIDE",
    "NAMESPACES",   "KSYMBOL",
    "BPF_EVENT",    "CGROUP",
    "TEXT_POKE",    "AUX_OUTPUT_HW_ID",
};

constexpr std::array<std::string_view, kRecordHeaderMax - kRecordUserTypeStart> kUserNames = {
    "ATTR",      "EVENT_TYPE",    "TRACING_DATA", "BUILD_ID",       "FINISHED_ROUND",
    "ID_INDEX",  "AUXTRACE_INFO", "AUXTRACE",     "AUXTRACE_ERROR", "THREAD_MAP",
    "CPU_MAP",   "STAT_CONFIG",   "STAT",         "STAT_ROUND",     "EVENT_UPDATE",
    "TIME_CONV", "FEATURE",       "COMPRESSED",   "FINISHED_INIT",  "COMPRESSED2",
};

constexpr std::array<std::string_view, kFeatLastKnown> kFeatureNames = {
    "RESERVED",        "TRACING_DATA", "BUILD_ID",     "HOSTNAME",     "OSRELEASE",
    "VERSION",         "ARCH",         "NRCPUS",       "CPUDESC",      "CPUID",
    "TOTAL_MEM",       "CMDLINE",      "EVENT_DESC",   "CPU_TOPOLOGY", "NUMA_TOPOLOGY",
    "BRANCH_STACK",    "PMU_MAPPINGS", "GROUP_DESC",   "AUXTRACE",     "STAT",
    "CACHE",           "SAMPLE_TIME",  "MEM_TOPOLOGY", "CLOCKID",      "DIR_FORMAT",
    "BPF_PROG_INFO",   "BPF_BTF",      "COMPRESSED",   "CPU_PMU_CAPS", "CLOCK_DATA",
    "HYBRID_TOPOLOGY", "PMU_CAPS",
};

constexpr std::array<std::string_view, 25> kSampleBits = {
    "IP",
    "TID",
    "TIME",
    "ADDR",
    "READ",
    "CALLCHAIN",
    "ID",
    "CPU",
    "PERIOD",
    "STREAM_ID",
    "RAW",
    "BRANCH_STACK",
    "REGS_USER",
    "STACK_USER",
    "WEIGHT",
    "DATA_SRC",
    "IDENTIFIER",
    "TRANSACTION",
    "REGS_INTR",
    "PHYS_ADDR",
    "AUX",
    "CGROUP",
    "DATA_PAGE_SIZE",
    "CODE_PAGE_SIZE",
    "WEIGHT_STRUCT",
};

constexpr std::array<std::string_view, 5> kReadBits = {
    "TOTAL_TIME_ENABLED", "TOTAL_TIME_RUNNING", "ID", "GROUP", "LOST",
};

template <std::size_t N>
std::string join_bits(std::uint64_t value, const std::array<std::string_view, N>& names) {
  std::string out;
  for (unsigned bit = 0; bit < 64; ++bit) {
    if (!(value & (1ULL << bit))) continue;
    if (!out.empty()) out += '|';
    if (bit < N)
      out += names[bit];
    else
      out += "(unknown)";
  }
  return out;
}

}  // namespace

std::string_view record_type_name(std::uint32_t type) {
  if (type < kKernelNames.size()) return kKernelNames[type];
  if (type >= kRecordUserTypeStart && type - kRecordUserTypeStart < kUserNames.size())
    return kUserNames[type - kRecordUserTypeStart];
  return {};
}

std::string_view feature_name(std::uint32_t feature) {
  return feature < kFeatureNames.size() ? kFeatureNames[feature] : std::string_view{};
}

std::string_view sample_type_bit_name(unsigned bit) {
  return bit < kSampleBits.size() ? kSampleBits[bit] : std::string_view{};
}

std::string_view read_format_bit_name(unsigned bit) {
  return bit < kReadBits.size() ? kReadBits[bit] : std::string_view{};
}

std::string sample_type_string(std::uint64_t v) { return join_bits(v, kSampleBits); }
std::string read_format_string(std::uint64_t v) { return join_bits(v, kReadBits); }

std::string_view perf_record_name(std::uint32_t type) {
  auto name = record_type_name(type);
  if (!name.empty()) return name;
  return type < kRecordHeaderMax ? "UNKNOWN" : "INVALID";
}

}  // namespace perfkit::abi
