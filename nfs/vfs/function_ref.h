// function_ref.h — non-owning, non-allocating reference to a callable (per-entry
// callbacks on hot paths; std::function may allocate).
#pragma once

#include <memory>
#include <type_traits>
#include <utility>

namespace nfsrdmad::vfs {

template <class Signature>
class FunctionRef;

template <class R, class... Args>
class FunctionRef<R(Args...)> {
  public:
    template <class F,
              class = std::enable_if_t<!std::is_same_v<std::remove_cvref_t<F>, FunctionRef> &&
                                       std::is_invocable_r_v<R, F&, Args...>>>
    FunctionRef(F&& f)  // NOLINT: implicit by design, like std::function
        : object_(const_cast<void*>(static_cast<const void*>(std::addressof(f)))),
          call_([](void* obj, Args... args) -> R {
              return (*static_cast<std::remove_reference_t<F>*>(obj))(std::forward<Args>(args)...);
          }) {}

    R operator()(Args... args) const { return call_(object_, std::forward<Args>(args)...); }

  private:
    void* object_;
    R (*call_)(void*, Args...);
};

}  // namespace nfsrdmad::vfs
