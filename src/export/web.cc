#include "export/web/web.h"

namespace perfkit::exports::web {

std::size_t emit_until(std::string_view page, std::size_t from, std::string_view key,
                       FdWriter& out) {
  const std::size_t at = page.find(key, from);
  out.write(page.substr(from, at - from));
  return at + key.size();
}

}  // namespace perfkit::exports::web
