// The cells of perfkit report's --stdio lines: printf-style writes, the
// left-aligned and percentage cells, the column headers and widths perf
// gives each key, and perf's symbol cell. Shared by the flat and the
// hierarchy layouts (report_print.cc, report_hierarchy.cc).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "base/output.h"
#include "report/report.h"
#include "report/report_branch.h"

namespace perfkit::report {

// printf-style formatting into the writer (perf's formats are printf's).
template <class... A>
void outf(FdWriter& out, const char* fmt, A... a) {
  char buf[1024];
  int n = std::snprintf(buf, sizeof buf, fmt, a...);
  if (n < 0) return;
  if (static_cast<std::size_t>(n) >= sizeof buf) {
    std::string big(static_cast<std::size_t>(n) + 1, '\0');
    std::snprintf(big.data(), big.size(), fmt, a...);
    out.write(std::string_view(big.data(), static_cast<std::size_t>(n)));
    return;
  }
  out.write(std::string_view(buf, static_cast<std::size_t>(n)));
}

struct Column {
  SortKey key;
  std::size_t width;
  int user = 0;  // -w's width for it (0: none)
};

// -w's list as perf's perf_hpp__set_user_width reads it: strtol per comma,
// stopping at the first number not followed by a comma.
std::vector<int> parse_column_widths(std::string_view list);

// snprintf(buf, cap, "%-*.*s", w, w, s): left-aligned in `w`, cut at `w`,
// at most cap - 1 bytes stored; returns the untruncated length, as snprintf.
int put_left(char* buf, std::size_t cap, std::string_view s, int w);
// perf's get_percent_color: red from 5%, green above 0.5%, else none.
const char* percent_color(double p);
// printf's "%*.2f%%" in `width` after `lead`; with `color`, all of it in
// the percentage's colour (perf's percent_color_snprintf). Returns the
// characters shown (colour codes aside).
std::size_t put_percent(FdWriter& out, double p, const char* lead, int width = 6,
                        bool color = false);
// The column header perf gives key `k`.
const char* header_of(SortKey k);
// perf's _hist_entry__sym_snprintf: "[level] name" cut to the width (an
// object's name with its offset from `ip`), or the address when there is
// no symbol. Returns the untruncated length, as snprintf.
int sym_cell(char* buf, std::size_t cap, char level, std::string_view name, std::uint8_t type,
             bool inlined, std::uint64_t ip, std::uint64_t start_abs, int w);
// perf's _hist_entry__addr_snprintf (addr_from, addr_to): "[level] name"
// cut to the width, "+0xOFF" when not at its start (an object's offset
// from its unmapped start), or the address when there is no symbol.
int addr_cell(char* buf, std::size_t cap, char level, const BranchEnd& end, int w);
// perf's hpp column width of one event (perf_hpp__reset_width).
std::size_t hpp_len(SortKey k);
// Whether hpp column `k` prints a percentage (not a count).
bool is_percent(SortKey k);

}  // namespace perfkit::report
