#include "smartlb/app/file_watch.hpp"

#include <sys/stat.h>

namespace smartlb::app {

FileStamp stamp_of(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return {};
  FileStamp s;
  s.device = st.st_dev;
  s.inode = st.st_ino;
  s.size = static_cast<std::uint64_t>(st.st_size);
  s.mtime_ns = static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
  s.exists = true;
  return s;
}

FileWatch::FileWatch(std::string path, FileStamp loaded, std::chrono::milliseconds interval,
                     std::function<void()> on_change)
    : path_(std::move(path)),
      on_change_(std::move(on_change)),
      last_(loaded),
      thread_(interval, [this] { check(); }) {}

void FileWatch::check() {
  const FileStamp now = stamp_of(path_);
  if (!now.exists || now == last_) return;
  last_ = now;
  on_change_();
}

}  // namespace smartlb::app
