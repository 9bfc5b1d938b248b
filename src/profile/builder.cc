#include "profile/builder.h"

#include "abi/registers.h"
#include "perfdata/features.h"
#include "profile/builder_impl.h"
#include "session/unwind_callchain.h"

namespace perfkit::profile {

namespace detail {

LibKind lib_kind(machine::DsoKind k) {
  switch (k) {
    case machine::DsoKind::kUser:
      return LibKind::kUser;
    case machine::DsoKind::kKernel:
      return LibKind::kKernel;
    case machine::DsoKind::kModule:
      return LibKind::kModule;
    case machine::DsoKind::kVdso:
      return LibKind::kVdso;
    default:
      return LibKind::kOther;
  }
}

// Gives the threads of `p` that have samples their markers.
void attach_markers(Profile& p, MarkerMap& markers) {
  for (auto& [key, list] : markers) {
    const Index t = p.find_thread(static_cast<std::int32_t>(key >> 32),
                                  static_cast<std::int32_t>(key & 0xFFFFFFFF));
    if (t != kNone) p.threads[t].markers = std::move(list);
  }
}

// The answers of a LineWorker into the frames asked for (kNone: a frame
// made before its location was met); "file:line" texts without a line
// ("??:0", "lib.so[1a2b]") give none.
void set_frame_lines(Profile& p, const std::vector<std::string>& texts,
                     const std::vector<Index>& frames) {
  for (std::size_t k = 0; k < texts.size() && k < frames.size(); ++k) {
    std::string_view text = texts[k];
    const std::size_t colon = text.rfind(':');
    if (colon == std::string_view::npos || colon == 0 || colon + 1 == text.size()) continue;
    std::uint32_t line = 0;
    bool digits = true;
    for (char c : text.substr(colon + 1)) {
      digits = digits && c >= '0' && c <= '9';
      line = line * 10 + static_cast<std::uint32_t>(c - '0');
    }
    if (!digits || line == 0 || text.starts_with("??") || frames[k] == kNone) continue;
    Frame& f = p.frames[frames[k]];
    f.file = p.strings.intern(text.substr(0, colon));
    f.line = line;
  }
}

void prepare_session(session::Session& session, const ProfileOptions& opts) {
  session.set_callchains(opts.callchains, false, opts.max_stack);
  if (!opts.callchains) return;
  perfdata::Reader& r = session.reader();
  perfdata::Features arch;
  if (auto blob = r.feature(abi::kFeatArch))
    (void)perfdata::parse_feature(abi::kFeatArch, blob->data, r.swapped(), blob->offset, arch);
  const std::string a = abi::normalize_arch(arch.arch.value_or(""));
  session::UnwindOptions uo;
  uo.inline_frames = opts.inline_frames;
  uo.unwind_arch = a.empty() || a == "x86";
  session.set_unwinder(session::make_dwarf_unwinder(session.symbolizer(), uo));
}

}  // namespace detail

Expected<Profile> build_profile(session::Session& session, const ProfileOptions& opts) {
  detail::Builder b(session, opts);
  PK_TRY(b.prepare());
  detail::prepare_session(session, opts);
  PK_TRY(session.run(b));
  return b.take();
}

}  // namespace perfkit::profile
