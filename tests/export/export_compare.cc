#include "export/export_compare.h"

#include <gtest/gtest.h>

#include <sstream>

#include "support/test_support.h"

namespace perfkit::test {

std::string pt_recording(const std::string& dir) {
  const std::string pt = dir + "/pt.data";
  auto rec = run(perfkit_bin() + " pt-synth -o " + sh(pt) + " -- " +
                 sh(std::string(PERFKIT_PT_WORKLOAD_DIR) + "/ptflow-static") + " 5 2>&1");
  EXPECT_EQ(rec.status, 0) << rec.out;
  return pt;
}

ReportTotals report_totals(const std::string& file, const std::string& extra,
                           const std::string& binary) {
  auto r = run((binary.empty() ? perfkit_bin() : binary) + " report --stdio -i " + sh(file) +
               " --no-children -g none --sort sym -F sample,period,sym " + extra + " 2>/dev/null");
  EXPECT_EQ(r.status, 0) << file;
  ReportTotals totals;
  std::map<std::string, SymbolTotals>* event = nullptr;
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);) {
    const std::string mark = "# Samples: ";
    if (line.rfind(mark, 0) == 0) {
      const auto q = line.find(" of event '");
      event = &totals[line.substr(q + 11, line.rfind('\'') - q - 11)];
      continue;
    }
    if (line.empty() || line[0] == '#' || !event) continue;
    std::istringstream row(line);
    SymbolTotals t;
    std::string level, name;
    row >> t.samples >> t.period >> level;
    std::getline(row, name);
    name = name.substr(name.find_first_not_of(' '));
    if (name.rfind("0x", 0) == 0) name = "[unknown]";
    auto& sum = (*event)[name];
    sum.samples += t.samples;
    sum.period += t.period;
  }
  return totals;
}

SymbolTotals event_totals(const std::map<std::string, SymbolTotals>& symbols) {
  SymbolTotals t;
  for (const auto& [name, s] : symbols) {
    t.samples += s.samples;
    t.period += s.period;
  }
  return t;
}

}  // namespace perfkit::test
