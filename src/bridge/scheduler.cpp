// Scheduled prompts (see scheduler.h): times and cron expressions, the timers, firing, the
// tool and the command.
#include "net/awaitable.h"  // first: it makes Asio's coroutine header build

#include "bridge/scheduler.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>

#include <algorithm>
#include <cstdio>

#include "core/clock.h"
#include "core/log.h"
#include "core/text.h"
#include "index/schedule.h"

namespace pf {

namespace asio = boost::asio;
using nlohmann::json;

namespace {

std::string iso(int64_t ms, const std::string& zone_name) {
  TimeZone zone = TimeZone::load(zone_name);
  std::time_t t = static_cast<std::time_t>(ms / 1000);
  int off = zone.offset_at(t);
  std::time_t local = t + off;
  std::tm tm{};
  gmtime_r(&local, &tm);
  char buf[48];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d%s%02d:%02d", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, off < 0 ? "-" : "+",
                std::abs(off) / 3600, std::abs(off) % 3600 / 60);
  return std::string(buf) + (zone_name == "UTC" ? "" : " " + zone_name);
}

// "2026-12-01T15:00", with seconds, "Z" or "+hh:mm" optional; without an offset the time is the
// zone's wall time. nullopt when it is not such a time.
std::optional<int64_t> parse_run_at(const std::string& text, const TimeZone& zone) {
  int y, mo, d, h, mi, s = 0;
  char rest[16] = {};
  int n = std::sscanf(text.c_str(), "%4d-%2d-%2d%*1[T ]%2d:%2d%15s", &y, &mo, &d, &h, &mi, rest);
  if (n < 5 || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59) return std::nullopt;
  std::string r = rest;
  if (r.size() >= 3 && r[0] == ':') {
    s = std::atoi(r.substr(1, 2).c_str());
    r = r.substr(3);
  }
  std::tm tm{};
  tm.tm_year = y - 1900;
  tm.tm_mon = mo - 1;
  tm.tm_mday = d;
  tm.tm_hour = h;
  tm.tm_min = mi;
  tm.tm_sec = s;
  std::time_t wall = timegm(&tm);
  if (r == "Z" || r == "z") return static_cast<int64_t>(wall) * 1000;
  if (r.size() == 6 && (r[0] == '+' || r[0] == '-') && r[3] == ':') {
    int off = (std::atoi(r.substr(1, 2).c_str()) * 3600 + std::atoi(r.substr(4, 2).c_str()) * 60) *
              (r[0] == '-' ? -1 : 1);
    return static_cast<int64_t>(wall - off) * 1000;
  }
  if (!r.empty()) return std::nullopt;
  std::time_t utc = wall - zone.offset_at(wall);
  return static_cast<int64_t>(wall - zone.offset_at(utc)) * 1000;
}

// The next time a schedule fires after now, or 0 when it will not (a past one-off).
int64_t next_run(const ScheduleRecord& s, int64_t now_ms) {
  if (s.cron.empty()) return s.run_at_ms > now_ms ? s.run_at_ms : 0;
  std::time_t next = CronSchedule::parse(s.cron).next_after(static_cast<std::time_t>(now_ms / 1000),
                                                            TimeZone::load(s.timezone));
  return static_cast<int64_t>(next) * 1000;
}

std::string describe(const ScheduleRecord& s) {
  std::string when = s.cron.empty() ? "once at " + iso(s.run_at_ms, s.timezone)
                                    : "`" + s.cron + "` (" + s.timezone + ")";
  std::string out = "`" + s.id + "` " + when + (s.enabled ? "" : " **paused**");
  if (s.enabled && s.next_run_ms) out += ", next " + iso(s.next_run_ms, s.timezone);
  return out + ": " + s.prompt.substr(0, 120);
}

}  // namespace

Scheduler::Scheduler(asio::io_context& io, StateStore& state, Fire fire)
    : io_(io), state_(state), fire_(std::move(fire)) {}

void Scheduler::stop() {
  stopped_ = true;
  for (auto& [id, timer] : timers_) timer->cancel();
  timers_.clear();
}

void Scheduler::forget(const std::string& id) {
  if (auto it = timers_.find(id); it != timers_.end()) it->second->cancel();
  timers_.erase(id);
}

void Scheduler::arm(const ScheduleRecord& s) {
  forget(s.id);
  if (!s.enabled || s.next_run_ms == 0 || stopped_) return;
  auto timer = std::make_shared<asio::steady_timer>(
      io_, std::chrono::milliseconds(std::max<int64_t>(0, s.next_run_ms - unix_time_ms())));
  timers_[s.id] = timer;
  std::string id = s.id, bot = s.bot;
  timer->async_wait([this, id, bot](const boost::system::error_code& ec) {
    if (!ec) fire(bot, id);
  });
}

void Scheduler::start(ChannelAdapter& adapter) {
  int64_t now = unix_time_ms();
  std::map<std::string, int> missed;  // channel key -> missed one-offs
  for (ScheduleRecord s : state_.schedules(adapter.bot(), "")) {
    if (s.cron.empty() && s.run_at_ms <= now) {
      state_.delete_schedule(s.id);
      state_.add_schedule_run({s.id, s.channel_key, "missed", now});
      ++missed[s.channel_key];
      continue;
    }
    try {
      s.next_run_ms = next_run(s, now);
      state_.save_schedule(s);
      arm(s);
    } catch (const std::exception& e) {
      log::warn("bridge", "schedule " + s.id + ": " + e.what());
    }
  }
  for (const auto& [key, n] : missed) {
    std::string channel_id = key.substr(key.find(':') + 1);
    std::string text = "\u23F0 Missed " + std::to_string(n) + " scheduled task" +
                       (n == 1 ? "" : "s") +
                       " while the bridge was not running (see `/schedule history`).";
    ChannelAdapter* a = &adapter;
    asio::co_spawn(
        io_,
        [a, channel_id, text]() -> asio::awaitable<void> {
          try {
            co_await a->send_message(channel_id, text, std::string(), std::string());
          } catch (const std::exception& e) {
            log::warn("bridge", std::string("could not report missed schedules: ") + e.what());
          }
        },
        asio::detached);
  }
}

void Scheduler::fire(const std::string& bot, const std::string& id) {
  std::optional<ScheduleRecord> found;
  for (auto& s : state_.schedules(bot, ""))
    if (s.id == id) found = s;
  if (!found || !found->enabled || stopped_) return;
  ScheduleRecord s = *found;
  int64_t now = unix_time_ms();
  InboundMessage m;
  m.platform = s.channel_key.substr(0, s.channel_key.find(':'));
  m.bot = s.bot;
  m.channel_id = s.channel_key.substr(s.channel_key.find(':') + 1);
  m.username = s.created_by;
  m.text = s.prompt;
  m.post_id = "schedule:" + s.id + ":" + std::to_string(now);
  m.thread_root_id = s.thread_root;
  m.mentions_bot = true;
  m.created_at_ms = now;
  m.quiet = true;
  for (const auto& dm : state_.dms(s.bot)) m.is_dm = m.is_dm || dm.channel_key == s.channel_key;
  std::optional<bool> taken = fire_(std::move(m));
  if (!taken) return;  // the bot runs in another process now: that one fires it
  state_.add_schedule_run({s.id, s.channel_key, *taken ? "fired" : "failed", now});
  s.last_run_ms = now;
  if (s.cron.empty()) {
    state_.delete_schedule(s.id);
    timers_.erase(s.id);
    return;
  }
  s.next_run_ms = next_run(s, now + 1000);
  state_.save_schedule(s);
  arm(s);
}

json Scheduler::tool(const ScheduleSite& site, const json& args, const std::string& user) {
  std::string action = args.value("action", "create");
  if (action == "list") {
    json list = json::array();
    for (const auto& s : state_.schedules(site.bot, site.channel_key)) list.push_back(describe(s));
    return {{"schedules", list}};
  }
  std::string id =
      args.contains("id") && args["id"].is_string() ? args["id"].get<std::string>() : "";
  if (action == "cancel" || action == "pause" || action == "resume") {
    for (ScheduleRecord s : state_.schedules(site.bot, site.channel_key)) {
      if (s.id != id) continue;
      if (action == "cancel") {
        state_.delete_schedule(id);
        forget(id);
        return {{"cancelled", id}};
      }
      s.enabled = action == "resume";
      if (s.enabled) s.next_run_ms = next_run(s, unix_time_ms());
      state_.save_schedule(s);
      arm(s);
      return {{action == "pause" ? "paused" : "resumed", id}};
    }
    return {{"error", "no schedule " + id + " in this channel (list them with action list)"}};
  }
  if (action != "create") return {{"error", "action is create, list, cancel, pause or resume"}};
  ScheduleRecord s;
  s.id = random_id(8);
  s.channel_key = site.channel_key;
  s.bot = site.bot;
  s.thread_root = site.thread_root;
  s.created_by = user;
  s.prompt = args.value("prompt", "");
  if (s.prompt.empty()) return {{"error", "prompt is required: what to do when it fires"}};
  s.timezone = args.value("timezone", "UTC");
  s.cron = args.value("cron", "");
  std::string run_at = args.value("run_at", "");
  try {
    TimeZone zone = TimeZone::load(s.timezone);
    if (s.cron.empty() == run_at.empty())
      return {{"error", "give either cron (5 fields) or run_at (a time)"}};
    if (!s.cron.empty()) {
      CronSchedule::parse(s.cron);
    } else {
      std::optional<int64_t> at = parse_run_at(run_at, zone);
      if (!at)
        return {
            {"error", "run_at must be a time like 2026-12-01T15:00 (optionally with Z or +01:00)"}};
      if (*at <= unix_time_ms()) return {{"error", "run_at is in the past"}};
      s.run_at_ms = *at;
    }
    s.next_run_ms = next_run(s, unix_time_ms());
  } catch (const Error& e) {
    return {{"error", e.what()}};
  }
  state_.save_schedule(s);
  arm(s);
  return {{"created", s.id}, {"next_run", iso(s.next_run_ms, s.timezone)}};
}

std::string Scheduler::command(const ScheduleSite& site, const std::string& args) {
  std::string a = trim_space(args);
  std::string verb = ascii_lower(a.substr(0, a.find(' ')));
  std::string id = a.find(' ') == std::string::npos ? "" : trim_space(a.substr(a.find(' ') + 1));
  if (verb.empty() || verb == "list") {
    std::string out;
    for (const auto& s : state_.schedules(site.bot, site.channel_key))
      out += "- " + describe(s) + "\n";
    return out.empty() ? "No scheduled prompts in this channel." : "**Scheduled prompts**\n" + out;
  }
  if (verb == "history" || verb == "log") {
    std::string out;
    size_t n = 20;
    try {
      if (!id.empty()) n = static_cast<size_t>(std::clamp(std::stoi(id), 1, 100));
    } catch (const std::exception&) {
      return "\u274C `/schedule " + verb + " [n]`: n is a number of runs (1-100).";
    }
    for (const auto& r : state_.schedule_runs(site.channel_key, n))
      out += "- " + iso(r.at_ms, "UTC") + " `" + r.schedule_id + "` " + r.outcome + "\n";
    return out.empty() ? "No scheduled prompt has fired here yet." : "**Recent runs**\n" + out;
  }
  if (verb == "remove" || verb == "delete") verb = "cancel";
  if (verb == "cancel" || verb == "pause" || verb == "resume") {
    json r = tool(site, {{"action", verb}, {"id", id}}, "");
    if (r.contains("error")) return "\u274C " + r["error"].get<std::string>();
    return "Schedule `" + id + "` " +
           (verb == "cancel"  ? "cancelled"
            : verb == "pause" ? "paused"
                              : "resumed") +
           ".";
  }
  return "Use `/schedule list|history [n]|cancel ID|pause ID|resume ID` (remove and delete "
         "cancel, log is history).";
}

}  // namespace pf
