// result.h — errors as values.
//
// Every fallible call returns Result<T>: either a T or an error code. Error codes are
// errno values (EACCES, ENOENT, ESTALE, ...) plus kBadHandle, which has no errno
// equivalent. The NFS procedure layer maps them to nfsstat3 (RFC 1813 §2.6).
#pragma once

#include <cassert>
#include <concepts>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>

namespace nfsrdmad::vfs {

// The handle is malformed: wrong length, unknown version or MAC mismatch
// (NFS3ERR_BADHANDLE = 10001). Deliberately outside the errno range (< 4096).
inline constexpr int kBadHandle = 10001;

// The error half of a Result. Construct with fail(code).
struct Failure {
    int code;
};

constexpr Failure fail(int code) {
    return Failure{code};
}

// Human-readable text for an error code (strerror, plus kBadHandle).
std::string describe_error(int code);

namespace detail {
template <class U, class T>
concept ResultValue =
    std::constructible_from<T, U&&> && !std::same_as<std::remove_cvref_t<U>, Failure>;
}  // namespace detail

template <class T>
class [[nodiscard]] Result {
  public:
    template <detail::ResultValue<T> U = T>
    Result(U&& value) : state_(std::in_place_index<0>, std::forward<U>(value)) {}
    Result(Failure f) : state_(std::in_place_index<1>, f) { assert(f.code != 0); }

    bool ok() const { return state_.index() == 0; }
    explicit operator bool() const { return ok(); }
    // 0 when ok.
    int error() const { return ok() ? 0 : std::get<1>(state_).code; }
    Failure failure() const { return Failure{error()}; }

    T& value() & { return std::get<0>(state_); }
    const T& value() const& { return std::get<0>(state_); }
    T&& value() && { return std::get<0>(std::move(state_)); }
    T& operator*() & { return value(); }
    const T& operator*() const& { return value(); }
    T&& operator*() && { return std::move(*this).value(); }
    T* operator->() { return &value(); }
    const T* operator->() const { return &value(); }

  private:
    std::variant<T, Failure> state_;
};

template <>
class [[nodiscard]] Result<void> {
  public:
    Result() = default;
    Result(Failure f) : code_(f.code) { assert(f.code != 0); }

    bool ok() const { return code_ == 0; }
    explicit operator bool() const { return ok(); }
    int error() const { return code_; }
    Failure failure() const { return Failure{code_}; }

  private:
    int code_ = 0;
};

// Result<void> from a syscall-style return value (-1 + errno on failure).
Result<void> check_syscall(long rc);

}  // namespace nfsrdmad::vfs
