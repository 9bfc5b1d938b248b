// -F srccode and insn: the source line of a sample's address, perf 6.1's
// map__fprintf_srccode with its srccode.c file cache.
#include <fstream>
#include <sstream>

#include "abi/perf_event.h"
#include "script/script_printer.h"
#include "session/code_reader.h"

namespace perfkit::script {

using namespace perfkit::abi;
using F = ScriptField;

// The file's text and where its lines start; nullptr when it cannot be read.
// perf counts the lines by their '\n': an unterminated last line is not one.
const ScriptPrinter::SourceFile* ScriptPrinter::source_file(const std::string& path) {
  auto it = source_files_.find(path);
  if (it != source_files_.end()) return it->second.get();
  std::unique_ptr<SourceFile> f;
  std::ifstream in(path, std::ios::binary);
  if (in) {
    std::ostringstream ss;
    ss << in.rdbuf();
    f = std::make_unique<SourceFile>();
    f->text = std::move(ss).str();
    std::uint32_t start = 0;
    for (std::uint32_t i = 0; i < f->text.size(); ++i) {
      if (f->text[i] != '\n') continue;
      f->line_starts.push_back(start);
      start = i + 1;
    }
    if (f->line_starts.empty()) f.reset();  // perf maps nothing of an empty file
  }
  return source_files_.emplace(path, std::move(f)).first->second.get();
}

// map__fprintf_srccode: "|LINE     text" of the sample's source line (the
// innermost addr2line gives, with its full path), once per line per thread.
void ScriptPrinter::print_srccode(const machine::Location& loc, machine::Thread* thread) {
  if (!loc.map || !loc.dso || !thread) return;
  if (!srccode_lines_)
    srccode_lines_ = std::make_unique<symbol::SourceLines>(session_.symbolizer(),
                                                           symbol::SourceLineOptions{true});
  const machine::Dso* dso = loc.dso;
  if (dso->index >= srccode_dsos_.size()) srccode_dsos_.resize(dso->index + 1, nullptr);
  auto*& handle = srccode_dsos_[dso->index];
  if (!handle) handle = srccode_lines_->dso(dso->long_name, dso->short_name, dso->build_id);
  std::string_view where = srccode_lines_->srcline(handle, loc.addr);
  const std::size_t colon = where.rfind(':');
  if (colon == std::string_view::npos || colon + 1 == where.size()) return;
  unsigned line = 0;
  for (char c : where.substr(colon + 1)) {
    if (c < '0' || c > '9') return;  // "lib.so[1a2b]" and the like: no line
    line = line * 10 + static_cast<unsigned>(c - '0');
  }
  const std::string_view file = where.substr(0, colon);
  SrccodeState& state = srccode_[thread];
  if (state.line == line && state.file == file) return;
  const SourceFile* src = source_file(std::string(file));
  if (!src || line == 0 || line > src->line_starts.size()) return;
  const std::uint32_t begin = src->line_starts[line - 1];
  const std::size_t end = src->text.find('\n', begin);
  fmt::format_to(fmt::appender(b_), "|{:<8} {}\n", line,
                 std::string_view(src->text).substr(begin, end - begin));
  state.file = file;
  state.line = line;
}

// perf_sample__fprintf_insn for a sample that carries no instruction: its
// length and bytes decoded from the code at its ip (script_fetch_insn);
// "ilen: 0" where the code cannot be read (the kernel's, anonymous memory).
void ScriptPrinter::print_insn(const OutputConfig& o, const session::ResolvedSample& s) {
  std::uint8_t code[16] = {};
  unsigned len = 0;
  const std::uint64_t ip = s.sample->ip;
  if (ip && ip < kernel_start_ && s.thread) {
    if (!code_) code_ = std::make_unique<session::CodeReader>(session_.symbolizer().options());
    len = code_->fetch_insn(session_.machine().resolve(*s.thread, kMiscUser, ip), code);
  }
  auto out = fmt::appender(b_);
  if (o.has(F::kInsnlen)) fmt::format_to(out, " ilen: {}", len);
  if (!o.has(F::kInsn) || !len) return;
  b_.append(std::string_view(" insn:"));
  for (unsigned i = 0; i < len; ++i) fmt::format_to(out, " {:02x}", code[i]);
}

}  // namespace perfkit::script
