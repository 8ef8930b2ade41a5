#pragma once

#include "bulkgnn/core/error.hpp"

namespace bulkgnn {

// Thrown by throw_if_interrupted() once SIGINT or SIGTERM has arrived, so that
// the work in progress unwinds through its RAII guards (staging directories,
// temporary files) instead of dying with them half-written.
class interrupted : public error {
 public:
  explicit interrupted(int signal_number);
  [[nodiscard]] int signal_number() const { return signal_number_; }
  // The shell's convention for death by a signal: 128 + its number (130 for
  // SIGINT, 143 for SIGTERM).
  [[nodiscard]] int exit_code() const { return 128 + signal_number_; }

 private:
  int signal_number_;
};

// Installs the SIGINT and SIGTERM handlers. Outside every interrupt_scope a
// signal ends the process at once, as if no handler were there; inside one it
// is only recorded (async-signal-safe) for throw_if_interrupted(). The handler
// resets itself, so a second signal of the same kind ends the process at once
// should the scope's loop not poll in time.
void install_interrupt_handlers();

// Work that polls throw_if_interrupted() and has staging files to remove when
// it unwinds (an import, a generator) runs inside one of these. Elsewhere
// (training, sampling, MPI collectives) nothing polls, and a signal must not
// go unanswered.
class interrupt_scope {
 public:
  interrupt_scope();
  ~interrupt_scope();
  interrupt_scope(const interrupt_scope&) = delete;
  interrupt_scope& operator=(const interrupt_scope&) = delete;
};

// The signal recorded by the handlers, or 0 if none has arrived.
[[nodiscard]] int pending_interrupt();

// Long loops call this now and then; throws `interrupted` if a signal came.
inline void throw_if_interrupted() {
  if (const int signal_number = pending_interrupt(); signal_number != 0)
    throw interrupted(signal_number);
}

}  // namespace bulkgnn
