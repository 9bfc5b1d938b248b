#include "export/pprof.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "export/gzip.h"
#include "pprof.pb.h"  // generated from export/pprof.proto

namespace perfkit::exports {

namespace {

using profile::Index;
using profile::kNone;

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
  PprofWriter(const profile::Profile& p, GzipWriter& out) : p_(p), out_(out), strings_(p.strings) {}

  void write() {
    choose_main_mapping();
    write_header();
    write_samples();
    write_functions();
    write_mappings();
    write_locations();
    for (Index i = 0; i < p_.strings.size(); ++i) write_string(p_.strings.at(i));
    for (const std::string& s : strings_.extra()) write_string(s);
  }

 private:
  template <class Message>
  void write_message(int field, const Message& m) {
    m.SerializeToString(&scratch_);
    write_bytes(field, scratch_);
  }
  // A length-delimited field, written straight into the compressor.
  void write_bytes(int field, std::string_view bytes) {
    std::uint8_t key[20];
    std::uint8_t* k = put_varint(put_varint(key, tag(field, kLengthDelimited)), bytes.size());
    out_.write(key, static_cast<std::size_t>(k - key));
    out_.write(bytes.data(), bytes.size());
  }
  void write_string(std::string_view s) { write_bytes(kStringTable, s); }
  void write_int(int field, std::int64_t v) {
    std::uint8_t bytes[20];
    std::uint8_t* b =
        put_varint(put_varint(bytes, tag(field, kVarint)), static_cast<std::uint64_t>(v));
    out_.write(bytes, static_cast<std::size_t>(b - bytes));
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
    nvalues_ = 2 * p_.events.size();
    pid_ = strings_.id("pid");
    tid_ = strings_.id("tid");
    comm_ = strings_.id("comm");
    cpu_ = strings_.id("cpu");
    time_ = strings_.id("timestamp_ns");
    ns_ = strings_.id("nanoseconds");
  }

  // A run of one thread's samples.
  struct Range {
    const profile::Thread* thread;
    std::size_t begin, end;
  };
  // Samples are most of a profile: they are encoded in blocks of about
  // kBlock samples on the compressor's workers, each block a gzip member
  // (the blocks depend on the sample counts only: the file is the same for
  // any number of workers). Their stacks' locations are numbered first,
  // here, so that the workers only read.
  void write_samples() {
    for (const profile::Thread& t : p_.threads)
      for (Index s : t.stack)
        if (s != kNone) packed_locations(s);
    constexpr std::size_t kBlock = 1 << 15;
    std::vector<Range> block;
    std::size_t in_block = 0;
    auto flush = [&] {
      out_.write_deferred([this, ranges = std::move(block)] { return encode_samples(ranges); });
      block.clear();
      in_block = 0;
    };
    for (const profile::Thread& t : p_.threads)
      for (std::size_t at = 0; at < t.size();) {
        const std::size_t take = std::min(t.size() - at, kBlock - in_block);
        block.push_back({&t, at, at + take});
        at += take, in_block += take;
        if (in_block == kBlock) flush();
      }
    if (in_block) flush();
  }
  // The samples of `ranges`, field by field as protobuf's generated code
  // writes them (zero scalars left out), which measured 3x faster than
  // filling a pprof::Sample for each.
  ByteBuffer encode_samples(const std::vector<Range>& ranges) const {
    ByteBuffer out;
    // Room for what such samples take (their locations, some 80 bytes of
    // values and labels), so that the buffer seldom grows.
    std::size_t estimate = 0;
    for (const Range& r : ranges)
      for (std::size_t i = r.begin; i < r.end; ++i)
        estimate += 80 + (r.thread->stack[i] != kNone ? stack_locs_[r.thread->stack[i]].second : 0);
    out.resize(estimate);
    std::size_t used = 0;
    for (const Range& r : ranges) {
      const profile::Thread& t = *r.thread;
      // The thread's labels are the same for each of its samples.
      std::uint8_t thread_labels[2 * 50];
      std::uint8_t* const thread_end =
          put_label(put_label(thread_labels, pid_, 0, t.pid), tid_, 0, t.tid);
      const auto thread_size = static_cast<std::size_t>(thread_end - thread_labels);
      for (std::size_t i = r.begin; i < r.end; ++i) {
        std::pair<std::uint32_t, std::uint32_t> locs{0, 0};
        if (t.stack[i] != kNone) locs = stack_locs_[t.stack[i]];
        // At most: its key and length, the locations, the values and five labels.
        const std::size_t bound = 16 + locs.second + 11 * nvalues_ + 5 * 50 + 32;
        if (out.size() < used + bound) out.resize(2 * (used + bound));
        std::uint8_t* const start = out.data() + used;
        std::uint8_t* p = encode_sample(t, i, locs, thread_labels, thread_size, start + 16);
        // The key and length go right before the sample, which then moves
        // down to them.
        const auto size = static_cast<std::size_t>(p - (start + 16));
        std::uint8_t* body = put_varint(put_varint(start, tag(kSample, kLengthDelimited)), size);
        std::memmove(body, start + 16, size);
        used += static_cast<std::size_t>(body + size - start);
      }
    }
    out.resize(used);
    return out;
  }
  // Sample `i` of `t` (without its key and length) at `p`; returns its end.
  std::uint8_t* encode_sample(const profile::Thread& t, std::size_t i,
                              std::pair<std::uint32_t, std::uint32_t> locs,
                              const std::uint8_t* thread_labels, std::size_t thread_size,
                              std::uint8_t* p) const {
    if (locs.second) {
      p = put_varint(p, tag(1, kLengthDelimited));
      p = put_varint(p, locs.second);
      std::memcpy(p, loc_bytes_.data() + locs.first, locs.second);
      p += locs.second;
    }
    // The values: 1 and the period in the sample's event's two, 0 elsewhere.
    const std::size_t ev = 2 * std::size_t{t.event[i]};
    p = put_varint(p, tag(2, kLengthDelimited));
    p = put_varint(p, nvalues_ - 1 + varint_size(t.weight[i]));
    for (std::size_t z = 0; z < ev; ++z) *p++ = 0;
    *p++ = 1;
    p = put_varint(p, t.weight[i]);
    for (std::size_t z = ev + 2; z < nvalues_; ++z) *p++ = 0;
    for (std::size_t b = 0; b < thread_size; ++b) *p++ = thread_labels[b];
    p = put_label(p, comm_, t.comm[i], 0);
    if (t.cpu[i] >= 0) p = put_label(p, cpu_, 0, t.cpu[i]);
    if (t.time[i]) p = put_label(p, time_, 0, static_cast<std::int64_t>(t.time[i]), ns_);
    return p;
  }
  static std::size_t varint_size(std::uint64_t v) {
    std::size_t n = 1;
    for (; v >= 0x80; v >>= 7) ++n;
    return n;
  }
  static std::uint8_t* put_varint(std::uint8_t* p, std::uint64_t v) {
    while (v >= 0x80) {
      *p++ = static_cast<std::uint8_t>(v | 0x80);
      v >>= 7;
    }
    *p++ = static_cast<std::uint8_t>(v);
    return p;
  }
  // A Label (key 1, str 2, num 3, num_unit 4; int64 each, zeros left out):
  // at most 2 + 4 * 11 bytes, written in place.
  static std::uint8_t* put_label(std::uint8_t* p, std::int64_t key, std::int64_t str,
                                 std::int64_t num, std::int64_t unit = 0) {
    const std::int64_t fields[] = {key, str, num, unit};
    std::size_t size = 0;
    for (std::int64_t f : fields)
      if (f) size += 1 + varint_size(static_cast<std::uint64_t>(f));
    p = put_varint(p, tag(3, kLengthDelimited));
    p = put_varint(p, size);
    for (int f = 0; f < 4; ++f)
      if (fields[f]) {
        *p++ = static_cast<std::uint8_t>(tag(f + 1, kVarint));
        p = put_varint(p, static_cast<std::uint64_t>(fields[f]));
      }
    return p;
  }

  // The location ids of `stack`, leaf first, as packed varints in
  // loc_bytes_ (offset, size), computed once per stack.
  std::pair<std::uint32_t, std::uint32_t> packed_locations(Index stack) {
    if (stack >= stack_locs_.size()) stack_locs_.resize(p_.stacks.size(), {0, 0});
    auto& memo = stack_locs_[stack];
    if (memo.second == 0) {
      memo.first = static_cast<std::uint32_t>(loc_bytes_.size());
      std::vector<Index> group;  // inlined frames, then the frame they are inlined in
      for (Index s = stack; s != kNone; s = p_.stacks[s].prefix) {
        const Index f = p_.stacks[s].frame;
        group.push_back(f);
        if (!p_.frames[f].inlined) {
          put_location(location(group));
          group.clear();
        }
      }
      if (!group.empty()) put_location(location(group));
      memo.second = static_cast<std::uint32_t>(loc_bytes_.size() - memo.first);
    }
    return memo;
  }
  void put_location(std::uint64_t id) {
    std::uint8_t bytes[10];
    loc_bytes_.insert(loc_bytes_.end(), bytes, put_varint(bytes, id));
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
  GzipWriter& out_;
  std::string scratch_;
  Strings strings_;
  std::vector<std::uint64_t> mapping_id_;  // by lib
  std::size_t nvalues_ = 0;
  std::int64_t pid_ = 0, tid_ = 0, comm_ = 0, cpu_ = 0, time_ = 0, ns_ = 0;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> stack_locs_;  // in loc_bytes_
  std::vector<std::uint8_t> loc_bytes_;
  std::map<std::vector<Index>, std::uint64_t> locations_;
  std::vector<const std::vector<Index>*> location_order_;
};

}  // namespace

Status write_pprof(const profile::Profile& p, FdWriter& out) {
  // Level 1: pprof files are read once, and small next to the recording.
  GzipWriter zip(out, 1, 1 << 20);
  PprofWriter writer(p, zip);  // lives until its sample blocks are compressed
  writer.write();
  if (auto st = zip.finish(); !st) return st.error().with_context(out.name());
  return out.status();
}

}  // namespace perfkit::exports
