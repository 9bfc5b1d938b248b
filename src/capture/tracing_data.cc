#include "capture/tracing_data.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "base/bytes.h"

namespace perfkit::capture {

namespace fs = std::filesystem;

namespace {

void put_file(std::vector<std::uint8_t>& out, const std::string& text, int size_bytes) {
  if (size_bytes == 4)
    append<std::uint32_t>(out, static_cast<std::uint32_t>(text.size()));
  else
    append<std::uint64_t>(out, text.size());
  append_bytes(out, as_bytes(text));
}

// The events of `system` (directory order) that are recorded.
std::vector<std::string> recorded_in(const Tracefs& t, const std::string& system,
                                     const std::vector<Tracepoint>& tps) {
  std::vector<std::string> names;
  std::error_code ec;
  for (fs::directory_iterator it(t.root() + "/events/" + system, ec), end; !ec && it != end;
       it.increment(ec)) {
    std::string name = it->path().filename().string();
    for (const auto& tp : tps)
      if (tp.system == system && tp.name == name) {
        names.push_back(name);
        break;
      }
  }
  return names;
}

Status put_system(std::vector<std::uint8_t>& out, const Tracefs& t, const std::string& system,
                  const std::vector<std::string>& names) {
  append<std::uint32_t>(out, static_cast<std::uint32_t>(names.size()));
  for (const auto& n : names) {
    PK_ASSIGN(std::string format, t.event_format(system, n));
    put_file(out, format, 8);
  }
  return ok();
}

}  // namespace

Expected<std::vector<std::uint8_t>> build_tracing_data(const Tracefs& t,
                                                       const std::vector<Tracepoint>& tps) {
  std::vector<std::uint8_t> out;
  static constexpr std::uint8_t kMagic[] = {0x17, 0x08, 0x44, 't', 'r', 'a', 'c', 'i', 'n', 'g'};
  append_bytes(out, Bytes(kMagic, sizeof kMagic));
  append_bytes(out, as_bytes(std::string_view("0.6\0", 4)));
  out.push_back(kHostOrder == ByteOrder::kBig ? 1 : 0);
  out.push_back(static_cast<std::uint8_t>(sizeof(long)));
  append<std::uint32_t>(out, static_cast<std::uint32_t>(sysconf(_SC_PAGESIZE)));
  for (const char* header : {"header_page", "header_event"}) {
    PK_ASSIGN(std::string text, t.read(std::string("events/") + header));
    append_padded_string(out, header, 1);
    put_file(out, text, 8);
  }
  PK_TRY(put_system(out, t, "ftrace", recorded_in(t, "ftrace", tps)));
  std::vector<std::pair<std::string, std::vector<std::string>>> systems;
  std::error_code ec;
  for (fs::directory_iterator it(t.root() + "/events", ec), end; !ec && it != end;
       it.increment(ec)) {
    std::string system = it->path().filename().string();
    std::error_code dec;
    if (system == "ftrace" || !it->is_directory(dec)) continue;
    auto names = recorded_in(t, system, tps);
    if (!names.empty()) systems.emplace_back(system, std::move(names));
  }
  append<std::uint32_t>(out, static_cast<std::uint32_t>(systems.size()));
  for (const auto& [system, names] : systems) {
    append_padded_string(out, system, 1);
    PK_TRY(put_system(out, t, system, names));
  }
  // perf stores an empty kallsyms (readers take symbols from elsewhere).
  append<std::uint32_t>(out, 0);
  auto printk = t.read("printk_formats");
  auto cmdlines = t.read("saved_cmdlines");
  put_file(out, printk ? *printk : std::string(), 4);
  put_file(out, cmdlines ? *cmdlines : std::string(), 8);
  return out;
}

}  // namespace perfkit::capture
