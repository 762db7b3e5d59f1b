#pragma once
// Watches a file for changes and calls back once per change, from a thread of its own. It
// polls the file's identity (device, inode, size, modification time), following symlinks: a
// Kubernetes ConfigMap update swaps a symlink to a new directory, which inotify on the path
// would not see, and an editor's save replaces the inode. Polling once a second costs one
// stat() and catches both; ConfigMap updates take tens of seconds to arrive anyway.
#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>

#include "smartlb/app/periodic_thread.hpp"

namespace smartlb::app {

// What identifies a version of a file; all zero when it cannot be read.
struct FileStamp {
  std::uint64_t device = 0, inode = 0, size = 0;
  std::int64_t mtime_ns = 0;
  bool exists = false;
  friend bool operator==(const FileStamp&, const FileStamp&) = default;
};

FileStamp stamp_of(const std::string& path);

// The version of the file last loaded, by whichever path (SIGHUP, the watch): a version is
// loaded once, so an edit followed by SIGHUP does not reload twice when the watch sees it too.
class LoadedVersion {
 public:
  explicit LoadedVersion(FileStamp first = {}) : last_(first) {}
  // True (and `s` becomes the loaded version) unless `s` is the version loaded last.
  bool take(const FileStamp& s) {
    const std::lock_guard lock(mutex_);
    if (s.exists && s == last_) return false;
    last_ = s;
    return true;
  }

 private:
  std::mutex mutex_;
  FileStamp last_;
};

class FileWatch {
 public:
  // Calls `on_change` (on the watch's thread) each time the stamp differs from the last one
  // seen, starting from `loaded`: the stamp of the version the caller loaded, taken before it
  // read the file, so that a change made between that read and now is not missed. A file that
  // disappears is not a change (a ConfigMap swap passes through that state): its return is.
  FileWatch(std::string path, FileStamp loaded, std::chrono::milliseconds interval,
            std::function<void()> on_change);

 private:
  void check();

  std::string path_;
  std::function<void()> on_change_;
  FileStamp last_;         // only touched on the thread
  PeriodicThread thread_;  // last: it calls check() from the start
};

}  // namespace smartlb::app
