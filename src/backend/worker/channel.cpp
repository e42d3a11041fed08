#include "backend/worker/channel.hpp"

#include <fmt/format.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

namespace steer::worker {

UniqueFd& UniqueFd::operator=(UniqueFd&& other) noexcept {
  if (this != &other) {
    reset();
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

void UniqueFd::reset() noexcept {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

std::string system_error_text(int error) { return fmt::format("{} (errno {})", std::strerror(error), error); }

MessageWriter& MessageWriter::put(std::string_view text) {
  put(text.size());
  append(text.data(), text.size());
  return *this;
}

void MessageWriter::append(const void* data, std::size_t size) {
  const auto* bytes = static_cast<const std::byte*>(data);
  bytes_.insert(bytes_.end(), bytes, bytes + size);
}

std::string MessageReader::get_string() {
  const auto size = get<std::size_t>();
  const auto* data = reinterpret_cast<const char*>(take(size));
  return std::string(data, size);
}

const std::byte* MessageReader::take(std::size_t size) {
  if (size > bytes_.size() - position_) {
    throw BackendError(fmt::format("worker protocol: a message of {} bytes ended early (needed {} more at {})",
                                   bytes_.size(), size, position_));
  }
  const std::byte* data = bytes_.data() + position_;
  position_ += size;
  return data;
}

namespace {

void send_all(int socket, const void* data, std::size_t size) {
  const auto* bytes = static_cast<const std::byte*>(data);
  while (size > 0) {
    ssize_t sent = ::send(socket, bytes, size, MSG_NOSIGNAL);
    if (sent < 0) {
      if (errno == EINTR) continue;
      throw BackendError("cannot send to the worker process: " + system_error_text(errno));
    }
    bytes += sent;
    size -= static_cast<std::size_t>(sent);
  }
}

// False when the connection closed before the first byte.
bool receive_all(int socket, void* data, std::size_t size) {
  auto* bytes = static_cast<std::byte*>(data);
  const std::size_t wanted = size;
  while (size > 0) {
    ssize_t received = ::recv(socket, bytes, size, 0);
    if (received < 0 && errno == EINTR) continue;
    if (received < 0 && errno == ECONNRESET) received = 0;  // the peer died
    if (received < 0) throw BackendError("cannot receive from the worker process: " + system_error_text(errno));
    if (received == 0) {
      if (size == wanted) return false;
      throw BackendError("the worker connection closed in the middle of a message");
    }
    bytes += received;
    size -= static_cast<std::size_t>(received);
  }
  return true;
}

}  // namespace

void send_message(int socket, const MessageWriter& message) {
  const std::size_t size = message.bytes().size();
  send_all(socket, &size, sizeof size);
  send_all(socket, message.bytes().data(), size);
}

std::optional<MessageReader> receive_message(int socket, std::optional<std::chrono::milliseconds> timeout) {
  if (timeout) {
    pollfd ready{socket, POLLIN, 0};
    int result;
    do {
      result = ::poll(&ready, 1, static_cast<int>(timeout->count()));
    } while (result < 0 && errno == EINTR);
    if (result < 0) throw BackendError("cannot wait for the worker process: " + system_error_text(errno));
    if (result == 0) {
      throw BackendError(fmt::format("the worker process did not answer within {} s", timeout->count() / 1000));
    }
  }
  std::size_t size = 0;
  try {
    if (!receive_all(socket, &size, sizeof size)) return std::nullopt;
  } catch (const BackendError&) {
    return std::nullopt;  // died while sending the header
  }
  std::vector<std::byte> bytes(size);
  if (size > 0 && !receive_all(socket, bytes.data(), size)) return std::nullopt;
  return MessageReader(std::move(bytes));
}

SharedMemory SharedMemory::create(std::size_t size, const char* name) {
  SharedMemory memory;
  memory.fd_ = UniqueFd(::memfd_create(name, MFD_CLOEXEC));
  if (memory.fd() < 0) throw BackendError(fmt::format("memfd_create failed: {}", system_error_text(errno)));
  if (::ftruncate(memory.fd(), static_cast<off_t>(size)) != 0) {
    throw BackendError(fmt::format("cannot size the shared memory for the worker process to {} bytes: {}", size,
                                   system_error_text(errno)));
  }
  SharedMemory mapped = map(memory.fd(), size);
  mapped.fd_ = std::move(memory.fd_);
  return mapped;
}

SharedMemory SharedMemory::map(int fd, std::size_t size) {
  SharedMemory memory;
  memory.size_ = size;
  if (size == 0) return memory;  // mmap refuses empty mappings; there is nothing to share
  void* data = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (data == MAP_FAILED) {
    throw BackendError(fmt::format("cannot map {} bytes of shared memory: {}", size, system_error_text(errno)));
  }
  memory.data_ = static_cast<std::byte*>(data);
  return memory;
}

SharedMemory::SharedMemory(SharedMemory&& other) noexcept
    : fd_(std::move(other.fd_)), data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}

SharedMemory& SharedMemory::operator=(SharedMemory&& other) noexcept {
  if (this != &other) {
    if (data_) ::munmap(data_, size_);
    fd_ = std::move(other.fd_);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

SharedMemory::~SharedMemory() {
  if (data_) ::munmap(data_, size_);
}

}  // namespace steer::worker
