#include "smartlb/app/file_watch.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <mutex>

namespace smartlb {
namespace file_watch_test {  // named, not anonymous: tests/CMakeLists.txt

namespace fs = std::filesystem;

struct Changes {
  std::mutex mutex;
  std::condition_variable cv;
  int count = 0;
  void add() {
    std::lock_guard lock(mutex);
    ++count;
    cv.notify_all();
  }
  // Waits (bounded, so a broken watch fails instead of hanging) until `n` changes were seen.
  bool reach(int n) {
    std::unique_lock lock(mutex);
    return cv.wait_for(lock, std::chrono::seconds(20), [&] { return count >= n; });
  }
  int seen() {
    std::lock_guard lock(mutex);
    return count;
  }
};

fs::path temp_dir() {
  fs::path dir = fs::path(::testing::TempDir()) / ("smartlb_watch_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

void write(const fs::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::trunc);
  out << text;
}

TEST(FileStamp, DiffersWhenTheContentsChangeSize) {
  const fs::path dir = temp_dir();
  write(dir / "a", "one");
  const app::FileStamp first = app::stamp_of(dir / "a");
  EXPECT_TRUE(first.exists);
  write(dir / "a", "three");
  EXPECT_NE(app::stamp_of(dir / "a"), first);
  EXPECT_FALSE(app::stamp_of(dir / "missing").exists);
  fs::remove_all(dir);
}

TEST(FileWatch, CallsBackOncePerChangeAndAfterASymlinkSwap) {
  // The ConfigMap layout: config.yaml -> ..data/config.yaml, ..data -> a versioned directory.
  const fs::path dir = temp_dir();
  fs::create_directories(dir / "v1");
  fs::create_directories(dir / "v2");
  write(dir / "v1" / "config.yaml", "rules: []\n");
  write(dir / "v2" / "config.yaml", "rules: [] # the second version\n");
  fs::create_directory_symlink(dir / "v1", dir / "..data");
  fs::create_symlink(dir / "..data" / "config.yaml", dir / "config.yaml");

  Changes changes;
  {
    const std::string path = (dir / "config.yaml").string();
    app::FileWatch watch(path, app::stamp_of(path), std::chrono::milliseconds(5), [&] { changes.add(); });
    // Swap the directory link atomically, as kubelet does.
    fs::create_directory_symlink(dir / "v2", dir / "..data_tmp");
    fs::rename(dir / "..data_tmp", dir / "..data");
    ASSERT_TRUE(changes.reach(1)) << "the swap was not seen";
    // An in-place edit that changes the size.
    write(dir / "v2" / "config.yaml", "rules: [] # the third version, longer\n");
    ASSERT_TRUE(changes.reach(2)) << "the edit was not seen";
  }
  EXPECT_EQ(changes.seen(), 2) << "no change, no call (and none after the watch ended)";
  fs::remove_all(dir);
}

TEST(FileWatch, AChangeBeforeTheWatchStartsIsNotMissed) {
  const fs::path dir = temp_dir();
  write(dir / "c.yaml", "first\n");
  const app::FileStamp loaded = app::stamp_of((dir / "c.yaml").string());  // the version the caller read
  write(dir / "c.yaml", "second, longer\n");                               // changed before the watch exists
  Changes changes;
  {
    app::FileWatch watch((dir / "c.yaml").string(), loaded, std::chrono::milliseconds(5),
                         [&] { changes.add(); });
    ASSERT_TRUE(changes.reach(1)) << "the change made before the watch was lost";
  }
  EXPECT_EQ(changes.seen(), 1);
  fs::remove_all(dir);
}

}  // namespace file_watch_test
}  // namespace smartlb
