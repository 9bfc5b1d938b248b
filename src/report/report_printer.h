// The --stdio printer of one event's entries (report_print.cc: headers,
// cells, entries, hierarchy; report_print_chain.cc: call graphs under the
// entries). Internal to report/.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "report/report_cells.h"
#include "report/report_hierarchy.h"
#include "report/report_impl.h"

namespace perfkit::report {

// perf's buffer for one column header or one call-graph frame's name
// (char bf[1024]): what is longer is cut to its size less one.
inline constexpr std::size_t kPerfNameBuf = 1024;

class Printer {
 public:
  Printer(Report& r, Hists& h, FdWriter& out) : r_(r), h_(h), out_(out) {
    sep_ = r.opts_.field_sep;
  }
  void print_block();
  // perf diff's rows: the lead columns, then the sort keys'.
  void print_lead_rows(const LeadColumns& lead, bool headers);

 private:
  // The columns' widths from `entries` (indexes into h_.entries).
  void compute_widths(const std::vector<std::uint32_t>& entries);
  void print_headers();
  const char* column_name(SortKey k) const;
  void print_entry(const Entry& e);
  void print_hierarchy();
  void print_hierarchy_headers(const Hierarchy& t);
  void print_node(const Hierarchy& t, std::uint32_t n);
  bool node_shown(const HierarchyNode& node) const;
  int key_cell(const Entry& e, const Column& c, char* buf, std::size_t cap) const;
  void hpp_cell(const Entry& e, const Column& c, bool first, bool last);
  void hpp_cell_separated(const Entry& e, SortKey k, std::size_t width, bool first, bool last);
  template <class F>
  void hpp_values(const Entry& e, SortKey k, F&& f) const;
  int ext_column(const Entry& e, SortKey k, int w, char* buf, std::size_t cap) const;
  int branch_cell(const Entry& e, SortKey k, int w, char* buf, std::size_t cap) const;
  void branch_widths(const Entry& e);
  void mem_widths(const Entry& e);
  void print_chain(const Entry& e);
  std::vector<std::uint32_t> sorted_children(std::uint32_t node, std::uint64_t min_hit) const;
  void graph(const std::vector<std::uint32_t>& kids, std::uint64_t total, int depth, int depth_mask,
             int margin);
  void value(std::uint64_t cumul, std::uint32_t count, std::uint64_t total);
  void flat_collect(std::uint32_t node, std::uint64_t min_hit, std::vector<std::uint32_t>& out);
  void print_path(std::uint32_t node, bool folded, bool& first);
  // A frame's name as perf prints it; valid until the next call.
  std::string_view entry_name(const ChainEntry& c, char* buf, std::size_t n) const;
  // --branch-history with branch stacks: frame `v` of `node`'s branch
  // counts after its name (perf's callchain_list_counts__printf_value).
  void branch_counts(std::uint32_t node, std::size_t v);
  mutable std::string inline_name_;
  std::vector<char> cell_;  // an entry line's cell
  const LeadColumns* lead_ = nullptr;
  std::string sep_;      // -t's field separator ("" none)
  std::size_t row_ = 0;  // the printed entry's position in h_.sorted
  std::string lead_cell_;

  Report& r_;
  Hists& h_;
  FdWriter& out_;
  std::vector<Column> cols_;
  std::uint64_t total_ = 0;            // for percentages of entries
  std::uint64_t min_hits_ = 0;         // graph (absolute) threshold
  std::vector<std::uint32_t> parent_;  // node -> parent, for flat and folded paths

 public:
  std::vector<std::uint64_t> member_totals_;
};

}  // namespace perfkit::report
