#include "bulkgnn/loader/host_to_device.hpp"

#include "bulkgnn/core/timer.hpp"

#include <span>
#include <utility>
#include <variant>

namespace bulkgnn::loader {
namespace {

template <class T>
buffer<T> copied_to(const buffer<T>& values, memory_resource& target) {
  return copy_to(std::span<const T>(values), target);
}

csr_matrix copied_to(const csr_matrix& m, memory_resource& target) {
  return copy_to(m.view(), target);
}

class host_to_device_stage final : public stage {
 public:
  explicit host_to_device_stage(executor copy_exec) : exec_(std::move(copy_exec)) {}

  [[nodiscard]] std::string name() const override { return "host_to_device"; }

  [[nodiscard]] bool process(stage_item item, stage_context& context) override {
    auto mb = std::get<ready_minibatch>(std::move(item));
    const stopwatch watch;
    memory_resource& target = exec_.memory();
    auto& batch = mb.batch;
    batch.seeds = copied_to(batch.seeds, target);
    batch.labels = copied_to(batch.labels, target);
    batch.input_nodes = copied_to(batch.input_nodes, target);
    for (auto& block : batch.blocks) block = copied_to(block, target);
    // Features fetched GPU to GPU are in device memory already.
    if (mb.placed_features.empty()) {
      mb.placed_features = copy_to(std::span<const float>(mb.features.span()), target);
      mb.features = {};
    }
    context.add_busy(watch.seconds());
    return context.emit(std::move(mb));
  }

 private:
  executor exec_;
};

}  // namespace

std::unique_ptr<stage> make_host_to_device_stage(executor copy_exec) {
  return std::make_unique<host_to_device_stage>(std::move(copy_exec));
}

}  // namespace bulkgnn::loader
