// The attachment keeper: chat attachments on disk. Each channel saves what people attach in a
// folder of its own under its workspace's .pilotfish/attachments/ (never indexed, hidden from
// other channels and from run_command's sandbox); the keeper deletes a folder once its channel
// has been idle for bridge.attachments.keepMinutes (60), never while a turn runs there. Folders
// left by an earlier run are adopted with their newest file's time, so a restart loses nothing
// to delete. Also: what kind of image a file is, by its first bytes.
//
// Threads: the network thread only. Lifetime: construct and destroy there; stop() before the
// io_context goes. Errors: a folder that cannot be removed is logged and tried again.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>

#include "bridge/bridge_config.h"

namespace pf {

inline constexpr size_t kMaxImages = 4;                     // per message
inline constexpr int64_t kMaxImageBytes = 5 * 1024 * 1024;  // per image (Anthropic's limit)

// "image/png", "image/jpeg", "image/gif" or "image/webp" by the file's first bytes; "" for any
// other file (or one that cannot be read).
std::string image_type(const std::string& path);

// bridge.attachments.keepMinutes as a duration.
inline std::chrono::milliseconds keep_of(const BridgeConfig& bridge) {
  return std::chrono::milliseconds(static_cast<int64_t>(bridge.attachments_keep_minutes * 60000));
}

class AttachmentKeeper {
 public:
  // busy: whether a turn runs in the channel of that key now.
  AttachmentKeeper(boost::asio::io_context& io, std::function<bool(const std::string&)> busy);
  AttachmentKeeper(const AttachmentKeeper&) = delete;
  AttachmentKeeper& operator=(const AttachmentKeeper&) = delete;

  // How long a channel's folder outlives its last use (applies from the next sweep).
  void set_keep(std::chrono::milliseconds keep) { keep_ = keep; }
  // The channel of channel_key used its folder now (a file saved, a turn ended).
  void touch(const std::string& channel_key, const std::string& folder);
  // Tracks the attachment folders under root/.pilotfish/attachments/ not tracked yet, each as
  // last used when its newest file was written.
  void adopt(const std::string& root);
  size_t tracked() const { return folders_.size(); }
  void stop();

 private:
  struct Folder {
    std::string channel_key;  // "" for one adopted from an earlier run
    std::chrono::system_clock::time_point last;
  };
  void arm();
  void sweep();

  boost::asio::io_context& io_;
  std::function<bool(const std::string&)> busy_;
  std::chrono::milliseconds keep_{std::chrono::minutes(60)};
  std::map<std::string, Folder> folders_;  // by path
  std::set<std::string> adopted_;          // roots already scanned
  std::shared_ptr<boost::asio::steady_timer> timer_;
  bool waiting_ = false;  // a sweep is due at timer_'s expiry
};

}  // namespace pf
