#pragma once
// One background thread for a keyed set of refresh loops (the Entra ID token cells, the token
// issuers' key sets): an entry is made on first use and its loop spawned once the thread runs
// (at start for the entries made before). `Entry` has `bool spawned`, touched under the lock.
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "smartlb/io/beast.hpp"

namespace smartlb::io {

template <class Entry>
class RefreshThread {
 public:
  // `spawn` starts an entry's loop on context(); called under the lock, on the caller's thread.
  explicit RefreshThread(std::function<void(Entry&)> spawn) : spawn_(std::move(spawn)) {}
  ~RefreshThread() { stop(); }
  RefreshThread(const RefreshThread&) = delete;
  RefreshThread& operator=(const RefreshThread&) = delete;

  // Finds or makes (`make()`, a unique_ptr<Entry>) the entry for `key`, calls `use(entry)`
  // under the lock and returns what it returns; the entry's loop runs if the thread does.
  template <class Make, class Use>
  auto with_entry(const std::string& key, Make&& make, Use&& use) {
    std::lock_guard lock(mutex_);
    auto it = entries_.find(key);
    if (it == entries_.end())
      it = entries_.emplace(key, make()).first;  // nothing empty left if make() throws
    Entry& e = *it->second;
    if (started_ && !e.spawned) spawn(e);
    return use(e);
  }

  // Calls `fn(entry)` for each entry, under the lock.
  template <class Fn>
  void for_each(Fn&& fn) const {
    std::lock_guard lock(mutex_);
    for (const auto& [key, e] : entries_) fn(*e);
  }

  std::mutex& mutex() const { return mutex_; }  // guards what the entries share with callers
  asio::io_context& context() { return ioc_; }

  void start() {
    {
      std::lock_guard lock(mutex_);
      if (started_) return;
      started_ = true;
      for (auto& [key, e] : entries_) spawn(*e);
    }
    work_.emplace(ioc_.get_executor());
    thread_ = std::thread([this] { ioc_.run(); });
  }

  void stop() {
    work_.reset();
    ioc_.stop();
    if (thread_.joinable()) thread_.join();
  }

 private:
  void spawn(Entry& e) {
    e.spawned = true;
    spawn_(e);
  }

  std::function<void(Entry&)> spawn_;
  mutable std::mutex mutex_;
  std::map<std::string, std::unique_ptr<Entry>> entries_;
  bool started_ = false;
  // Declared after the entries: destroyed first, with the coroutine frames that refer to them.
  asio::io_context ioc_;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work_;
  std::thread thread_;
};

}  // namespace smartlb::io
