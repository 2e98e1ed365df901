// A cancel signal for one piece of work: the HTTP server raises it when a client goes away, and
// whatever is waiting on the network for that client (a model's stream, most of all) has
// registered how to stop. Without it a closed browser tab keeps a model generating, and paying,
// for nobody. Used on one thread: the network thread that owns the exchange.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <utility>

namespace pf {

class CancelSignal {
 public:
  bool cancelled() const { return cancelled_; }

  // Runs every registered handler once; later calls do nothing.
  void cancel() {
    if (cancelled_) return;
    cancelled_ = true;
    auto handlers = std::move(handlers_);
    handlers_.clear();
    for (auto& [id, h] : handlers) h();
  }

  // Registers what to do on cancel (runs at once if already cancelled); the returned id removes
  // it when the work finishes first.
  size_t on_cancel(std::function<void()> handler) {
    if (cancelled_) {
      handler();
      return 0;
    }
    handlers_.emplace(++next_id_, std::move(handler));
    return next_id_;
  }
  void remove(size_t id) { handlers_.erase(id); }

 private:
  bool cancelled_ = false;
  size_t next_id_ = 0;
  std::map<size_t, std::function<void()>> handlers_;
};

// Registers a handler for as long as it lives.
class CancelRegistration {
 public:
  CancelRegistration(CancelSignal* signal, std::function<void()> handler) : signal_(signal) {
    if (signal_) id_ = signal_->on_cancel(std::move(handler));
  }
  ~CancelRegistration() {
    if (signal_ && id_) signal_->remove(id_);
  }
  CancelRegistration(const CancelRegistration&) = delete;
  CancelRegistration& operator=(const CancelRegistration&) = delete;

 private:
  CancelSignal* signal_;
  size_t id_ = 0;
};

}  // namespace pf
