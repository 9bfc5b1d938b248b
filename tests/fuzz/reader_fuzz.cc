// libFuzzer target for the perf.data reader: header, attrs, feature table,
// every record (file and pipe mode, compressed), sample and trailer decoding,
// and what reads records after it: perfkit dump's record printer (into a
// writer with no file) and the byte-order conversion of each record.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "base/output.h"
#include "dump/dump_records.h"
#include "perfdata/reader.h"
#include "perfdata/record_stream.h"
#include "record/records.h"
#include "record/sample.h"
#include "record/swap.h"

using namespace perfkit;

namespace {

void decode(const perfdata::EventSet& events, const record::RecordView& v) {
  int idx = events.attr_index(v);
  if (idx < 0) return;
  const auto& layout = events[static_cast<std::size_t>(idx)].layout;
  if (v.type == abi::kRecordSample) {
    record::Sample s;
    if (!record::decode_sample(v, layout, s)) return;
    for (std::uint64_t i = 0; i < s.callchain.size(); ++i) (void)s.callchain[i];
    for (std::uint64_t i = 0; i < s.branch_stack.nr; ++i) (void)s.branch_stack.at(i);
    for (std::uint64_t i = 0; i < s.read.nr; ++i) (void)s.read.at(i);
    return;
  }
  (void)record::decode_sample_id(v, layout);
  switch (v.type) {
    case abi::kRecordMmap:
      (void)record::parse_mmap(v);
      break;
    case abi::kRecordMmap2:
      (void)record::parse_mmap2(v);
      break;
    case abi::kRecordComm:
      (void)record::parse_comm(v);
      break;
    case abi::kRecordNamespaces: {
      auto n = record::parse_namespaces(v);
      if (n)
        for (std::uint64_t i = 0; i < n->nr; ++i) (void)n->ino(i);
      break;
    }
    case abi::kRecordRead:
      (void)record::parse_read(v, layout.read_format);
      break;
    case abi::kRecordTextPoke:
      (void)record::parse_text_poke(v);
      break;
    case abi::kRecordIdIndex: {
      auto x = record::parse_id_index(v);
      if (x)
        for (std::uint64_t i = 0; i < x->nr; ++i) (void)x->at(i);
      break;
    }
    case abi::kRecordThreadMap: {
      auto t = record::parse_thread_map(v);
      if (t)
        for (std::uint64_t i = 0; i < t->nr; ++i) (void)t->comm(i);
      break;
    }
    case abi::kRecordCpuMap: {
      auto c = record::parse_cpu_map(v);
      if (c) c->for_each([](int) {});
      break;
    }
    case abi::kRecordEventUpdate:
      (void)record::parse_event_update(v);
      break;
    case abi::kRecordAuxtraceError:
      (void)record::parse_auxtrace_error(v);
      break;
    case abi::kRecordHeaderBuildId:
      (void)record::parse_build_id(v);
      break;
    default:
      break;
  }
}

// Converts the record to the other byte order, as inject does.
void swap(const perfdata::EventSet& events, const record::RecordView& v,
          std::vector<std::uint8_t>& buf) {
  if (v.type == abi::kRecordCompressed || v.type == abi::kRecordCompressed2) return;
  int idx = events.attr_index(v);
  const abi::RecordLayout* layout =
      idx >= 0 ? &events[static_cast<std::size_t>(idx)].layout : nullptr;
  buf.resize(v.bytes.size());
  (void)record::swap_record(v, layout, buf.data());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto r = perfdata::Reader::open_memory(Bytes(data, size), "fuzz");
  if (!r) return 0;
  perfdata::Reader& rd = **r;
  dump::RecordPrinter printer(rd);
  FdWriter null_out(-1, "null", false, 1 << 16);  // no descriptor: output is dropped
  std::vector<std::uint8_t> buf;
  (void)perfdata::process_records(rd, {}, [&](const perfdata::ReadRecord& rec, std::uint64_t) {
    decode(rd.events(), rec.view);
    swap(rd.events(), rec.view, buf);
    if (rec.view.type == abi::kRecordCompressed || rec.view.type == abi::kRecordCompressed2) {
      printer.count(rec.view);
      return ok();
    }
    return printer.print(rec, null_out);
  });
  printer.print_stats(null_out);
  return 0;
}
