#include "bulkgnn/core/progress.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>

namespace bulkgnn {

namespace {

std::atomic<bool> silenced{false};

std::string format_duration(double seconds) {
  const auto s = static_cast<long>(seconds + 0.5);
  if (s >= 3600) return fmt::format("{}h{:02}m", s / 3600, (s / 60) % 60);
  if (s >= 60) return fmt::format("{}m{:02}s", s / 60, s % 60);
  return fmt::format("{:.1f}s", seconds);
}

}  // namespace

progress::progress(std::string label, std::int64_t total, std::string unit, bool quiet)
    : label_(std::move(label)),
      unit_(std::move(unit)),
      total_(total),
      quiet_(quiet || silenced.load()),
      terminal_(isatty(fileno(stderr)) != 0) {}

progress::~progress() {
  if (!finished_) finish();
}

void silence_progress() { silenced.store(true); }

void progress::update(std::int64_t done) {
  done_ = done;
  if (quiet_) return;
  // Work that ends within a second shows nothing but its final line.
  const double now = watch_.seconds();
  const double interval = terminal_ ? 0.2 : 5.0;
  if (now < 1.0 || now - last_draw_ < interval) return;
  last_draw_ = now;
  draw(false);
}

void progress::finish() {
  if (finished_) return;
  finished_ = true;
  // Work that took under a second and showed no bar needs no summary line.
  const bool shown = last_draw_ >= 0;
  if (!quiet_ && (shown || watch_.seconds() >= 1.0)) draw(true);
}

void progress::draw(bool final_line) {
  const double elapsed = watch_.seconds();
  const double fraction = total_ > 0 ? std::min(1.0, static_cast<double>(done_) / total_) : 0.0;
  const double rate = elapsed > 0 ? done_ / elapsed : 0.0;
  const std::string counts =
      total_ > 0 ? fmt::format("{}/{}{}", done_, total_, unit_) : fmt::format("{}{}", done_, unit_);
  std::string line;
  if (final_line) {
    line = fmt::format("{}: {} in {} ({:.3g}{}/s)", label_, counts, format_duration(elapsed), rate,
                       unit_);
  } else {
    const std::string eta =
        fraction > 0 ? format_duration(elapsed * (1 - fraction) / fraction) : std::string("?");
    if (terminal_) {
      constexpr int width = 30;
      const int filled = static_cast<int>(fraction * width);
      line = fmt::format("{} [{}{}] {:3.0f}% {} ETA {}", label_, std::string(filled, '#'),
                         std::string(width - filled, '.'), 100 * fraction, counts, eta);
    } else {
      line = fmt::format("{}: {:.0f}% {} ETA {}", label_, 100 * fraction, counts, eta);
    }
  }
  if (terminal_)
    fmt::print(stderr, "\r\033[K{}{}", line, final_line ? "\n" : "");
  else
    fmt::print(stderr, "{}\n", line);
  std::fflush(stderr);
}

}  // namespace bulkgnn
