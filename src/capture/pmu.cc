#include "capture/pmu.h"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <system_error>

#include "base/mapped_file.h"
#include "base/text.h"

namespace perfkit::capture {

namespace fs = std::filesystem;

unsigned FormatField::width() const {
  unsigned w = 0;
  for (const auto& r : ranges) w += r.hi - r.lo + 1;
  return w;
}

std::uint64_t FormatField::max_value() const {
  unsigned w = width();
  return w >= 64 ? ~0ULL : (1ULL << w) - 1;
}

const FormatField* Pmu::format(std::string_view term) const {
  for (const auto& f : formats)
    if (f.name == term) return &f;
  return nullptr;
}

const PmuEvent* Pmu::event(std::string_view name) const {
  for (const auto& e : events)
    if (iequals(e.name, name)) return &e;
  return nullptr;
}

Expected<FormatField> parse_format_field(std::string name, std::string_view text,
                                         std::string_view what) {
  FormatField f;
  f.name = std::move(name);
  text = trim(text);
  auto colon = text.find(':');
  auto bad = [&] { return make_error("{}: malformed format '{}'", what, text); };
  if (colon == std::string_view::npos) return bad();
  std::string_view word = text.substr(0, colon);
  if (word == "config")
    f.word = 0;
  else if (word == "config1")
    f.word = 1;
  else if (word == "config2")
    f.word = 2;
  else if (word == "config3")
    f.word = 3;
  else
    return make_error("{}: unknown config word '{}' in format '{}'", what, word, text);
  for (std::string_view part : split(text.substr(colon + 1), ',')) {
    auto dash = part.find('-');
    std::uint64_t lo = 0, hi = 0;
    if (!parse_u64(part.substr(0, dash), lo, 10)) return bad();
    hi = lo;
    if (dash != std::string_view::npos && !parse_u64(part.substr(dash + 1), hi, 10)) return bad();
    if (lo > hi || hi > 63) return bad();
    f.ranges.push_back({static_cast<unsigned>(lo), static_cast<unsigned>(hi)});
  }
  if (f.ranges.empty()) return bad();
  return f;
}

Status apply_format(const FormatField& field, std::uint64_t value, abi::EventAttr& attr) {
  if (value > field.max_value()) {
    std::string bits;
    for (const auto& r : field.ranges) {
      if (!bits.empty()) bits += ',';
      bits += r.lo == r.hi ? fmt::format("{}", r.lo) : fmt::format("{}-{}", r.lo, r.hi);
    }
    static constexpr std::string_view kWords[] = {"config", "config1", "config2", "config3"};
    return make_error("value {:#x} too big for format '{}' ({}:{}), maximum is {:#x}", value,
                      field.name, kWords[field.word], bits, field.max_value());
  }
  std::uint64_t* word = field.word == 0   ? &attr.config
                        : field.word == 1 ? &attr.config1
                        : field.word == 2 ? &attr.config2
                                          : &attr.config3;
  unsigned vbit = 0;
  for (const auto& r : field.ranges) {
    for (unsigned b = r.lo; b <= r.hi; ++b, ++vbit) {
      if (value & (1ULL << vbit))
        *word |= 1ULL << b;
      else
        *word &= ~(1ULL << b);
    }
  }
  return ok();
}

namespace {

std::vector<std::string> list_dir(const std::string& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    names.push_back(it->path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

std::optional<std::string> read_trimmed(const std::string& path) {
  auto t = read_text_file(path);
  if (!t) return std::nullopt;
  return std::string(trim(*t));
}

void load_events(const std::string& dir, Pmu& pmu) {
  for (const auto& name : list_dir(dir)) {
    // Suffixed files describe the event of the same name.
    if (name.find('.') != std::string::npos) continue;
    auto terms = read_trimmed(dir + "/" + name);
    if (!terms) continue;
    PmuEvent e;
    e.name = name;
    e.terms = *terms;
    if (auto unit = read_trimmed(dir + "/" + name + ".unit")) e.unit = *unit;
    if (auto scale = read_trimmed(dir + "/" + name + ".scale")) {
      double d = 0;
      auto [p, ec] = std::from_chars(scale->data(), scale->data() + scale->size(), d);
      if (ec == std::errc()) e.scale = d;
    }
    std::error_code ec;
    e.per_pkg = fs::exists(dir + "/" + name + ".per-pkg", ec);
    e.snapshot = fs::exists(dir + "/" + name + ".snapshot", ec);
    pmu.events.push_back(std::move(e));
  }
}

}  // namespace

Expected<Pmu> load_pmu(const std::string& dir, std::string name) {
  Pmu pmu;
  pmu.name = std::move(name);
  auto type = read_trimmed(dir + "/type");
  std::uint64_t t = 0;
  if (!type || !parse_u64(*type, t, 10) || t > 0xffffffffULL)
    return make_error("{}/type: missing or not a number", dir);
  pmu.type = static_cast<std::uint32_t>(t);
  for (const auto& f : list_dir(dir + "/format")) {
    auto text = read_trimmed(dir + "/format/" + f);
    if (!text) continue;
    auto field = parse_format_field(f, *text, dir + "/format/" + f);
    if (field) pmu.formats.push_back(std::move(*field));
  }
  load_events(dir + "/events", pmu);
  if (auto m = read_trimmed(dir + "/cpumask"))
    pmu.cpumask = *m;
  else if (auto c = read_trimmed(dir + "/cpus"))
    pmu.cpumask = *c;
  return pmu;
}

PmuCatalog PmuCatalog::load(const SystemPaths& paths) {
  std::vector<Pmu> pmus;
  const std::string root = paths.pmu_dir();
  for (const auto& name : list_dir(root)) {
    auto pmu = load_pmu(root + "/" + name, name);
    if (pmu) pmus.push_back(std::move(*pmu));
  }
  return from(std::move(pmus));
}

PmuCatalog PmuCatalog::from(std::vector<Pmu> pmus) {
  PmuCatalog c;
  c.pmus_ = std::move(pmus);
  std::sort(c.pmus_.begin(), c.pmus_.end(),
            [](const Pmu& a, const Pmu& b) { return a.name < b.name; });
  for (auto& p : c.pmus_)
    std::sort(p.events.begin(), p.events.end(),
              [](const PmuEvent& a, const PmuEvent& b) { return a.name < b.name; });
  return c;
}

const Pmu* PmuCatalog::find(std::string_view name) const {
  for (const auto& p : pmus_)
    if (p.name == name) return &p;
  return nullptr;
}

const Pmu* PmuCatalog::find_by_type(std::uint32_t type) const {
  for (const auto& p : pmus_)
    if (p.type == type) return &p;
  return nullptr;
}

const Pmu* PmuCatalog::core() const {
  if (const Pmu* p = find("cpu")) return p;
  return find("cpu_core");
}

}  // namespace perfkit::capture
