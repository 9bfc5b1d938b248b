#include "buildid/build_id_list.h"

#include "abi/perf_event.h"

namespace perfkit::buildid {

namespace {

class HitMarker : public session::SampleVisitor {
 public:
  Status on_sample(const session::ResolvedSample& s) override {
    if (s.loc.dso) s.loc.dso->hit = true;
    return ok();
  }
};

}  // namespace

Status list_build_ids(session::Session& session, bool with_hits, FdWriter& out) {
  auto& reader = session.reader();
  if (!reader.is_pipe() && reader.header().has_feature(abi::kFeatAuxtrace)) with_hits = false;
  // A stream has no feature bits when it is opened: perf then lists hits only.
  if (!reader.header().has_feature(abi::kFeatBuildId) || reader.is_pipe()) with_hits = true;
  if (with_hits || reader.is_pipe()) {
    session.set_callchains(false, false, 0);
    HitMarker m;
    PK_TRY(session.run(m));
  }
  // the host's DSOs, then each guest's (perf's machines__fprintf_dsos_buildid)
  std::vector<machine::Machine*> machines{&session.machine()};
  for (machine::Machine* g : session.guest_machines()) machines.push_back(g);
  for (const machine::Machine* m : machines)
    for (const auto& d : m->dsos()) {
      if (with_hits && !d.hit) continue;
      out.print("{:<40} {}\n", d.build_id.hex(), d.long_name);
    }
  return out.status();
}

}  // namespace perfkit::buildid
