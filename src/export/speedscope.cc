#include "export/speedscope.h"

#include <vector>

#include "export/json.h"

namespace perfkit::exports {

namespace {

using profile::Index;
using profile::kNone;

void write_frames(const profile::Profile& p, FdWriter& out) {
  auto& buf = out.buffer();
  buf.append(std::string_view("\"shared\":{\"frames\":["));
  // A function's source file where one of its frames knows it.
  std::vector<const profile::Frame*> sourced(p.funcs.size(), nullptr);
  for (const profile::Frame& f : p.frames)
    if (f.file && !sourced[f.func]) sourced[f.func] = &f;
  for (Index i = 0; i < p.funcs.size(); ++i) {
    const profile::Func& fn = p.funcs[i];
    buf.append(std::string_view(i ? ",{\"name\":" : "{\"name\":"));
    json_string(buf, p.strings.at(fn.name));
    if (sourced[i]) {
      buf.append(std::string_view(",\"file\":"));
      json_string(buf, p.strings.at(sourced[i]->file));
      fmt::format_to(std::back_inserter(buf), ",\"line\":{}", sourced[i]->line);
    } else if (fn.lib != kNone) {
      buf.append(std::string_view(",\"file\":"));
      json_string(buf, p.strings.at(p.libs[fn.lib].name));
    }
    buf.push_back('}');
    out.maybe_flush();
  }
  buf.append(std::string_view("]}"));
}

// The frame lists of stacks ("[root,...,leaf]"), made once per stack.
class StackText {
 public:
  explicit StackText(const profile::Profile& p) : p_(p), text_(p.stacks.size()) {}
  const std::string& operator()(Index stack) {
    static const std::string kEmpty = "[]";
    if (stack == kNone) return kEmpty;
    std::string& t = text_[stack];
    if (t.empty()) {
      p_.frames_of(stack, frames_);
      t.push_back('[');
      for (std::size_t i = 0; i < frames_.size(); ++i)
        fmt::format_to(std::back_inserter(t), "{}{}", i ? "," : "", p_.frames[frames_[i]].func);
      t.push_back(']');
    }
    return t;
  }

 private:
  const profile::Profile& p_;
  std::vector<std::string> text_;
  std::vector<Index> frames_;
};

// One sampled profile: the samples of thread `t` for event `e`.
void write_profile(const profile::Profile& p, const profile::Thread& t, std::uint16_t e,
                   StackText& stacks, bool first, FdWriter& out) {
  auto& buf = out.buffer();
  std::uint64_t total = 0;
  for (std::size_t i = 0; i < t.size(); ++i)
    if (t.event[i] == e) total += t.weight[i];
  const std::string_view event = p.strings.at(p.events[e].name);
  buf.append(std::string_view(first ? "{\"type\":\"sampled\",\"name\":"
                                    : ",{\"type\":\"sampled\",\"name\":"));
  json_string(buf, fmt::format("{} ({}/{}) {}", p.strings.at(t.name), t.pid, t.tid, event));
  fmt::format_to(std::back_inserter(buf),
                 ",\"unit\":\"{}\",\"startValue\":0,\"endValue\":{},\"samples\":[",
                 clock_event(event) ? "nanoseconds" : "none", total);
  std::vector<std::uint64_t> weights;
  Index last = kNone - 1;
  for (std::size_t i = 0; i < t.size(); ++i) {
    if (t.event[i] != e) continue;
    if (t.stack[i] == last && !weights.empty()) {
      weights.back() += t.weight[i];
      continue;
    }
    last = t.stack[i];
    if (!weights.empty()) buf.push_back(',');
    buf.append(stacks(t.stack[i]));
    weights.push_back(t.weight[i]);
    out.maybe_flush();
  }
  buf.append(std::string_view("],\"weights\":["));
  for (std::size_t i = 0; i < weights.size(); ++i) {
    fmt::format_to(std::back_inserter(buf), "{}{}", i ? "," : "", weights[i]);
    out.maybe_flush();
  }
  buf.append(std::string_view("]}"));
}

}  // namespace

bool clock_event(std::string_view event) {
  const std::string_view base = event.substr(0, event.find(':'));
  return base == "cpu-clock" || base == "task-clock";
}

Status write_speedscope(const profile::Profile& p, const SpeedscopeOptions& o, FdWriter& out) {
  auto& buf = out.buffer();
  buf.append(std::string_view(
      "{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",\"name\":"));
  json_string(buf, o.name.empty() ? "perf.data" : o.name);
  buf.append(std::string_view(",\"exporter\":"));
  json_string(buf, o.exporter);
  buf.append(std::string_view(",\"activeProfileIndex\":0,"));
  write_frames(p, out);
  buf.append(std::string_view(",\"profiles\":["));
  StackText stacks(p);
  bool first = true;
  for (const profile::Thread& t : p.threads) {
    std::vector<bool> has(p.events.size(), false);
    for (std::uint16_t e : t.event) has[e] = true;
    for (std::uint16_t e = 0; e < p.events.size(); ++e)
      if (has[e]) {
        write_profile(p, t, e, stacks, first, out);
        first = false;
      }
  }
  buf.append(std::string_view("]}\n"));
  return out.flush();
}

}  // namespace perfkit::exports
