#include "export/pprof.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include <map>
#include <string>
#include <vector>

#include "export/gzip.h"
#include "pprof.pb.h"  // generated from export/pprof.proto

namespace perfkit::exports {

namespace {

using profile::Index;
using profile::kNone;
namespace io = google::protobuf::io;

// Profile's field numbers (pprof.proto).
enum Field : int {
  kSampleType = 1,
  kSample = 2,
  kMapping = 3,
  kLocation = 4,
  kFunction = 5,
  kStringTable = 6,
  kDurationNanos = 10,
  kComment = 13,
  kDefaultSampleType = 14,
};

// A field's key on the wire: its number and wire type (0 varint, 2 bytes).
constexpr std::uint32_t kVarint = 0, kLengthDelimited = 2;
constexpr std::uint32_t tag(int field, std::uint32_t wire_type) {
  return (static_cast<std::uint32_t>(field) << 3) | wire_type;
}

// protobuf's copying stream into a GzipWriter (compressing on other cores).
class GzipStream : public io::CopyingOutputStream {
 public:
  explicit GzipStream(GzipWriter& out) : out_(out) {}
  bool Write(const void* buffer, int size) override {
    out_.write(buffer, static_cast<std::size_t>(size));
    return true;
  }

 private:
  GzipWriter& out_;
};

// The strings pprof needs beyond the profile's own: they follow the
// profile's table, so a profile string keeps its id.
class Strings {
 public:
  explicit Strings(const profile::StringTable& base) : base_(base) {}
  std::int64_t id(const std::string& s) {
    auto [it, fresh] = extra_.try_emplace(s, base_.size() + order_.size());
    if (fresh) order_.push_back(s);
    return static_cast<std::int64_t>(it->second);
  }
  const std::vector<std::string>& extra() const { return order_; }

 private:
  const profile::StringTable& base_;
  std::map<std::string, std::size_t> extra_;
  std::vector<std::string> order_;
};

class PprofWriter {
 public:
  PprofWriter(const profile::Profile& p, io::CodedOutputStream& out)
      : p_(p), out_(out), strings_(p.strings) {}

  void write() {
    choose_main_mapping();
    write_header();
    for (const profile::Thread& t : p_.threads) write_samples(t);
    write_functions();
    write_mappings();
    write_locations();
    for (Index i = 0; i < p_.strings.size(); ++i) write_string(p_.strings.at(i));
    for (const std::string& s : strings_.extra()) write_string(s);
  }

 private:
  template <class Message>
  void write_message(int field, const Message& m) {
    out_.WriteTag(tag(field, kLengthDelimited));
    out_.WriteVarint32(static_cast<std::uint32_t>(m.ByteSizeLong()));
    m.SerializeWithCachedSizes(&out_);
  }
  void write_string(std::string_view s) {
    out_.WriteTag(tag(kStringTable, kLengthDelimited));
    out_.WriteVarint32(static_cast<std::uint32_t>(s.size()));
    out_.WriteRaw(s.data(), static_cast<int>(s.size()));
  }
  void write_int(int field, std::int64_t v) {
    out_.WriteTag(tag(field, kVarint));
    out_.WriteVarint64(static_cast<std::uint64_t>(v));
  }

  void write_header() {
    const std::int64_t count = strings_.id("count");
    for (const profile::Event& e : p_.events) {
      const std::string name(p_.strings.at(e.name));
      for (const char* suffix : {"_sample", "_event"}) {
        pprof::ValueType vt;
        vt.set_type(strings_.id(name + suffix));
        vt.set_unit(count);
        write_message(kSampleType, vt);
      }
    }
    if (!p_.events.empty())
      write_int(kDefaultSampleType,
                strings_.id(std::string(p_.strings.at(p_.events[0].name)) + "_event"));
    const profile::Summary& s = p_.summary;
    if (s.last_time > s.first_time)
      write_int(kDurationNanos, static_cast<std::int64_t>(s.last_time - s.first_time));
    if (!s.cmdline.empty()) {
      std::string line;
      for (const std::string& arg : s.cmdline) line += (line.empty() ? "" : " ") + arg;
      write_int(kComment, strings_.id(line));
    }
    pid_ = strings_.id("pid");
    tid_ = strings_.id("tid");
    comm_ = strings_.id("comm");
    cpu_ = strings_.id("cpu");
    time_ = strings_.id("timestamp_ns");
    ns_ = strings_.id("nanoseconds");
  }

  void write_samples(const profile::Thread& t) {
    pprof::Sample s;
    const std::size_t nvalues = 2 * p_.events.size();
    for (std::size_t i = 0; i < t.size(); ++i) {
      s.Clear();
      if (t.stack[i] != kNone) append_locations(t.stack[i], *s.mutable_location_id());
      for (std::size_t v = 0; v < nvalues; ++v) s.add_value(0);
      s.set_value(2 * t.event[i], 1);
      s.set_value(2 * t.event[i] + 1, static_cast<std::int64_t>(t.weight[i]));
      add_label(s, pid_, t.pid);
      add_label(s, tid_, t.tid);
      auto* comm = s.add_label();
      comm->set_key(comm_);
      comm->set_str(t.comm[i]);
      if (t.cpu[i] >= 0) add_label(s, cpu_, t.cpu[i]);
      if (t.time[i]) add_label(s, time_, static_cast<std::int64_t>(t.time[i]))->set_num_unit(ns_);
      write_message(kSample, s);
    }
  }
  static pprof::Label* add_label(pprof::Sample& s, std::int64_t key, std::int64_t num) {
    auto* l = s.add_label();
    l->set_key(key);
    l->set_num(num);
    return l;
  }

  // The locations of `stack`, leaf first, computed once per stack.
  void append_locations(Index stack, google::protobuf::RepeatedField<std::uint64_t>& out) {
    if (stack >= stack_locs_.size()) stack_locs_.resize(p_.stacks.size(), {0, 0});
    auto& memo = stack_locs_[stack];
    if (memo.second == 0) {
      memo.first = static_cast<std::uint32_t>(loc_ids_.size());
      std::vector<Index> group;  // inlined frames, then the frame they are inlined in
      for (Index s = stack; s != kNone; s = p_.stacks[s].prefix) {
        const Index f = p_.stacks[s].frame;
        group.push_back(f);
        if (!p_.frames[f].inlined) {
          loc_ids_.push_back(location(group));
          group.clear();
        }
      }
      if (!group.empty()) loc_ids_.push_back(location(group));
      memo.second = static_cast<std::uint32_t>(loc_ids_.size() - memo.first);
    }
    for (std::uint32_t k = 0; k < memo.second; ++k) out.Add(loc_ids_[memo.first + k]);
  }
  std::uint64_t location(const std::vector<Index>& frames) {
    auto [it, fresh] = locations_.try_emplace(frames, locations_.size() + 1);
    if (fresh) location_order_.push_back(&it->first);
    return it->second;
  }

  void write_functions() {
    // A function's file: the first file one of its frames names.
    std::vector<Index> file(p_.funcs.size(), 0);
    for (const profile::Frame& f : p_.frames)
      if (f.file && !file[f.func]) file[f.func] = f.file;
    for (Index i = 0; i < p_.funcs.size(); ++i) {
      pprof::Function fn;
      fn.set_id(i + 1);
      fn.set_name(p_.funcs[i].name);
      fn.set_system_name(p_.funcs[i].name);
      fn.set_filename(file[i]);
      write_message(kFunction, fn);
    }
  }
  // pprof names its first mapping the profile's binary ("File:"): the user
  // DSO most samples landed in goes first, the others keep their order.
  void choose_main_mapping() {
    std::vector<std::uint64_t> leaves(p_.libs.size(), 0);
    for (const profile::Thread& t : p_.threads)
      for (Index s : t.stack)
        if (s != kNone) {
          const Index lib = p_.funcs[p_.frames[p_.stacks[s].frame].func].lib;
          if (lib != kNone && p_.libs[lib].kind == profile::LibKind::kUser) ++leaves[lib];
        }
    Index main = 0;
    for (Index i = 0; i < leaves.size(); ++i)
      if (leaves[i] > leaves[main]) main = i;
    mapping_id_.resize(p_.libs.size());
    for (Index i = 0; i < p_.libs.size(); ++i)
      mapping_id_[i] = i == main ? 1 : i < main ? i + 2 : i + 1;
  }

  void write_mappings() {
    bool lines = false;
    for (const profile::Frame& f : p_.frames) lines = lines || f.line;
    std::vector<Index> order(p_.libs.size());
    for (Index i = 0; i < p_.libs.size(); ++i) order[mapping_id_[i] - 1] = i;
    for (Index i : order) {
      pprof::Mapping m;
      m.set_id(mapping_id_[i]);
      m.set_filename(p_.libs[i].name);
      m.set_build_id(p_.libs[i].build_id);
      m.set_has_functions(true);
      m.set_has_filenames(lines);
      m.set_has_line_numbers(lines);
      m.set_has_inline_frames(true);
      write_message(kMapping, m);
    }
  }
  void write_locations() {
    for (std::size_t i = 0; i < location_order_.size(); ++i) {
      const std::vector<Index>& frames = *location_order_[i];
      const profile::Frame& outer = p_.frames[frames.back()];
      const Index lib = p_.funcs[outer.func].lib;
      pprof::Location loc;
      loc.set_id(i + 1);
      loc.set_mapping_id(lib == kNone ? 0 : mapping_id_[lib]);
      loc.set_address(outer.address);
      for (Index f : frames) {
        auto* line = loc.add_line();
        line->set_function_id(p_.frames[f].func + 1);
        line->set_line(p_.frames[f].line);
      }
      write_message(kLocation, loc);
    }
  }

  const profile::Profile& p_;
  io::CodedOutputStream& out_;
  Strings strings_;
  std::vector<std::uint64_t> mapping_id_;  // by lib
  std::int64_t pid_ = 0, tid_ = 0, comm_ = 0, cpu_ = 0, time_ = 0, ns_ = 0;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> stack_locs_;  // offset, count
  std::vector<std::uint64_t> loc_ids_;
  std::map<std::vector<Index>, std::uint64_t> locations_;
  std::vector<const std::vector<Index>*> location_order_;
};

}  // namespace

Status write_pprof(const profile::Profile& p, FdWriter& out) {
  // Level 1: pprof files are read once, and small next to the recording.
  GzipWriter zip(out, 1);
  GzipStream sink(zip);
  {
    io::CopyingOutputStreamAdaptor adaptor(&sink, 1 << 16);
    {
      io::CodedOutputStream coded(&adaptor);
      PprofWriter(p, coded).write();
    }
    adaptor.Flush();
  }
  if (auto st = zip.finish(); !st) return st.error().with_context(out.name());
  return out.status();
}

}  // namespace perfkit::exports
