#include "durable_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>

namespace tether::remote::server {

namespace {

// `error` is the errno of the failed call, saved before anything else can change it.
[[noreturn]] void fail(const char* what, const std::string& path, int error) {
  std::string message(what);
  message.append(" '").append(path).append("': ").append(std::strerror(error));
  throw std::runtime_error(message);
}

void sync_directory(const std::string& path) {
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  const std::string directory = parent.empty() ? std::string(".") : parent.string();
  const int fd = ::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) fail("cannot open directory", directory, errno);
  const int synced = ::fsync(fd);
  const int error = errno;
  ::close(fd);
  if (synced != 0) fail("cannot fsync directory", directory, error);
}

}  // namespace

void write_file_durably(const std::string& path, const std::string& contents) {
  std::string temporary(path);
  temporary.append(kTemporarySuffix);
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0640);
  if (fd < 0) fail("cannot create", temporary, errno);
  std::size_t written = 0;
  while (written < contents.size()) {
    const ssize_t n = ::write(fd, contents.data() + written, contents.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int error = errno;
      ::close(fd);
      ::unlink(temporary.c_str());
      fail("cannot write", temporary, error);
    }
    written += static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0) {
    const int error = errno;
    ::close(fd);
    ::unlink(temporary.c_str());
    fail("cannot fsync", temporary, error);
  }
  ::close(fd);
  if (::rename(temporary.c_str(), path.c_str()) != 0) {
    const int error = errno;
    ::unlink(temporary.c_str());
    fail("cannot rename into", path, error);
  }
  sync_directory(path);
}

void remove_file_durably(const std::string& path) {
  if (::unlink(path.c_str()) != 0) {
    if (errno == ENOENT) return;
    fail("cannot remove", path, errno);
  }
  sync_directory(path);
}

}  // namespace tether::remote::server
