#include "intelpt/image.h"

namespace perfkit::intelpt {

Expected<std::shared_ptr<Image>> Image::open_file(const std::string& path) {
  PK_ASSIGN(MappedFile f, MappedFile::open(path));
  auto img = std::make_shared<Image>();
  img->name_ = path;
  img->file_ = std::move(f);
  img->bytes_ = img->file_.bytes();
  return img;
}

std::shared_ptr<Image> Image::from_bytes(std::string name, std::vector<std::uint8_t> bytes) {
  auto img = std::make_shared<Image>();
  img->name_ = std::move(name);
  img->owned_ = std::move(bytes);
  img->bytes_ = img->owned_;
  return img;
}

const Image* ImageSet::add(std::shared_ptr<Image> image) {
  image->id_ = static_cast<std::uint32_t>(images_.size());
  images_.push_back(std::move(image));
  return images_.back().get();
}

Expected<const Image*> ImageSet::file(const std::string& path) {
  if (auto it = by_path_.find(path); it != by_path_.end()) return it->second;
  if (auto it = failed_.find(path); it != failed_.end()) return Error(it->second);
  auto img = Image::open_file(path);
  if (!img) {
    failed_[path] = img.error().message();
    return std::move(img).error();
  }
  const Image* p = add(std::move(*img));
  by_path_[path] = p;
  return p;
}

}  // namespace perfkit::intelpt
