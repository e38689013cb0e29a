#include "fd_reader.h"

#include <asio/buffer.hpp>
#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace tether::local::detail {

FdReader::FdReader(asio::io_context& io, int fd, bool owns)
    : descriptor_(io), fd_(fd), saved_flags_(::fcntl(fd, F_GETFL)), owns_(owns) {
  if (saved_flags_ < 0) {
    throw std::invalid_argument("hand controller: file descriptor " + std::to_string(fd) +
                                " is not open: " + std::strerror(errno));
  }
  descriptor_.assign(fd);
  descriptor_.non_blocking(true);
}

FdReader::~FdReader() {
  ::fcntl(fd_, F_SETFL, saved_flags_);
  if (owns_) {
    asio::error_code ignored;
    descriptor_.close(ignored);
  } else {
    descriptor_.release();
  }
}

std::size_t FdReader::read_available(void* data, std::size_t size) noexcept {
  std::size_t total = 0;
  auto* bytes = static_cast<unsigned char*>(data);
  while (!lost_ && total < size) {
    asio::error_code ec;
    const std::size_t n = descriptor_.read_some(asio::buffer(bytes + total, size - total), ec);
    total += n;
    if (ec == asio::error::would_block || ec == asio::error::try_again) break;
    if (ec == asio::error::interrupted) continue;
    if (ec) lost_ = true;  // eof, ENODEV, ...
  }
  return total;
}

int open_device(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    throw std::runtime_error("hand controller: cannot open " + path + ": " + std::strerror(errno));
  }
  return fd;
}

}  // namespace tether::local::detail
