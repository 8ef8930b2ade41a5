#include "bulkgnn/distributed/agreement.hpp"

#include "bulkgnn/core/hash.hpp"
#include "bulkgnn/distributed/mpi_session.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string_view>

namespace bulkgnn::distributed {

namespace {

// "name\0value\0" per setting.
std::string serialise(const std::vector<shared_setting>& settings) {
  std::string text;
  for (const auto& s : settings) {
    text += s.name;
    text += '\0';
    text += s.value;
    text += '\0';
  }
  return text;
}

std::vector<shared_setting> deserialise(std::string_view text) {
  std::vector<shared_setting> settings;
  while (!text.empty()) {
    const auto name_end = text.find('\0');
    const auto value_end = text.find('\0', name_end + 1);
    settings.push_back({std::string(text.substr(0, name_end)),
                        std::string(text.substr(name_end + 1, value_end - name_end - 1))});
    text.remove_prefix(value_end + 1);
  }
  return settings;
}

// Of the settings sorted by name, so that the same settings in another order
// (another build of the command) agree.
std::uint64_t hash_of(std::vector<shared_setting> settings) {
  std::ranges::sort(settings, {}, &shared_setting::name);
  const std::string text = serialise(settings);
  digest_hasher hash;
  hash.add(text.size());
  for (const char c : text) hash.add(static_cast<unsigned char>(c));
  return hash.value();
}

// "rank 1", "ranks 0, 2-3".
std::string rank_list(const std::vector<int>& ranks) {
  std::vector<std::string> runs;
  for (std::size_t i = 0; i < ranks.size();) {
    std::size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    runs.push_back(j == i ? fmt::format("{}", ranks[i]) : fmt::format("{}-{}", ranks[i], ranks[j]));
    i = j + 1;
  }
  return fmt::format("{} {}", ranks.size() == 1 ? "rank" : "ranks", fmt::join(runs, ", "));
}

std::string shown(const std::optional<std::string>& value) {
  if (!value) return "nothing";
  return value->empty() ? "''" : *value;
}

// "3 on ranks 0, 2-3; 5 on rank 1" (values in the order of their first rank).
std::string who_holds_what(const std::vector<std::optional<std::string>>& by_rank) {
  std::vector<std::pair<std::optional<std::string>, std::vector<int>>> groups;
  for (int r = 0; r < static_cast<int>(by_rank.size()); ++r) {
    const auto found = std::ranges::find(groups, by_rank[r], [](const auto& g) { return g.first; });
    if (found == groups.end())
      groups.push_back({by_rank[r], {r}});
    else
      found->second.push_back(r);
  }
  std::vector<std::string> parts;
  for (const auto& [value, ranks] : groups)
    parts.push_back(fmt::format("{} on {}", shown(value), rank_list(ranks)));
  return fmt::format("{}", fmt::join(parts, "; "));
}

}  // namespace

std::string describe_disagreement(const std::vector<std::vector<shared_setting>>& by_rank) {
  std::vector<std::string> names;  // in order of first appearance
  std::vector<std::map<std::string, std::string>> values(by_rank.size());
  for (std::size_t r = 0; r < by_rank.size(); ++r)
    for (const auto& s : by_rank[r]) {
      if (std::ranges::find(names, s.name) == names.end()) names.push_back(s.name);
      values[r][s.name] = s.value;
    }
  std::vector<std::string> differences;
  for (const auto& name : names) {
    std::vector<std::optional<std::string>> held;
    for (const auto& rank_values : values) {
      const auto found = rank_values.find(name);
      held.push_back(found == rank_values.end() ? std::nullopt
                                                : std::optional<std::string>(found->second));
    }
    if (std::ranges::adjacent_find(held, std::ranges::not_equal_to{}) != held.end())
      differences.push_back(fmt::format("{} ({})", name, who_holds_what(held)));
  }
  if (differences.empty()) return {};
  return fmt::format("the ranks disagree on {}, which must be the same on every rank",
                     fmt::join(differences, ", "));
}

void require_same_settings(comm::communicator& ranks, const std::vector<shared_setting>& settings) {
  const auto hashes = ranks.all_gather(hash_of(settings));
  if (std::ranges::adjacent_find(hashes, std::ranges::not_equal_to{}) == hashes.end()) return;
  // Every rank saw the same hashes, so every rank is here.
  const std::string mine = serialise(settings);
  const auto sizes = ranks.all_gather(static_cast<std::int64_t>(mine.size()));
  const auto all = ranks.all_gather_v(std::span<const char>(mine));
  const std::string_view texts(all.data(), all.size());
  std::vector<std::vector<shared_setting>> by_rank;
  std::size_t offset = 0;
  for (const auto size : sizes) {
    by_rank.push_back(deserialise(texts.substr(offset, static_cast<std::size_t>(size))));
    offset += static_cast<std::size_t>(size);
  }
  const auto message = describe_disagreement(by_rank);
  throw collective_error(message.empty() ? "the ranks' settings differ (their hashes do)"
                                         : message);
}

}  // namespace bulkgnn::distributed
