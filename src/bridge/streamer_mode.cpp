// Streamer mode (see streamer_mode.h).
#include "bridge/streamer_mode.h"

#include <algorithm>
#include <regex>

#include "bridge/bridge_config.h"
#include "core/log.h"
#include "core/text.h"

namespace pf {

std::vector<std::string> hidden_models(const Config& config) {
  std::vector<std::regex> patterns;
  for (const std::string& p : bridge_config(config).streamer_hide)
    patterns.emplace_back(p, std::regex::ECMAScript | std::regex::icase);  // checked at load
  std::vector<std::string> out;
  for (const ProviderConfig& p : config.providers)
    for (const ModelConfig& m : p.models) {
      std::string id = p.name + ":" + m.id;
      for (const std::regex& r : patterns)
        if (std::regex_search(id, r)) {
          out.push_back(id);
          break;
        }
    }
  return out;
}

bool StreamerMode::on() {
  auto now = std::chrono::steady_clock::now();
  if (!cached_ || now - read_at_ > std::chrono::seconds(5)) {
    try {
      cached_ = state_.setting("streamerMode").value_or("off") == "on";
    } catch (const std::exception& e) {
      log::warn("bridge", std::string("streamer mode: ") + e.what());
      if (!cached_) cached_ = false;
    }
    read_at_ = now;
  }
  return *cached_;
}

std::string StreamerMode::command(const Config& config, const std::string& args) {
  std::string a = ascii_lower(trim_space(args));
  if (a == "on" || a == "off") {
    state_.set_setting("streamerMode", a);
    cached_ = a == "on";
    read_at_ = std::chrono::steady_clock::now();
  } else if (!a.empty()) {
    return "Use `/streamer-mode on` or `/streamer-mode off`.";
  }
  size_t n = hidden_models(config).size();
  std::string what = std::to_string(n) + " configured model" + (n == 1 ? "" : "s");
  return on() ? "\U0001F3A5 Streamer mode on: the names of " + what +
                    " (bridge.streamerMode.hide) are hidden in what the bridge posts."
              : "Streamer mode off: model names are shown (" + what + " would be hidden).";
}

std::string StreamerMode::mask(const Config& config, const std::string& text) {
  if (!on()) return text;
  std::vector<std::string> hidden = hidden_models(config);
  // Longest names first, so "p:model-x" goes before "model".
  std::vector<std::pair<std::string, std::string>> names;
  for (size_t i = 0; i < hidden.size(); ++i) {
    std::string shown = "Hidden Model " + std::to_string(i + 1);
    names.emplace_back(hidden[i], shown);
    names.emplace_back(hidden[i].substr(hidden[i].find(':') + 1), shown);
  }
  std::stable_sort(names.begin(), names.end(),
                   [](const auto& a, const auto& b) { return a.first.size() > b.first.size(); });
  std::string out = text;
  for (const auto& [name, shown] : names) {
    if (name.empty()) continue;
    for (size_t at = out.find(name); at != std::string::npos; at = out.find(name, at + shown.size()))
      out.replace(at, name.size(), shown);
  }
  return out;
}

}  // namespace pf
