#pragma once

// Non-blocking reads of a device or terminal file descriptor through Asio.
//
// The teleoperation thread drains the descriptor at its own rate with synchronous
// non-blocking reads rather than async_read_some handlers: the input then changes only
// inside sample(), on the thread that reads it, with no lock, no queue and no dependence on
// who runs the io_context. Nothing is ever queued on the io_context.

#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <asio/io_context.hpp>
#include <asio/posix/stream_descriptor.hpp>
#include <cstddef>
#include <cstring>
#include <string>

namespace tether::local::detail {

class FdReader {
 public:
  // `owns`: close the descriptor on destruction (a device opened here) or leave it open
  // (stdin, a caller's pipe). The descriptor's file-status flags are restored either way,
  // so a shared terminal is not left non-blocking.
  FdReader(asio::io_context& io, int fd, bool owns);
  ~FdReader();
  FdReader(const FdReader&) = delete;
  FdReader& operator=(const FdReader&) = delete;

  // Reads whatever is available, at most `size` bytes, without blocking. End of file or a
  // read error (a device unplugged: ENODEV) marks the descriptor lost.
  std::size_t read_available(void* data, std::size_t size) noexcept;
  bool lost() const { return lost_; }

  // Reads fixed-size binary records (input_event, js_event) until none is pending and calls
  // on_record(const unsigned char*) for each complete one; a record split across reads waits
  // in `buffer` (`filled` bytes) for its rest. `buffer` holds a whole number of records.
  template <std::size_t N, class OnRecord>
  void drain(std::array<unsigned char, N>& buffer, std::size_t& filled, std::size_t record_size,
             OnRecord&& on_record) {
    const std::size_t capacity = N - N % record_size;
    for (;;) {
      const std::size_t n = read_available(buffer.data() + filled, capacity - filled);
      filled += n;
      std::size_t offset = 0;
      for (; offset + record_size <= filled; offset += record_size) {
        on_record(buffer.data() + offset);
      }
      std::memmove(buffer.data(), buffer.data() + offset, filled - offset);
      filled -= offset;
      if (n == 0 || lost_) return;
    }
  }
  int fd() const { return fd_; }

 private:
  asio::posix::stream_descriptor descriptor_;
  int fd_;
  int saved_flags_;
  bool owns_;
  bool lost_ = false;
};

// Opens a device node read-only and non-blocking; throws naming the path and the errno text.
int open_device(const std::string& path);

}  // namespace tether::local::detail
