#include "errors.hpp"

#include "bulkgnn/core/error.hpp"

#include <string_view>
#include <utility>

namespace py = pybind11;

namespace bulkgnn::python {

namespace {

// Longer field names first where one is a prefix of another.
constexpr std::pair<std::string_view, std::string_view> keyword_of_field[] = {
    {"sampler_options.kind", "sampler"},
    {"sampler_options.fanouts", "fanouts"},
    {"sampler_options.layers", "layers"},
    {"sampler_options.replacement", "replace"},
    {"sampler_options.weighted", "weighted"},
    {"sampler_options.cache_dir", "subgraph_cache"},
    {"sampler_options.seed", "seed"},
    {"loader_options.batch_size", "batch_size"},
    {"loader_options.bulk_queue", "bulk_queue"},
    {"loader_options.bulk", "bulk"},
    {"loader_options.ready_queue", "prefetch"},
    {"loader_options.queue_bytes", "queue_bytes"},
    {"loader_options.max_minibatches", "max_minibatches"},
    {"loader_options.subgraphs", "sampler='cluster-gcn' or 'saint-*'"},
    {"loading_plan.shuffle", "shuffle"},
    {"ogb_import_options.add_inverse_edges", "add_inverse_edges"},
    {"memory_arrays.add_inverse_edges", "add_inverse_edges"},
    {"loader_options.slices", "world_size"},
    {"loader_options.slice", "rank"},
    {"execution_options.device", "backend"},
    {"execution_options.threads", "threads"},
    {"link_split_options.valid_fraction", "valid_fraction"},
    {"link_split_options.test_fraction", "test_fraction"},
    {"link_split_options.negatives_per_positive", "negatives_per_positive"},
    {"negative_sampling.amount", "the negative sampling amount"},
    {"negative_sampling.strict", "strict"},
    {"negative_sampling.distribution", "negative_distribution"},
    {"link_options.exclude", "exclude"},
    {"link_options.batch_size", "batch_size"},
    {"node2vec_options.length", "walk_length"},
    {"node2vec_options.p", "p"},
    {"node2vec_options.q", "q"},
};

}  // namespace

std::string in_keyword_terms(std::string message) {
  for (const auto& [field, keyword] : keyword_of_field)
    for (auto at = message.find(field); at != std::string::npos; at = message.find(field, at))
      message.replace(at, field.size(), keyword);
  return message;
}

void register_errors(py::module_& m) {
  static py::exception<bulkgnn::error> error_type(m, "Error", PyExc_RuntimeError);
  error_type.doc() = "An error bulkgnn reports: malformed data, a failed pipeline stage.";
  py::register_exception_translator([](std::exception_ptr failure) {
    try {
      if (failure) std::rethrow_exception(failure);
    } catch (const option_error& e) {
      PyErr_SetString(PyExc_ValueError, in_keyword_terms(e.what()).c_str());
    } catch (const bulkgnn::error& e) {
      PyErr_SetString(error_type.ptr(), in_keyword_terms(e.what()).c_str());
    }
  });
}

}  // namespace bulkgnn::python
