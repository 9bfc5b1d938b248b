// perf report's option values: --sort/--fields key lists and -g/--call-graph.
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <string>

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

namespace {

// perf's -g words match as prefixes ("addr", "fol"), tried in its order:
// print types, orders, keys, values; the first word `t` begins is taken.
int prefix_of(std::string_view t, std::initializer_list<std::string_view> words) {
  int i = 0;
  for (std::string_view w : words) {
    if (w.starts_with(t)) return i;
    ++i;
  }
  return -1;
}

}  // namespace

Status parse_callchain_arg(std::string_view arg, ReportOptions& o) {
  int numbers = 0;
  o.chain_mode_given = true;
  while (!arg.empty()) {
    std::size_t comma = arg.find(',');
    std::string_view t = arg.substr(0, comma);
    arg = comma == std::string_view::npos ? std::string_view() : arg.substr(comma + 1);
    if (t.empty()) continue;
    static constexpr ChainMode kModes[] = {ChainMode::kGraphAbs, ChainMode::kFlat,
                                           ChainMode::kGraphRel, ChainMode::kFolded,
                                           ChainMode::kNone};
    static constexpr ChainKey kKeys[] = {ChainKey::kFunction, ChainKey::kAddress,
                                         ChainKey::kSrcline};
    static constexpr ChainValue kValues[] = {ChainValue::kPercent, ChainValue::kPeriod,
                                             ChainValue::kCount};
    if (int m = prefix_of(t, {"graph", "flat", "fractal", "folded", "none"}); m >= 0) {
      o.chain_mode = kModes[m];
    } else if (int r = prefix_of(t, {"caller", "callee"}); r >= 0) {
      o.caller_order = r == 0, o.order_given = true;
    } else if (int k = prefix_of(t, {"function", "address", "srcline", "branch"}); k >= 0) {
      if (k < 3) o.chain_key = kKeys[k];  // ("branch": the LBR call stack, taken as recorded)
    } else if (int v = prefix_of(t, {"percent", "period", "count"}); v >= 0) {
      o.chain_value = kValues[v];
    } else {
      std::string s(t);
      char* end = nullptr;
      double x = std::strtod(s.c_str(), &end);
      if (end == s.c_str() || *end) return make_error("-g: unknown callchain option '{}'", t);
      if (numbers++ == 0)
        o.chain_min_percent = x;
      else
        o.chain_print_limit = static_cast<std::uint32_t>(x);
    }
  }
  return ok();
}

}  // namespace perfkit::report
