// inject --guest-data (perf-inject(1)): the side-band records of a
// recording made inside a VM (perf record --sample-identifier in the guest)
// merged into the host's recording of its hypervisor process, as perf's
// guest session does:
//   - the VM's VCPU threads are the hypervisor's threads named "CPU N/KVM"
//     (QEMU's -name debug-threads=on); a host context switch to one tells
//     which host CPU runs VCPU N from then on;
//   - each guest event becomes a host event of its own (its attr with
//     PERF_SAMPLE_IDENTIFIER, exclude_host, and new ids no host event uses),
//     described by an ID_INDEX record (cpu -1, the VCPU's thread, the
//     machine pid and the VCPU) ahead of the host's FINISHED_INIT;
//   - its MMAP, MMAP2, COMM, FORK, EXIT, LOST, SWITCH, KSYMBOL (out of
//     line code only) and TEXT_POKE records go in among the host's by time
//     (guest TSC less the offset, divided by the scale, in host time), with
//     a guest cpumode, the new id and the host CPU in their sample ids;
//   - the guest's build-ids join the host's table under the machine pid.
// perf 6.1's own implementation fails on every input ("failed to process
// type: 3 [Bad address]": its guest event buffer is never allocated), so
// this follows the documentation and the design, and perf reads the result.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/error.h"
#include "perfdata/event_set.h"
#include "perfdata/reader.h"
#include "perfdata/writer.h"

namespace perfkit::inject {

struct GuestData {
  std::string path;               // the guest's perf.data
  std::uint32_t machine_pid = 0;  // the hypervisor process on the host
  std::uint64_t time_offset = 0;  // guest TSC - host TSC (VMX TSC offset)
  double time_scale = 1;          // guest TSC / host TSC (VMX TSC multiplier)
};

// perf's --guest-data=PATH,PID[,OFFSET[,SCALE]]; perf's message when the
// path or a non-zero pid is missing, or the scale is 0.
Expected<GuestData> parse_guest_data(std::string_view arg);

struct TscConversion {
  std::uint64_t time_shift = 0, time_mult = 0, time_zero = 0;
  std::uint64_t time_cycles = 0, time_mask = 0;
  bool cap_user_time_zero = false, cap_user_time_short = false;
  std::uint64_t to_tsc(std::uint64_t ns) const;
  std::uint64_t to_time(std::uint64_t tsc) const;
};

class GuestInjector {
 public:
  // Reads the guest's recording and, from `host_path` (the host's, as a
  // file), its VCPU threads and time conversion. `guestmount`: perf's
  // --guestmount, under which the guest's directory (DIR/PID) must exist
  // for its build-ids. Errors: perf's (no VCPU thread, a VCPU seen twice,
  // guest events without ids or on an unknown VCPU), the readers'.
  static Expected<std::unique_ptr<GuestInjector>> create(const perfdata::Reader& host,
                                                         const std::string& host_path,
                                                         const GuestData& g,
                                                         const std::string& guestmount);
  // The host's events, then the guest's with their new ids.
  const perfdata::EventSet& events() const { return events_; }
  // Before the host record `rec` (delivered at `time`, kNoTimestamp for
  // one without) is written: FINISHED_INIT brings the ID_INDEX and the
  // guest records of time 0; side-band records and rounds the guest
  // records due by then; a context switch to a VCPU thread moves it.
  Status before(const perfdata::ReadRecord& rec, std::uint64_t time, perfdata::Writer& w);
  // The guest records left, after the host's last.
  Status finish(perfdata::Writer& w);
  // Appends the guest's build-ids to a HEADER_BUILD_ID table (misc
  // GUEST_KERNEL or GUEST_USER, pid the machine's).
  void add_build_ids(std::vector<std::uint8_t>& table) const;

 private:
  struct Stored {
    std::vector<std::uint8_t> bytes;  // the guest's record, its id sample removed
    std::uint64_t time = 0;           // in host time
    std::uint64_t id = 0;             // the guest's sample id
    std::uint32_t pid = 0, tid = 0, cpu = UINT32_MAX;
  };
  struct Mapped {
    std::uint64_t host_id = 0;
    std::uint32_t vcpu = 0;
  };
  struct Vcpu {
    std::uint32_t tid = 0, cpu = 0;
  };
  struct GuestBuildId {
    std::uint16_t misc = 0;
    std::vector<std::uint8_t> id;
    std::string name;
  };

  Status read_host(const std::string& host_path);
  Status read_guest(perfdata::Reader& guest);
  Status map_ids(const perfdata::Reader& host, const perfdata::Reader& guest);
  Status inject_until(std::uint64_t limit, perfdata::Writer& w);
  Status write_stored(const Stored& s, perfdata::Writer& w);
  void track_switch(const perfdata::ReadRecord& rec);
  std::vector<std::uint8_t> id_index() const;

  GuestData g_;
  const perfdata::Reader* host_ = nullptr;
  perfdata::EventSet events_;
  std::size_t host_events_ = 0;
  std::vector<Vcpu> vcpus_;
  std::unordered_map<std::uint32_t, std::uint32_t> vcpu_of_tid_;
  bool host_has_init_ = false;
  TscConversion host_tc_, guest_tc_;
  bool guest_has_tc_ = false, host_has_tc_ = false;
  std::unordered_map<std::uint64_t, std::uint32_t> guest_id_cpu_;  // ID_INDEX
  std::unordered_map<std::uint64_t, Mapped> mapped_;
  std::vector<Stored> stored_;  // in guest time order
  std::size_t next_ = 0;
  bool ready_ = false;
  std::uint64_t last_time_ = 0;  // of the last host record with a time
  std::vector<GuestBuildId> build_ids_;
  std::vector<std::uint8_t> buf_;
};

}  // namespace perfkit::inject
