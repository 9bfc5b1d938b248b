// The data_src field of perf script: PERF_SAMPLE_DATA_SRC decoded as perf
// 6.1's perf_script__meminfo_scnprintf prints it ("|OP LOAD|LVL L1 hit|SNP
// None|TLB L1 or L2 hit|LCK No|BLK  N/A"), padded to the widest one so far.
#include <string>

#include "record/data_src.h"
#include "script/script_printer.h"

namespace perfkit::script {

void ScriptPrinter::print_data_src(std::uint64_t data_src) {
  const record::DataSrc d{data_src};
  std::string decode = "|OP ";
  record::append_mem_op(decode, d);
  decode += "|LVL ";
  record::append_mem_lvl(decode, d);
  decode += "|SNP ";
  record::append_mem_snoop(decode, d);
  decode += "|TLB ";
  record::append_mem_tlb(decode, d);
  decode += "|LCK ";
  record::append_mem_lock(decode, d);
  decode += "|BLK ";
  record::append_mem_blk(decode, d);
  if (decode.size() > 99) decode.resize(99);  // perf's 100-byte buffers
  std::string line = fmt::format("{:16x} {}", data_src, decode);
  if (line.size() > 99) line.resize(99);
  data_src_width_ = std::max(data_src_width_, line.size());
  fmt::format_to(fmt::appender(b_), "{:<{}}", line, data_src_width_);
}

}  // namespace perfkit::script
