#include "recorder/record_dir.h"

#include "base/output.h"

namespace perfkit::recorder {

class RingFiles::File : public capture::RecordSink {
 public:
  File(FdWriter out, std::unique_ptr<capture::RecordCompressor> z)
      : out_(std::move(out)), z_(std::move(z)) {}

  Status write(Bytes records) override {
    out_.write(records);
    return out_.status();
  }
  Status write_ring(SplitBytes data) override {
    if (!z_) {
      out_.write(data.first);
      out_.write(data.second);
      return out_.status();
    }
    PK_TRY(z_->compress(data, buffer_));
    out_.write(Bytes(buffer_.data(), buffer_.size()));
    return out_.status();
  }
  Status finish() { return out_.close(); }
  std::uint64_t bytes() const { return out_.offset(); }
  const capture::RecordCompressor* compressor() const { return z_.get(); }

 private:
  FdWriter out_;
  std::unique_ptr<capture::RecordCompressor> z_;
  std::vector<std::uint8_t> buffer_;
};

RingFiles::~RingFiles() = default;

Expected<std::unique_ptr<RingFiles>> RingFiles::create(const std::string& dir, std::size_t n,
                                                       int compression_level) {
  std::unique_ptr<RingFiles> files(new RingFiles());
  for (std::size_t i = 0; i < n; ++i) {
    PK_ASSIGN(FdWriter out, FdWriter::create(dir + "/data." + std::to_string(i)));
    std::unique_ptr<capture::RecordCompressor> z;
    if (compression_level > 0) {
      PK_ASSIGN(z, capture::RecordCompressor::create(compression_level));
    }
    files->files_.push_back(std::make_unique<File>(std::move(out), std::move(z)));
  }
  return files;
}

std::vector<capture::RecordSink*> RingFiles::sinks() {
  std::vector<capture::RecordSink*> out;
  for (auto& f : files_) out.push_back(f.get());
  return out;
}

Status RingFiles::finish() {
  Status first = ok();
  for (auto& f : files_) {
    Status st = f->finish();
    if (first && !st) first = std::move(st);
  }
  return first;
}

std::uint64_t RingFiles::bytes_written() const {
  std::uint64_t n = 0;
  for (const auto& f : files_) n += f->bytes();
  return n;
}

std::uint64_t RingFiles::bytes_in() const {
  std::uint64_t n = 0;
  for (const auto& f : files_)
    if (f->compressor()) n += f->compressor()->bytes_in();
  return n;
}

std::uint64_t RingFiles::bytes_out() const {
  std::uint64_t n = 0;
  for (const auto& f : files_)
    if (f->compressor()) n += f->compressor()->bytes_out();
  return n;
}

}  // namespace perfkit::recorder
