#include "bulkgnn/core/interrupt.hpp"

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <exception>

namespace bulkgnn {
namespace {

std::atomic<int> received_signal{0};
std::atomic<int> open_scopes{0};
static_assert(std::atomic<int>::is_always_lock_free, "the signal handler needs a lock-free flag");

extern "C" void record_signal(int signal_number) {
  if (open_scopes.load(std::memory_order_relaxed) == 0) {
    // No one polls: die of the signal as the default action would (SA_RESETHAND
    // has restored it; signal() and raise() are async-signal-safe).
    ::signal(signal_number, SIG_DFL);
    ::raise(signal_number);
    return;
  }
  received_signal.store(signal_number, std::memory_order_relaxed);
}

}  // namespace

interrupted::interrupted(int signal_number)
    : error(fmt::format("interrupted by {}", signal_number == SIGINT ? "SIGINT"
                                             : signal_number == SIGTERM
                                                 ? "SIGTERM"
                                                 : ::strsignal(signal_number))),
      signal_number_(signal_number) {}

void install_interrupt_handlers() {
  struct sigaction action {};
  action.sa_handler = record_signal;
  sigemptyset(&action.sa_mask);
  // SA_RESETHAND: a second signal kills, should nothing poll the flag.
  // SA_RESTART: reads in progress (zlib's, say) must not fail with EINTR.
  action.sa_flags = SA_RESETHAND | SA_RESTART;
  for (const int signal_number : {SIGINT, SIGTERM})
    if (::sigaction(signal_number, &action, nullptr) != 0)
      throw internal_error(
          fmt::format("sigaction({}) failed: {}", signal_number, std::strerror(errno)));
}

interrupt_scope::interrupt_scope() { open_scopes.fetch_add(1, std::memory_order_relaxed); }
// A signal that came after the scope's last poll must not be lost: with no
// exception on its way out, the process dies of it now, as it would have
// outside the scope.
interrupt_scope::~interrupt_scope() {
  if (open_scopes.fetch_sub(1, std::memory_order_relaxed) != 1 || std::uncaught_exceptions() != 0)
    return;
  if (const int signal_number = pending_interrupt(); signal_number != 0) {
    ::signal(signal_number, SIG_DFL);
    ::raise(signal_number);
  }
}

int pending_interrupt() { return received_signal.load(std::memory_order_relaxed); }

}  // namespace bulkgnn
