// Sampler programs: their JSON, the checks that make a bad program fail at
// registration rather than mid-epoch, and the registry find_sampler reads.
#include "bulkgnn/sampler/sampler_program.hpp"

#include "bulkgnn/core/error.hpp"
#include "program_sampling.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <set>

namespace bulkgnn::sampler {

namespace {

using json = nlohmann::json;

constexpr std::string_view program_format = "bulkgnn-sampler-program";
constexpr int program_version = 1;

// What a named value is, as the checks see it.
enum class value_kind { frontier_rows, destination_draw, minibatch_matrix, vertices, block };

// A named value and what the checks need of its making.
struct value_info {
  value_kind kind;
  // A per-minibatch matrix or a `sources` vertex list: the multiply whose
  // columns it holds (a draw keeps its matrix's); empty for others.
  std::string columns_of = {};
  // A multiply of A + I: every destination has an entry.
  bool with_self_loops = false;
  // A block: the vertex list whose positions its columns are.
  std::string sources = {};
};

std::string_view kind_name(value_kind kind) {
  switch (kind) {
    case value_kind::frontier_rows:
      return "the frontier's rows (frontier_rows)";
    case value_kind::destination_draw:
      return "a per-destination draw";
    case value_kind::minibatch_matrix:
      return "a per-minibatch matrix";
    case value_kind::vertices:
      return "a vertex list (frontier, relabel or sources)";
    case value_kind::block:
      return "a block";
  }
  return "?";
}

// One operation's JSON: its name, the key of the value it reads (empty for
// none), and its other keys.
struct operation_spec {
  program_operation operation;
  std::string_view name;
  std::string_view input_key;
  std::vector<std::string_view> keys;
};

const std::vector<operation_spec>& operation_specs() {
  static const std::vector<operation_spec> specs{
      {program_operation::frontier_rows, "frontier_rows", "", {"out"}},
      {program_operation::frontier_selection, "frontier_selection", "", {"scale", "out"}},
      {program_operation::multiply, "multiply", "matrix", {"self_loops", "out"}},
      {program_operation::sample_rows,
       "sample_rows",
       "matrix",
       {"weights", "replacement", "variates", "out"}},
      {program_operation::relabel, "relabel", "drawn", {"out", "block"}},
      {program_operation::sources, "sources", "matrix", {"out"}},
      {program_operation::induce,
       "induce",
       "sources",
       {"self_loops", "inverse_probabilities", "out"}},
      {program_operation::normalize_rows, "normalize_rows", "block", {"out"}},
  };
  return specs;
}

const operation_spec& spec_of(program_operation operation) {
  return *std::ranges::find(operation_specs(), operation, &operation_spec::operation);
}

std::vector<std::string_view> operation_names() {
  std::vector<std::string_view> names;
  for (const auto& s : operation_specs()) names.push_back(s.name);
  return names;
}

// Reads and checks one program, naming where a problem is.
class program_reader {
 public:
  explicit program_reader(std::string_view origin) : origin_(origin) {}

  sampler_program read(std::string_view text) {
    json doc;
    try {
      doc = json::parse(text);
    } catch (const json::parse_error& e) {
      fail("", "is not JSON: {}", e.what());
    }
    if (!doc.is_object()) fail("", "must be a JSON object");
    check_keys(doc, {"format", "version", "name", "summary", "layer", "hop", "sources", "block"},
               "");
    if (!doc.contains("format") || string_field(doc, "format", "") != program_format)
      fail("", "format must be \"{}\"", program_format);
    if (!doc.contains("version") || doc["version"] != program_version)
      fail("", "version must be {}", program_version);
    sampler_program p;
    p.name = string_field(doc, "name", "");
    check_name(p.name);
    p.summary = doc.contains("summary") ? string_field(doc, "summary", "") : "";
    p.layer = string_field(doc, "layer", "");
    if (!doc.contains("hop") || !doc["hop"].is_array() || doc["hop"].empty())
      fail("", "hop must list the steps of one hop");
    for (std::size_t i = 0; i < doc["hop"].size(); ++i)
      p.hop.push_back(read_step(doc["hop"][i], i));
    p.sources = string_field(doc, "sources", "");
    p.block = string_field(doc, "block", "");
    expect_kind(p.sources, value_kind::vertices, "sources", "");
    expect_kind(p.block, value_kind::block, "block", "");
    const auto& block_sources = values_.at(p.block).sources;
    if (block_sources != p.sources)
      fail("",
           "block '{}' has the positions in '{}' as columns, not in the sources '{}' the hop "
           "hands on",
           p.block, block_sources, p.sources);
    return p;
  }

 private:
  template <class... Args>
  [[noreturn]] void fail(const std::string& where, fmt::format_string<Args...> format,
                         Args&&... args) const {
    throw option_error(fmt::format("{}: sampler program{}{}: {}", origin_,
                                   name_.empty() ? "" : fmt::format(" '{}'", name_), where,
                                   fmt::format(format, std::forward<Args>(args)...)));
  }

  void check_name(const std::string& name) {
    const bool well_formed =
        !name.empty() && name.size() <= 64 && std::ranges::all_of(name, [](char c) {
          return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
        });
    if (!well_formed) fail("", "name must be 1 to 64 of a-z, 0-9, '-' and '_'; got '{}'", name);
    name_ = name;
  }

  void check_keys(const json& object, const std::vector<std::string_view>& allowed,
                  const std::string& where) const {
    for (const auto& [key, value] : object.items())
      if (std::ranges::find(allowed, key) == allowed.end())
        fail(where, "unknown field '{}' (fields: {})", key, fmt::join(allowed, ", "));
  }

  std::string string_field(const json& object, std::string_view key,
                           const std::string& where) const {
    const auto it = object.find(key);
    if (it == object.end() || !it->is_string()) fail(where, "{} must be a string", key);
    return it->get<std::string>();
  }

  bool bool_field(const json& object, std::string_view key, const std::string& where) const {
    const auto it = object.find(key);
    if (it == object.end()) return false;
    if (!it->is_boolean()) fail(where, "{} must be true or false", key);
    return it->get<bool>();
  }

  template <class Choice>
  Choice choice_field(const json& object, std::string_view key,
                      const std::map<std::string, Choice, std::less<>>& choices, Choice fallback,
                      const std::string& where) const {
    if (!object.contains(key)) return fallback;
    const std::string given = string_field(object, key, where);
    const auto it = choices.find(given);
    if (it == choices.end()) {
      std::vector<std::string> names;
      for (const auto& [name, value] : choices) names.push_back(name);
      fail(where, "{} must be one of {}; got '{}'", key, fmt::join(names, ", "), given);
    }
    return it->second;
  }

  const value_info& info_of(const std::string& name, std::string_view key,
                            const std::string& where) const {
    static const value_info frontier{.kind = value_kind::vertices};
    if (name == "frontier") return frontier;
    const auto it = values_.find(name);
    if (it == values_.end())
      fail(where, "{} '{}' is not made by an earlier step (or is 'frontier')", key, name);
    if (consumed_.contains(name))
      fail(where, "{} '{}' was normalised in place by an earlier step; read that step's output",
           key, name);
    return it->second;
  }

  value_kind kind_of(const std::string& name, std::string_view key,
                     const std::string& where) const {
    return info_of(name, key, where).kind;
  }

  void expect_kind(const std::string& name, value_kind kind, std::string_view key,
                   const std::string& where) const {
    const auto found = kind_of(name, key, where);
    if (found != kind)
      fail(where, "{} '{}' is {}; it must be {}", key, name, kind_name(found), kind_name(kind));
  }

  void make(const std::string& name, value_info info, const std::string& where) {
    if (name.empty() || name == "frontier" || values_.contains(name))
      fail(where, "out '{}' must be a new name ('frontier' and earlier outputs are taken)", name);
    values_.emplace(name, std::move(info));
  }

  // induce's inverse_probabilities: a multiply of A + I (every destination
  // has a probability) from which the sources were drawn (every drawn vertex
  // has one), so that no 1/p is 1/0.
  void check_probabilities(const program_step& step, const std::string& where) const {
    const auto& p = info_of(step.inverse_probabilities, "inverse_probabilities", where);
    if (p.kind != value_kind::minibatch_matrix || p.columns_of != step.inverse_probabilities ||
        !p.with_self_loops)
      fail(where,
           "inverse_probabilities '{}' must be a multiply with self_loops, which gives "
           "every destination a probability",
           step.inverse_probabilities);
    if (info_of(step.input, "sources", where).columns_of != step.inverse_probabilities)
      fail(where,
           "sources '{}' must be the sources of '{}' or of its draw, so that every source "
           "has a probability there",
           step.input, step.inverse_probabilities);
  }

  program_step read_step(const json& object, std::size_t index) {
    std::string where = fmt::format(", hop step {}", index);
    if (!object.is_object()) fail(where, "must be a JSON object");
    const std::string op = string_field(object, "op", where);
    const auto spec = std::ranges::find(operation_specs(), op, &operation_spec::name);
    if (spec == operation_specs().end())
      fail(where, "op must be one of {}; got '{}'", fmt::join(operation_names(), ", "), op);
    where += fmt::format(" ({})", op);
    std::vector<std::string_view> keys{"op"};
    if (!spec->input_key.empty()) keys.push_back(spec->input_key);
    keys.insert(keys.end(), spec->keys.begin(), spec->keys.end());
    check_keys(object, keys, where);

    program_step step{.operation = spec->operation};
    value_kind input_kind = value_kind::vertices;
    if (!spec->input_key.empty()) {
      step.input = string_field(object, spec->input_key, where);
      input_kind = kind_of(step.input, spec->input_key, where);
    }
    step.output = string_field(object, "out", where);
    const auto wrong_input = [&](std::string_view wanted) {
      fail(where, "{} '{}' is {}; it must be {}", spec->input_key, step.input,
           kind_name(input_kind), wanted);
    };
    switch (step.operation) {
      case program_operation::frontier_rows:
        make(step.output, {.kind = value_kind::frontier_rows}, where);
        break;
      case program_operation::frontier_selection:
        step.scale = choice_field<selection_scale>(
            object, "scale",
            {{"one", selection_scale::one}, {"gcn-squared", selection_scale::gcn_squared}},
            selection_scale::one, where);
        make(step.output, {.kind = value_kind::minibatch_matrix}, where);
        break;
      case program_operation::multiply:
        if (input_kind != value_kind::minibatch_matrix)
          wrong_input("a per-minibatch matrix (frontier_selection)");
        step.self_loops = bool_field(object, "self_loops", where);
        make(step.output,
             {.kind = value_kind::minibatch_matrix,
              .columns_of = step.output,
              .with_self_loops = step.self_loops},
             where);
        break;
      case program_operation::sample_rows:
        if (input_kind != value_kind::frontier_rows && input_kind != value_kind::minibatch_matrix)
          wrong_input("the frontier's rows or a per-minibatch matrix");
        if (drew_)
          fail(where,
               "a hop draws once: a second sample_rows would reuse the first one's random "
               "streams");
        drew_ = true;
        step.weights = choice_field<kernels::weighting>(
            object, "weights",
            {{"uniform", kernels::weighting::uniform}, {"value", kernels::weighting::by_value}},
            kernels::weighting::uniform, where);
        step.replacement = bool_field(object, "replacement", where) ? kernels::replacement::with
                                                                    : kernels::replacement::without;
        step.shared_variates = choice_field<bool>(
            object, "variates", {{"independent", false}, {"shared", true}}, false, where);
        if (step.shared_variates && (input_kind != value_kind::frontier_rows ||
                                     step.weights != kernels::weighting::uniform ||
                                     step.replacement != kernels::replacement::without))
          fail(where,
               "variates 'shared' (LABOR-0's draw) takes the frontier's rows, uniformly "
               "and without replacement");
        make(step.output,
             {.kind = input_kind == value_kind::frontier_rows ? value_kind::destination_draw
                                                              : value_kind::minibatch_matrix,
              .columns_of = info_of(step.input, "matrix", where).columns_of},
             where);
        break;
      case program_operation::relabel:
        if (input_kind != value_kind::destination_draw)
          wrong_input("a per-destination draw (sample_rows of frontier_rows)");
        step.block = string_field(object, "block", where);
        make(step.output, {.kind = value_kind::vertices}, where);
        make(step.block, {.kind = value_kind::block, .sources = step.output}, where);
        break;
      case program_operation::sources:
        if (input_kind != value_kind::minibatch_matrix) wrong_input("a per-minibatch matrix");
        make(step.output,
             {.kind = value_kind::vertices,
              .columns_of = info_of(step.input, "matrix", where).columns_of},
             where);
        break;
      case program_operation::induce:
        if (input_kind != value_kind::vertices) wrong_input("a vertex list");
        step.self_loops = bool_field(object, "self_loops", where);
        if (object.contains("inverse_probabilities")) {
          step.inverse_probabilities = string_field(object, "inverse_probabilities", where);
          check_probabilities(step, where);
        }
        make(step.output, {.kind = value_kind::block, .sources = step.input}, where);
        break;
      case program_operation::normalize_rows:
        if (input_kind != value_kind::block) wrong_input("a block");
        make(step.output, {.kind = value_kind::block, .sources = values_.at(step.input).sources},
             where);
        consumed_.insert(step.input);
        break;
    }
    return step;
  }

  std::string origin_;
  std::string name_;
  std::map<std::string, value_info, std::less<>> values_;
  std::set<std::string, std::less<>> consumed_;
  bool drew_ = false;
};

json step_json(const program_step& step) {
  const auto& spec = spec_of(step.operation);
  json out{{"op", spec.name}};
  if (!spec.input_key.empty()) out[std::string(spec.input_key)] = step.input;
  switch (step.operation) {
    case program_operation::frontier_selection:
      out["scale"] = step.scale == selection_scale::one ? "one" : "gcn-squared";
      break;
    case program_operation::multiply:
      out["self_loops"] = step.self_loops;
      break;
    case program_operation::sample_rows:
      out["weights"] = step.weights == kernels::weighting::uniform ? "uniform" : "value";
      out["replacement"] = step.replacement == kernels::replacement::with;
      if (step.shared_variates) out["variates"] = "shared";
      break;
    case program_operation::relabel:
      out["block"] = step.block;
      break;
    case program_operation::induce:
      out["self_loops"] = step.self_loops;
      if (!step.inverse_probabilities.empty())
        out["inverse_probabilities"] = step.inverse_probabilities;
      break;
    default:
      break;
  }
  out["out"] = step.output;
  return out;
}

// A registered program with the strings its entry's views point into; kept
// in a deque, so entries never move.
struct registered_program {
  sampler_program program;
  std::string canonical;
  std::string summary;
  sampler_entry entry;
};

struct program_registry {
  std::mutex mutex;
  std::deque<registered_program> programs;
};

program_registry& registry() {
  static program_registry r;
  return r;
}

std::unique_ptr<sampling_algorithm> make_program(sampling_context& context) {
  const sampler_program* program = find_sampler_program(context.options.kind);
  BULKGNN_EXPECTS(program != nullptr, "sampler_options.kind: no sampler program named '{}'",
                  context.options.kind);
  return detail::make_program_sampling(context, *program);
}

}  // namespace

bool sampler_program::reads_frontier_rows(const program_step& step) const {
  return std::ranges::any_of(hop, [&](const program_step& made) {
    return made.operation == program_operation::frontier_rows && made.output == step.input;
  });
}

fanout_unit sampler_program::fanout() const {
  // The one draw reads the frontier's rows or a per-minibatch matrix (the
  // checks allow nothing else).
  const auto draw =
      std::ranges::find(hop, program_operation::sample_rows, &program_step::operation);
  return draw == hop.end() || reads_frontier_rows(*draw) ? fanout_unit::per_destination
                                                         : fanout_unit::per_minibatch;
}

bool sampler_program::per_destination_only() const {
  return std::ranges::none_of(hop, [](const program_step& step) {
    return step.operation == program_operation::frontier_selection ||
           step.operation == program_operation::induce;
  });
}

sampler_program parse_sampler_program(std::string_view json_text, std::string_view origin) {
  return program_reader(origin).read(json_text);
}

std::string to_json(const sampler_program& program) {
  json steps = json::array();
  for (const auto& step : program.hop) steps.push_back(step_json(step));
  const json doc{{"format", program_format},   {"version", program_version}, {"name", program.name},
                 {"summary", program.summary}, {"layer", program.layer},     {"hop", steps},
                 {"sources", program.sources}, {"block", program.block}};
  return doc.dump(2);
}

const sampler_entry& register_sampler_program(const sampler_program& program) {
  const std::string canonical = to_json(program);
  // A program built in code is checked as one read from JSON is.
  (void)parse_sampler_program(canonical, "register_sampler_program");
  // A name the table or an alias already has is refused before the lock:
  // find_sampler takes it too.
  for (const auto& entry : sampler_table())
    BULKGNN_EXPECTS(entry.name != program.name &&
                        std::ranges::find(entry.aliases, program.name) == entry.aliases.end(),
                    "sampler program '{}': a built-in sampler has that name; choose another",
                    program.name);
  auto& r = registry();
  const std::lock_guard lock(r.mutex);
  for (const auto& known : r.programs) {
    if (known.program.name != program.name) continue;
    BULKGNN_EXPECTS(known.canonical == canonical,
                    "sampler program '{}': a different program is registered under that name "
                    "(loaders may be using it); choose another name",
                    program.name);
    return known.entry;
  }
  auto& added = r.programs.emplace_back();
  added.program = program;
  added.canonical = canonical;
  added.summary = program.summary.empty()
                      ? fmt::format("sampler program ({} steps per hop)", program.hop.size())
                      : program.summary;
  added.entry = {.name = added.program.name,
                 .summary = added.summary,
                 .fanout = added.program.fanout(),
                 .layer = added.program.layer,
                 .make = make_program};
  return added.entry;
}

std::vector<const sampler_entry*> registered_programs() {
  auto& r = registry();
  const std::lock_guard lock(r.mutex);
  std::vector<const sampler_entry*> entries;
  for (const auto& p : r.programs) entries.push_back(&p.entry);
  return entries;
}

const sampler_program* find_sampler_program(std::string_view name) {
  auto& r = registry();
  const std::lock_guard lock(r.mutex);
  for (const auto& p : r.programs)
    if (p.program.name == name) return &p.program;
  return nullptr;
}

}  // namespace bulkgnn::sampler
