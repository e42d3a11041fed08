#pragma once
// What a backend and its worker process share: whole messages over a stream socket, and a
// memory file holding the arguments and outputs.
#include <chrono>
#include <cstddef>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "steer/error.hpp"

namespace steer::worker {

// Owns a file descriptor.
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) noexcept : fd_(fd) {}
  UniqueFd(UniqueFd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept;
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd() { reset(); }

  int get() const noexcept { return fd_; }
  void reset() noexcept;

 private:
  int fd_ = -1;
};

// Builds a message: values are appended in their in-memory form (both ends are the same
// program), strings and vectors with their length first.
class MessageWriter {
 public:
  template <typename T>
    requires std::is_trivially_copyable_v<T>
  MessageWriter& put(const T& value) {
    append(&value, sizeof value);
    return *this;
  }
  MessageWriter& put(std::string_view text);
  template <typename T>
    requires std::is_trivially_copyable_v<T>
  MessageWriter& put(const std::vector<T>& values) {
    put(values.size());
    append(values.data(), values.size() * sizeof(T));
    return *this;
  }
  const std::vector<std::byte>& bytes() const noexcept { return bytes_; }

 private:
  void append(const void* data, std::size_t size);
  std::vector<std::byte> bytes_;
};

// Reads a message back in the order it was written; throws BackendError when it ends early.
class MessageReader {
 public:
  explicit MessageReader(std::vector<std::byte> bytes) : bytes_(std::move(bytes)) {}
  template <typename T>
    requires std::is_trivially_copyable_v<T>
  T get() {
    T value;
    std::memcpy(&value, take(sizeof value), sizeof value);
    return value;
  }
  std::string get_string();
  template <typename T>
    requires std::is_trivially_copyable_v<T>
  std::vector<T> get_vector() {
    std::vector<T> values(get<std::size_t>());
    const std::size_t size = values.size() * sizeof(T);
    if (size > 0) std::memcpy(values.data(), take(size), size);
    return values;
  }

 private:
  const std::byte* take(std::size_t size);
  std::vector<std::byte> bytes_;
  std::size_t position_ = 0;
};

// Sends one message. Throws BackendError when the peer is gone (never raises SIGPIPE).
void send_message(int socket, const MessageWriter& message);
// The next message, or nullopt when the peer closed the connection (a worker that died).
// With a timeout, throws BackendError when nothing arrives in time.
std::optional<MessageReader> receive_message(int socket,
                                             std::optional<std::chrono::milliseconds> timeout = std::nullopt);

// A memory file mapped into this process; a worker maps the same file by descriptor.
class SharedMemory {
 public:
  SharedMemory() = default;
  // A new file of `size` bytes (zeroed), mapped here.
  static SharedMemory create(std::size_t size, const char* name);
  // Maps a file received from the other process.
  static SharedMemory map(int fd, std::size_t size);
  SharedMemory(SharedMemory&& other) noexcept;
  SharedMemory& operator=(SharedMemory&& other) noexcept;
  SharedMemory(const SharedMemory&) = delete;
  SharedMemory& operator=(const SharedMemory&) = delete;
  ~SharedMemory();

  std::span<std::byte> bytes() const noexcept { return {data_, size_}; }
  int fd() const noexcept { return fd_.get(); }

 private:
  UniqueFd fd_;
  std::byte* data_ = nullptr;
  std::size_t size_ = 0;
};

// "errno text" for messages.
std::string system_error_text(int error);

}  // namespace steer::worker
