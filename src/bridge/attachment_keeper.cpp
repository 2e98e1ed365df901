// The attachment keeper (see attachment_keeper.h): image sniffing, and each channel's folder
// deleted after its idle spell by a sweep that runs while anything is tracked.
#include "bridge/attachment_keeper.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "core/log.h"

namespace pf {

namespace fs = std::filesystem;

std::string image_type(const std::string& path) {
  char head[12] = {};
  std::ifstream in(path, std::ios::binary);
  in.read(head, sizeof head);
  if (in.gcount() < 4) return "";  // unread bytes stay zero: no signature matches them
  if (std::memcmp(head, "\x89PNG\r\n\x1a\n", 8) == 0) return "image/png";
  if (std::memcmp(head, "\xFF\xD8\xFF", 3) == 0) return "image/jpeg";
  if (std::memcmp(head, "GIF87a", 6) == 0 || std::memcmp(head, "GIF89a", 6) == 0) return "image/gif";
  if (std::memcmp(head, "RIFF", 4) == 0 && std::memcmp(head + 8, "WEBP", 4) == 0) return "image/webp";
  return "";
}

AttachmentKeeper::AttachmentKeeper(boost::asio::io_context& io,
                                   std::function<bool(const std::string&)> busy)
    : io_(io), busy_(std::move(busy)) {}

void AttachmentKeeper::touch(const std::string& channel_key, const std::string& folder) {
  folders_[folder] = Folder{channel_key, std::chrono::system_clock::now()};
  arm();
}

void AttachmentKeeper::adopt(const std::string& root) {
  if (!adopted_.insert(root).second) return;
  std::error_code ec;
  for (fs::directory_iterator it(root + "/.pilotfish/attachments", ec), end; !ec && it != end;
       it.increment(ec)) {
    std::string folder = it->path().string();
    if (!it->is_directory(ec) || folders_.count(folder)) continue;
    fs::file_time_type newest = fs::last_write_time(it->path(), ec);
    for (fs::directory_iterator f(it->path(), ec), fend; !ec && f != fend; f.increment(ec))
      newest = std::max(newest, f->last_write_time(ec));
    auto last = std::chrono::time_point_cast<std::chrono::system_clock::duration>(
        std::chrono::file_clock::to_sys(newest));
    folders_[folder] = Folder{"", last};
  }
  arm();
}

void AttachmentKeeper::stop() {
  if (timer_) timer_->cancel();
  timer_.reset();
  waiting_ = false;
}

void AttachmentKeeper::arm() {
  if (folders_.empty()) return;
  auto every = std::clamp<std::chrono::milliseconds>(keep_ / 2, std::chrono::milliseconds(100),
                                                     std::chrono::minutes(1));
  auto due = std::chrono::steady_clock::now() + every;
  if (!timer_) timer_ = std::make_shared<boost::asio::steady_timer>(io_);
  else if (waiting_ && timer_->expiry() <= due) return;  // a sweep comes soon enough
  timer_->expires_at(due);  // a later wait is cancelled (a shorter keep was set)
  waiting_ = true;
  std::weak_ptr<boost::asio::steady_timer> alive = timer_;
  timer_->async_wait([this, alive](const boost::system::error_code& ec) {
    if (ec || alive.expired()) return;
    waiting_ = false;
    sweep();
    arm();
  });
}

void AttachmentKeeper::sweep() {
  auto now = std::chrono::system_clock::now();
  for (auto it = folders_.begin(); it != folders_.end();) {
    const Folder& f = it->second;
    bool idle = now - f.last >= keep_ && (f.channel_key.empty() || !busy_(f.channel_key));
    std::error_code ec;
    if (idle) fs::remove_all(it->first, ec);
    if (idle && ec) log::warn("bridge", "could not delete " + it->first + ": " + ec.message());
    if (idle && !ec) {
      log::debug("bridge", "attachments deleted after the idle spell: " + it->first);
      it = folders_.erase(it);
    } else {
      ++it;
    }
  }
}

}  // namespace pf
