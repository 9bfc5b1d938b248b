// The perf_event ABI as perfkit uses it: record types, sample and read format
// bits, attr flag bits, misc bits and header feature ids. Our own definitions
// (not <linux/perf_event.h>) so newer values exist whatever the build host has.
#pragma once

#include <cstdint>

namespace perfkit::abi {

// perf_event_header is 8 bytes: u32 type, u16 misc, u16 size.
inline constexpr std::uint32_t kHeaderSize = 8;

enum RecordType : std::uint32_t {
  kRecordMmap = 1,
  kRecordLost = 2,
  kRecordComm = 3,
  kRecordExit = 4,
  kRecordThrottle = 5,
  kRecordUnthrottle = 6,
  kRecordFork = 7,
  kRecordRead = 8,
  kRecordSample = 9,
  kRecordMmap2 = 10,
  kRecordAux = 11,
  kRecordItraceStart = 12,
  kRecordLostSamples = 13,
  kRecordSwitch = 14,
  kRecordSwitchCpuWide = 15,
  kRecordNamespaces = 16,
  kRecordKsymbol = 17,
  kRecordBpfEvent = 18,
  kRecordCgroup = 19,
  kRecordTextPoke = 20,
  kRecordAuxOutputHwId = 21,
  kRecordKernelTypeMax,

  kRecordUserTypeStart = 64,
  kRecordHeaderAttr = 64,
  kRecordHeaderEventType = 65,
  kRecordHeaderTracingData = 66,
  kRecordHeaderBuildId = 67,
  kRecordFinishedRound = 68,
  kRecordIdIndex = 69,
  kRecordAuxtraceInfo = 70,
  kRecordAuxtrace = 71,
  kRecordAuxtraceError = 72,
  kRecordThreadMap = 73,
  kRecordCpuMap = 74,
  kRecordStatConfig = 75,
  kRecordStat = 76,
  kRecordStatRound = 77,
  kRecordEventUpdate = 78,
  kRecordTimeConv = 79,
  kRecordHeaderFeature = 80,
  kRecordCompressed = 81,
  kRecordFinishedInit = 82,
  kRecordCompressed2 = 83,
  kRecordHeaderMax,
};

// sample_type bits (PERF_SAMPLE_*), in the order their fields appear.
enum SampleType : std::uint64_t {
  kSampleIp = 1ULL << 0,
  kSampleTid = 1ULL << 1,
  kSampleTime = 1ULL << 2,
  kSampleAddr = 1ULL << 3,
  kSampleRead = 1ULL << 4,
  kSampleCallchain = 1ULL << 5,
  kSampleId = 1ULL << 6,
  kSampleCpu = 1ULL << 7,
  kSamplePeriod = 1ULL << 8,
  kSampleStreamId = 1ULL << 9,
  kSampleRaw = 1ULL << 10,
  kSampleBranchStack = 1ULL << 11,
  kSampleRegsUser = 1ULL << 12,
  kSampleStackUser = 1ULL << 13,
  kSampleWeight = 1ULL << 14,
  kSampleDataSrc = 1ULL << 15,
  kSampleIdentifier = 1ULL << 16,
  kSampleTransaction = 1ULL << 17,
  kSampleRegsIntr = 1ULL << 18,
  kSamplePhysAddr = 1ULL << 19,
  kSampleAux = 1ULL << 20,
  kSampleCgroup = 1ULL << 21,
  kSampleDataPageSize = 1ULL << 22,
  kSampleCodePageSize = 1ULL << 23,
  kSampleWeightStruct = 1ULL << 24,
  kSampleMax = 1ULL << 25,
};
inline constexpr std::uint64_t kSampleWeightType = kSampleWeight | kSampleWeightStruct;

enum ReadFormat : std::uint64_t {
  kFormatTotalTimeEnabled = 1ULL << 0,
  kFormatTotalTimeRunning = 1ULL << 1,
  kFormatId = 1ULL << 2,
  kFormatGroup = 1ULL << 3,
  kFormatLost = 1ULL << 4,
  kFormatMax = 1ULL << 5,
};

// Bits of the attr flags word (the bitfield after read_format).
enum AttrFlag : std::uint64_t {
  kAttrDisabled = 1ULL << 0,
  kAttrInherit = 1ULL << 1,
  kAttrPinned = 1ULL << 2,
  kAttrExclusive = 1ULL << 3,
  kAttrExcludeUser = 1ULL << 4,
  kAttrExcludeKernel = 1ULL << 5,
  kAttrExcludeHv = 1ULL << 6,
  kAttrExcludeIdle = 1ULL << 7,
  kAttrMmap = 1ULL << 8,
  kAttrComm = 1ULL << 9,
  kAttrFreq = 1ULL << 10,
  kAttrInheritStat = 1ULL << 11,
  kAttrEnableOnExec = 1ULL << 12,
  kAttrTask = 1ULL << 13,
  kAttrWatermark = 1ULL << 14,
  kAttrPreciseIpShift = 15,  // two bits
  kAttrPreciseIpMask = 3ULL << 15,
  kAttrMmapData = 1ULL << 17,
  kAttrSampleIdAll = 1ULL << 18,
  kAttrExcludeHost = 1ULL << 19,
  kAttrExcludeGuest = 1ULL << 20,
  kAttrExcludeCallchainKernel = 1ULL << 21,
  kAttrExcludeCallchainUser = 1ULL << 22,
  kAttrMmap2 = 1ULL << 23,
  kAttrCommExec = 1ULL << 24,
  kAttrUseClockid = 1ULL << 25,
  kAttrContextSwitch = 1ULL << 26,
  kAttrWriteBackward = 1ULL << 27,
  kAttrNamespaces = 1ULL << 28,
  kAttrKsymbol = 1ULL << 29,
  kAttrBpfEvent = 1ULL << 30,
  kAttrAuxOutput = 1ULL << 31,
  kAttrCgroup = 1ULL << 32,
  kAttrTextPoke = 1ULL << 33,
  kAttrBuildId = 1ULL << 34,
  kAttrInheritThread = 1ULL << 35,
  kAttrRemoveOnExec = 1ULL << 36,
  kAttrSigtrap = 1ULL << 37,
};

// perf_event_attr.type
enum AttrType : std::uint32_t {
  kTypeHardware = 0,
  kTypeSoftware = 1,
  kTypeTracepoint = 2,
  kTypeHwCache = 3,
  kTypeRaw = 4,
  kTypeBreakpoint = 5,
};
// PERF_TYPE_SYNTH: perf's own type for the events it synthesizes from a trace
// (Intel PT's ptwrite, power events, psb); never given to the kernel.
inline constexpr std::uint32_t kAttrTypeSynth = 0x80000000u;

// perf_event_attr sizes by version.
inline constexpr std::uint32_t kAttrSizeVer0 = 64;
inline constexpr std::uint32_t kAttrSizeVer1 = 72;
inline constexpr std::uint32_t kAttrSizeVer2 = 80;
inline constexpr std::uint32_t kAttrSizeVer3 = 96;
inline constexpr std::uint32_t kAttrSizeVer4 = 104;
inline constexpr std::uint32_t kAttrSizeVer5 = 112;
inline constexpr std::uint32_t kAttrSizeVer6 = 120;
inline constexpr std::uint32_t kAttrSizeVer7 = 128;
inline constexpr std::uint32_t kAttrSizeVer8 = 136;
inline constexpr std::uint32_t kAttrSizeLatest = kAttrSizeVer8;

// perf_event_header.misc
enum Misc : std::uint16_t {
  kMiscCpumodeMask = 7,
  kMiscCpumodeUnknown = 0,
  kMiscKernel = 1,
  kMiscUser = 2,
  kMiscHypervisor = 3,
  kMiscGuestKernel = 4,
  kMiscGuestUser = 5,
  kMiscProcMapParseTimeout = 1 << 12,
  kMiscMmapData = 1 << 13,  // also COMM_EXEC and SWITCH_OUT_PREEMPT by record type
  kMiscCommExec = 1 << 13,
  kMiscForkExec = 1 << 13,
  kMiscSwitchOut = 1 << 13,
  kMiscExactIp = 1 << 14,  // also SWITCH_OUT_PREEMPT, MMAP_BUILD_ID by record type
  kMiscSwitchOutPreempt = 1 << 14,
  kMiscMmapBuildId = 1 << 14,
  kMiscExtReserved = 1 << 15,
};

// Special callchain context markers (PERF_CONTEXT_*).
enum CallchainContext : std::uint64_t {
  kContextHv = static_cast<std::uint64_t>(-32),
  kContextKernel = static_cast<std::uint64_t>(-128),
  kContextUser = static_cast<std::uint64_t>(-512),
  kContextGuest = static_cast<std::uint64_t>(-2048),
  kContextGuestKernel = static_cast<std::uint64_t>(-2176),
  kContextGuestUser = static_cast<std::uint64_t>(-2560),
  kContextMax = static_cast<std::uint64_t>(-4095),
};

// branch_sample_type bits that change the sample layout or meaning.
enum BranchSampleType : std::uint64_t {
  kBranchUser = 1ULL << 0,
  kBranchKernel = 1ULL << 1,
  kBranchHv = 1ULL << 2,
  kBranchAny = 1ULL << 3,
  kBranchAnyCall = 1ULL << 4,
  kBranchAnyReturn = 1ULL << 5,
  kBranchIndCall = 1ULL << 6,
  kBranchAbortTx = 1ULL << 7,
  kBranchInTx = 1ULL << 8,
  kBranchNoTx = 1ULL << 9,
  kBranchCond = 1ULL << 10,
  kBranchCallStack = 1ULL << 11,
  kBranchIndJump = 1ULL << 12,
  kBranchCall = 1ULL << 13,
  kBranchNoFlags = 1ULL << 14,
  kBranchNoCycles = 1ULL << 15,
  kBranchTypeSave = 1ULL << 16,
  kBranchHwIndex = 1ULL << 17,
  kBranchPrivSave = 1ULL << 18,
};

enum SampleRegsAbi : std::uint64_t { kRegsAbiNone = 0, kRegsAbi32 = 1, kRegsAbi64 = 2 };

// Header feature ids (HEADER_* bits of the 256-bit feature bitmap).
enum Feature : std::uint32_t {
  kFeatReserved = 0,
  kFeatTracingData = 1,
  kFeatBuildId = 2,
  kFeatHostname = 3,
  kFeatOsrelease = 4,
  kFeatVersion = 5,
  kFeatArch = 6,
  kFeatNrcpus = 7,
  kFeatCpudesc = 8,
  kFeatCpuid = 9,
  kFeatTotalMem = 10,
  kFeatCmdline = 11,
  kFeatEventDesc = 12,
  kFeatCpuTopology = 13,
  kFeatNumaTopology = 14,
  kFeatBranchStack = 15,
  kFeatPmuMappings = 16,
  kFeatGroupDesc = 17,
  kFeatAuxtrace = 18,
  kFeatStat = 19,
  kFeatCache = 20,
  kFeatSampleTime = 21,
  kFeatMemTopology = 22,
  kFeatClockid = 23,
  kFeatDirFormat = 24,
  kFeatBpfProgInfo = 25,
  kFeatBpfBtf = 26,
  kFeatCompressed = 27,
  kFeatCpuPmuCaps = 28,
  kFeatClockData = 29,
  kFeatHybridTopology = 30,
  kFeatPmuCaps = 31,
  kFeatLastKnown,
  kFeatBits = 256,
};

// PERF_AUXTRACE_* types in AUXTRACE_INFO.
enum AuxtraceType : std::uint32_t {
  kAuxtraceUnknown = 0,
  kAuxtraceIntelPt = 1,
  kAuxtraceIntelBts = 2,
  kAuxtraceCsEtm = 3,
  kAuxtraceArmSpe = 4,
  kAuxtraceS390Cpumsf = 5,
  kAuxtraceHisiPtt = 6,
};

}  // namespace perfkit::abi
