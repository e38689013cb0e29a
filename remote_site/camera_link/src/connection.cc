#include "connection.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <stdexcept>

namespace tether::remote::camera_link::detail {

namespace {

std::string hex_id(std::uint64_t id) {
  char text[20];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(id));
  return text;
}

timeval to_timeval(double seconds) {
  timeval tv{};
  if (seconds > 0.0) {
    tv.tv_sec = static_cast<time_t>(seconds);
    tv.tv_usec = static_cast<suseconds_t>((seconds - std::floor(seconds)) * 1e6);
  }
  return tv;
}

}  // namespace

Connection::Connection(int fd, std::string peer) : fd_(fd), peer_(std::move(peer)) {
  const int one = 1;
  // Frames are written whole; a small request must not wait for Nagle.
  ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

Connection::~Connection() { ::close(fd_); }

int Connection::connect_to(const std::string& host, std::uint16_t port, double timeout,
                           const std::string& role) {
  const std::string where = role + " " + host + ":" + std::to_string(port);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (const int rc = ::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found);
      rc != 0) {
    throw std::runtime_error(where + " does not resolve: " + gai_strerror(rc));
  }
  std::string last = "no address";
  int fd = -1;
  for (addrinfo* a = found; a != nullptr && fd < 0; a = a->ai_next) {
    fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol);
    if (fd < 0) {
      last = std::strerror(errno);
      continue;
    }
    if (::connect(fd, a->ai_addr, a->ai_addrlen) != 0 && errno != EINPROGRESS) {
      last = std::strerror(errno);
      ::close(fd);
      fd = -1;
      continue;
    }
    pollfd p{fd, POLLOUT, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(timeout * 1000));
    int error = 0;
    socklen_t length = sizeof error;
    if (ready <= 0) {
      last =
          ready == 0 ? "no answer within " + std::to_string(timeout) + " s" : std::strerror(errno);
      error = -1;
    } else if (::getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length) != 0 || error != 0) {
      last = std::strerror(error != 0 ? error : errno);
      error = -1;
    }
    if (error != 0) {
      ::close(fd);
      fd = -1;
    }
  }
  ::freeaddrinfo(found);
  if (fd < 0) throw std::runtime_error("cannot connect to " + where + ": " + last);
  // Blocking from here on; reads and writes time out as set_timeouts() says.
  const int flags = ::fcntl(fd, F_GETFL);
  ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  return fd;
}

void Connection::set_timeouts(double read_seconds, double write_seconds) {
  const timeval r = to_timeval(read_seconds);
  const timeval w = to_timeval(write_seconds);
  ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &r, sizeof r);
  ::setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &w, sizeof w);
}

void Connection::fail(const std::string& what) const {
  throw std::runtime_error("camera link with " + peer_ + ": " + what);
}

void Connection::read_exact(std::uint8_t* data, std::size_t size) {
  std::size_t done = 0;
  while (done < size) {
    const ssize_t n = ::recv(fd_, data + done, size - done, 0);
    if (n > 0) {
      done += static_cast<std::size_t>(n);
    } else if (n == 0 || shut_.load()) {
      fail(shut_.load() ? "closed here" : "the other end closed the connection");
    } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
      fail("nothing received within the read timeout");
    } else if (errno != EINTR) {
      fail(std::string("receive: ") + std::strerror(errno));
    }
  }
}

void Connection::write_all(std::span<const std::uint8_t> bytes) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::send(fd_, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
    if (n > 0) {
      done += static_cast<std::size_t>(n);
    } else if (shut_.load()) {
      fail("closed here");
    } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      fail("the other end took nothing within the write timeout");
    } else if (n < 0 && errno != EINTR) {
      fail(std::string("send: ") + std::strerror(errno));
    }
  }
}

void Connection::send(Kind kind, std::span<const std::uint8_t> payload) {
  write_all(encode_frame(kind, ++sent_, payload, key_));
}

Kind Connection::receive(std::span<const std::uint8_t>& payload) {
  buffer_.resize(kHeaderSize);
  read_exact(buffer_.data(), kHeaderSize);
  Header header;
  if (const std::string error = decode_header(buffer_, header); !error.empty()) fail(error);
  buffer_.resize(kHeaderSize + header.payload_size + kMacSize);
  read_exact(buffer_.data() + kHeaderSize, header.payload_size + kMacSize);
  // Before the session (HELLO, WELCOME, or an ERROR refusing it) there is no key: the
  // handshake checks those frames itself.
  if (key_.ready && !mac_verifies(buffer_, key_)) {
    fail(std::string(to_string(header.kind)) + " frame " + std::to_string(header.sequence) +
         ": the MAC does not verify (another arm-link key, or altered bytes)");
  }
  if (header.sequence != received_ + 1) {
    fail(std::string(to_string(header.kind)) + " sequence = " + std::to_string(header.sequence) +
         ": expected " + std::to_string(received_ + 1));
  }
  received_ = header.sequence;
  payload = std::span<const std::uint8_t>(buffer_).subspan(kHeaderSize, header.payload_size);
  return header.kind;
}

void Connection::handshake_as_site(const arm_link::LinkSecret& secret, std::uint64_t arm_model) {
  Hello hello{make_nonce(), arm_model};
  send(Kind::kHello, encode_hello(hello));
  std::span<const std::uint8_t> payload;
  const Kind kind = receive(payload);
  if (kind == Kind::kError) {
    std::string text;
    if (!decode_text(payload, text).empty()) text = "(an unreadable reason)";
    fail("refused: " + text);
  }
  if (kind != Kind::kWelcome) fail(std::string("expected WELCOME, got ") + to_string(kind));
  Hello welcome;
  if (const std::string error = decode_hello(payload, welcome); !error.empty()) {
    fail("WELCOME: " + error);
  }
  if (welcome.arm_model != arm_model) {
    fail("its arm model id is " + hex_id(welcome.arm_model) + ", this site's arm is " +
         hex_id(arm_model) + " (the two ends must load the same arm, --arm)");
  }
  key_ = derive_session_key(secret, hello.nonce, welcome.nonce, arm_model);
  if (!mac_verifies(buffer_, key_)) {
    fail("WELCOME does not verify: it holds another arm-link key than " + secret.source);
  }
}

void Connection::handshake_as_server(const arm_link::LinkSecret& secret, std::uint64_t arm_model) {
  std::span<const std::uint8_t> payload;
  const Kind kind = receive(payload);
  if (kind != Kind::kHello) fail(std::string("expected HELLO, got ") + to_string(kind));
  Hello hello;
  if (const std::string error = decode_hello(payload, hello); !error.empty()) {
    fail("HELLO: " + error);
  }
  const Hello welcome{make_nonce(), arm_model};
  const arm_link::LinkKey key = derive_session_key(secret, hello.nonce, welcome.nonce, arm_model);
  write_all(encode_frame(Kind::kWelcome, ++sent_, encode_hello(welcome), key));
  if (hello.arm_model != arm_model) {
    fail("HELLO names arm model id " + hex_id(hello.arm_model) + ", this server drives " +
         hex_id(arm_model));
  }
  key_ = key;  // the site's first request must verify under it
}

void Connection::shutdown() noexcept {
  shut_.store(true);
  ::shutdown(fd_, SHUT_RDWR);
}

}  // namespace tether::remote::camera_link::detail
