#include "intelpt/itrace_options.h"

#include <cctype>

namespace perfkit::intelpt {

namespace {

constexpr std::uint32_t kMaxCallchain = 1024;
constexpr std::uint32_t kMaxLastBranch = 1024;

class Parser {
 public:
  explicit Parser(std::string_view s) : s_(s) {}
  bool done() const { return i_ >= s_.size(); }
  char peek() const { return done() ? '\0' : s_[i_]; }
  char get() { return done() ? '\0' : s_[i_++]; }
  char last() const { return i_ ? s_[i_ - 1] : '\0'; }
  void skip_separators() {
    while (peek() == ' ' || peek() == ',') ++i_;
  }
  bool digit() const { return std::isdigit(static_cast<unsigned char>(peek())); }
  std::uint64_t number() {
    std::uint64_t v = 0;
    while (digit()) v = v * 10 + static_cast<std::uint64_t>(get() - '0');
    return v;
  }
  // "+x-y..." after e and d: each flag a lower-case letter.
  bool flags(std::uint32_t& plus, std::uint32_t& minus) {
    while (peek() == '+' || peek() == '-') {
      char sign = get();
      char c = get();
      if (c < 'a' || c > 'z') return false;
      (sign == '+' ? plus : minus) |= ItraceOptions::flag(c);
    }
    return true;
  }

 private:
  std::string_view s_;
  std::size_t i_ = 0;
};

// i[N[unit]]: the period after 'i'. Returns false on a bad unit.
bool parse_period(Parser& p, ItraceOptions& o, bool& period_set, bool& type_set) {
  p.skip_separators();
  if (!p.digit()) return true;
  o.period = p.number();
  period_set = true;
  p.skip_separators();
  switch (p.get()) {
    case 'i':
      o.period_type = PeriodType::kInstructions;
      break;
    case 't':
      o.period_type = PeriodType::kTicks;
      break;
    case 'm':
      o.period *= 1000;
      [[fallthrough]];
    case 'u':
      o.period *= 1000;
      [[fallthrough]];
    case 'n':
      if (p.get() != 's') return false;
      o.period_type = PeriodType::kNanosecs;
      break;
    case '\0':
      return true;  // a bare number at the end: the default unit
    default:
      return false;
  }
  type_set = true;
  return true;
}

// g[N] and l[N]: an optional size in 1..max.
bool parse_size(Parser& p, std::uint32_t& size, std::uint32_t max) {
  p.skip_separators();
  if (!p.digit()) return true;
  std::uint64_t v = p.number();
  if (!v || v > max) return false;
  size = static_cast<std::uint32_t>(v);
  return true;
}

}  // namespace

ItraceOptions itrace_defaults(bool no_sample) {
  ItraceOptions o;
  o.set = true;
  o.branches = o.transactions = o.ptwrites = o.pwr_events = o.other_events = o.intr_events =
      o.errors = true;
  if (no_sample) {
    o.period_type = PeriodType::kInstructions;
    o.period = 1;
    o.calls = true;
  } else {
    o.instructions = true;
    o.period_type = PeriodType::kNanosecs;
    o.period = 100000;
  }
  return o;
}

Status parse_itrace(std::string_view str, bool no_sample, ItraceOptions& o) {
  o.set = true;
  if (str.empty()) {
    o = itrace_defaults(no_sample);
    return ok();
  }
  auto bad = [&] { return make_error("Bad Instruction Tracing options '{}'", str); };
  Parser p(str);
  bool period_set = false, type_set = false;
  while (!p.done()) {
    switch (p.get()) {
      case 'i':
        o.instructions = true;
        if (!parse_period(p, o, period_set, type_set)) return bad();
        break;
      case 'b':
        o.branches = true;
        break;
      case 'x':
        o.transactions = true;
        break;
      case 'w':
        o.ptwrites = true;
        break;
      case 'p':
        o.pwr_events = true;
        break;
      case 'o':
        o.other_events = true;
        break;
      case 'I':
        o.intr_events = true;
        break;
      case 'e':
        o.errors = true;
        if (!p.flags(o.error_plus_flags, o.error_minus_flags)) return bad();
        break;
      case 'd':
        o.log = true;
        if (!p.flags(o.log_plus_flags, o.log_minus_flags)) return bad();
        break;
      case 'c':
        o.branches = true;
        o.calls = true;
        break;
      case 'r':
        o.branches = true;
        o.returns = true;
        break;
      case 'g':
      case 'G':
        if (p.last() == 'g')
          o.callchain = true;
        else
          o.add_callchain = true;
        o.callchain_sz = 16;
        if (!parse_size(p, o.callchain_sz, kMaxCallchain)) return bad();
        break;
      case 'l':
      case 'L':
        if (p.last() == 'l')
          o.last_branch = true;
        else
          o.add_last_branch = true;
        o.last_branch_sz = 64;
        if (!parse_size(p, o.last_branch_sz, kMaxLastBranch)) return bad();
        break;
      case 's':
        p.skip_separators();
        if (p.digit()) o.initial_skip = p.number();
        break;
      case 'q':
        ++o.quick;
        break;
      case 'Z':
        o.timeless = true;
        break;
      case 'A':
        o.approx_ipc = true;
        break;
      case ' ':
      case ',':
        break;
      default:
        return bad();
    }
  }
  // As perf: whenever instructions are on, a string that gives no period
  // (or no unit) sets the default one, even over an earlier string's.
  if (o.instructions) {
    if (!type_set) o.period_type = PeriodType::kNanosecs;
    if (!period_set) o.period = 100000;
  }
  return ok();
}

std::string format_itrace(const ItraceOptions& o) {
  std::string s;
  if (o.instructions) {
    s += 'i';
    s += std::to_string(o.period);
    s += o.period_type == PeriodType::kInstructions ? "i"
         : o.period_type == PeriodType::kTicks      ? "t"
                                                    : "ns";
  }
  if (o.branches && !o.calls && !o.returns) s += 'b';
  if (o.calls) s += 'c';
  if (o.returns) s += 'r';
  if (o.transactions) s += 'x';
  if (o.ptwrites) s += 'w';
  if (o.pwr_events) s += 'p';
  if (o.other_events) s += 'o';
  if (o.intr_events) s += 'I';
  if (o.errors) {
    s += 'e';
    for (char c = 'a'; c <= 'z'; ++c) {
      if (o.error_plus_flags & ItraceOptions::flag(c)) s += {'+', c};
      if (o.error_minus_flags & ItraceOptions::flag(c)) s += {'-', c};
    }
  }
  if (o.log) s += 'd';
  if (o.callchain) s += "g" + std::to_string(o.callchain_sz);
  if (o.add_callchain) s += "G" + std::to_string(o.callchain_sz);
  if (o.last_branch) s += "l" + std::to_string(o.last_branch_sz);
  if (o.add_last_branch) s += "L" + std::to_string(o.last_branch_sz);
  if (o.initial_skip) s += "s" + std::to_string(o.initial_skip);
  for (int i = 0; i < o.quick; ++i) s += 'q';
  if (o.approx_ipc) s += 'A';
  if (o.timeless) s += 'Z';
  return s;
}

}  // namespace perfkit::intelpt
