// perf report's option values: --sort/--fields key lists and -g/--call-graph.
#include <charconv>
#include <cstring>

#include "report/report.h"
#include "report/report_branch.h"
#include "report/report_keys.h"

namespace perfkit::report {

using namespace perfkit::abi;

namespace {

// The weight, memory and other sample keys by their --sort names.
const SortKey* weight_or_mem_key(std::string_view k) {
  static constexpr std::pair<std::string_view, SortKey> kKeys[] = {
      {"local_weight", SortKey::kLocalWeight},
      {"weight", SortKey::kWeight},
      {"local_ins_lat", SortKey::kLocalInsLat},
      {"ins_lat", SortKey::kInsLat},
      {"symbol_daddr", SortKey::kSymDaddr},
      {"symbol_iaddr", SortKey::kSymIaddr},
      {"dso_daddr", SortKey::kDsoDaddr},
      {"locked", SortKey::kLocked},
      {"tlb", SortKey::kTlb},
      {"mem", SortKey::kMem},
      {"snoop", SortKey::kSnoop},
      {"blocked", SortKey::kBlocked},
      {"phys_daddr", SortKey::kPhysDaddr},
      {"data_page_size", SortKey::kDataPageSize},
      {"dcacheline", SortKey::kDcacheline},
      {"symbol_size", SortKey::kSymSize},
      {"dso_size", SortKey::kDsoSize},
      {"addr", SortKey::kAddr},
      {"code_page_size", SortKey::kCodePageSize},
      {"transaction", SortKey::kTransaction},
      {"cgroup", SortKey::kCgroup},
      {"cgroup_id", SortKey::kCgroupId},
  };
  for (const auto& [name, key] : kKeys)
    if (name == k) return &key;
  return nullptr;
}

}  // namespace

Expected<std::vector<SortKey>> parse_sort_keys(std::string_view list, std::string_view option) {
  std::vector<SortKey> keys;
  while (!list.empty()) {
    std::size_t comma = list.find_first_of(", ");  // perf's strtok separators
    std::string_view k = list.substr(0, comma);
    list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
    if (k.empty()) continue;
    if (k == "comm")
      keys.push_back(SortKey::kComm);
    else if (k == "pid" || k == "tid")
      keys.push_back(SortKey::kPid);
    else if (k == "dso")
      keys.push_back(SortKey::kDso);
    else if (k == "sym" || k == "symbol")
      keys.push_back(SortKey::kSym);
    else if (k == "cpu")
      keys.push_back(SortKey::kCpu);
    else if (k == "symoff")
      keys.push_back(SortKey::kSymoff);
    else if (k == "socket")
      keys.push_back(SortKey::kSocket);
    else if (k == "parent")
      keys.push_back(SortKey::kParent);
    else if (k == "time")
      keys.push_back(SortKey::kTime);
    else if (k == "period")
      keys.push_back(SortKey::kPeriod);
    else if (k == "srcline")
      keys.push_back(SortKey::kSrcline);
    else if (k == "srcfile")
      keys.push_back(SortKey::kSrcfile);
    else if (k == "trace")
      keys.push_back(SortKey::kTrace);
    else if (k == "dso_from")
      keys.push_back(SortKey::kDsoFrom);
    else if (k == "dso_to")
      keys.push_back(SortKey::kDsoTo);
    else if (k == "symbol_from")
      keys.push_back(SortKey::kSymFrom);
    else if (k == "symbol_to")
      keys.push_back(SortKey::kSymTo);
    else if (k == "cycles")
      keys.push_back(SortKey::kCycles);
    else if (k == "mispredict")
      keys.push_back(SortKey::kMispredict);
    else if (k == "in_tx")
      keys.push_back(SortKey::kInTx);
    else if (k == "abort")
      keys.push_back(SortKey::kAbort);
    else if (k == "addr_from")
      keys.push_back(SortKey::kAddrFrom);
    else if (k == "addr_to")
      keys.push_back(SortKey::kAddrTo);
    else if (k == "srcline_from")
      keys.push_back(SortKey::kSrclineFrom);
    else if (k == "srcline_to")
      keys.push_back(SortKey::kSrclineTo);
    else if (k == "overhead")
      keys.push_back(SortKey::kOverhead);
    else if (k == "overhead_children")
      keys.push_back(SortKey::kOverheadChildren);
    else if (k == "overhead_sys")
      keys.push_back(SortKey::kOverheadSys);
    else if (k == "overhead_us")
      keys.push_back(SortKey::kOverheadUs);
    else if (k == "overhead_guest_sys")
      keys.push_back(SortKey::kOverheadGuestSys);
    else if (k == "overhead_guest_us")
      keys.push_back(SortKey::kOverheadGuestUs);
    else if (k == "sample")
      keys.push_back(SortKey::kSample);
    else if (const SortKey* m = weight_or_mem_key(k))
      keys.push_back(*m);
    else if (k == "local_p_stage_cyc" || k == "p_stage_cyc")
      continue;  // powerpc's: perf elsewhere skips them without a word
    else
      return make_error("Unknown --{} key: `{}'", option, k);
  }
  return keys;
}

Status parse_callchain_arg(std::string_view arg, ReportOptions& o) {
  int numbers = 0;
  o.chain_mode_given = true;
  while (!arg.empty()) {
    std::size_t comma = arg.find(',');
    std::string_view t = arg.substr(0, comma);
    arg = comma == std::string_view::npos ? std::string_view() : arg.substr(comma + 1);
    if (t.empty()) continue;
    if (t == "graph")
      o.chain_mode = ChainMode::kGraphAbs;
    else if (t == "fractal")
      o.chain_mode = ChainMode::kGraphRel;
    else if (t == "flat")
      o.chain_mode = ChainMode::kFlat;
    else if (t == "folded")
      o.chain_mode = ChainMode::kFolded;
    else if (t == "none")
      o.chain_mode = ChainMode::kNone;
    else if (t == "caller")
      o.caller_order = true, o.order_given = true;
    else if (t == "callee")
      o.caller_order = false, o.order_given = true;
    else if (t == "function" || t == "address" || t == "branch")
      continue;
    else if (t == "percent")
      o.chain_value = ChainValue::kPercent;
    else if (t == "period")
      o.chain_value = ChainValue::kPeriod;
    else if (t == "count")
      o.chain_value = ChainValue::kCount;
    else {
      std::string s(t);
      char* end = nullptr;
      double v = std::strtod(s.c_str(), &end);
      if (end == s.c_str() || *end) return make_error("-g: unknown callchain option '{}'", t);
      if (numbers++ == 0)
        o.chain_min_percent = v;
      else
        o.chain_print_limit = static_cast<std::uint32_t>(v);
    }
  }
  return ok();
}

}  // namespace perfkit::report
