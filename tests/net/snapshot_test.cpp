// Snapshots: built from a configuration with stable backend identities, and leased per
// request by a worker's cache, which keeps a replaced snapshot until its last request ends.
#include "smartlb/net/snapshot.hpp"

#include <gtest/gtest.h>

namespace smartlb::net {
namespace snapshot_test {  // named, not anonymous: tests/CMakeLists.txt

config::Config two_backends(const std::string& first, const std::string& second) {
  config::Config cfg;
  for (const auto& name : {first, second}) {
    config::BackendConfig b;
    b.name = name;
    b.api_key = "key-" + name;
    cfg.backends.push_back(b);
  }
  return cfg;
}

TEST(Snapshot, BackendsKeepTheirIdentityAcrossConfigurations) {
  routing::BackendIds ids;
  const auto a = make_snapshot(two_backends("east", "west"), ids);
  const auto b = make_snapshot(two_backends("west", "north"), ids);
  EXPECT_EQ(b->table.member(0).id, a->table.member(1).id) << "west";
  EXPECT_EQ(b->table.member(1).id.value, 2u) << "north is new";
  EXPECT_EQ(b->prepared[0].bearer, "Bearer key-west") << "credentials follow the table's positions";
  EXPECT_EQ(b->backends[1].name, "north");
}

TEST(SnapshotCache, ARequestKeepsItsSnapshotWhileANewOneIsPublished) {
  routing::BackendIds ids;
  base::Published<Snapshot> published(make_snapshot(two_backends("east", "west"), ids));
  SnapshotCache cache(published);
  {
    const auto old_lease = cache.acquire();
    EXPECT_EQ(old_lease->backends[0].name, "east");
    published.publish(make_snapshot(two_backends("north", "south"), ids));
    const auto new_lease = cache.acquire();
    EXPECT_EQ(new_lease->backends[0].name, "north") << "a new request routes with the new one";
    EXPECT_EQ(old_lease->backends[0].name, "east") << "the request in flight keeps its own";
    EXPECT_EQ(cache.held(), 2u);
  }
  EXPECT_EQ(cache.held(), 1u) << "the replaced one goes with its last request";
  EXPECT_EQ(cache.acquire()->backends[0].name, "north");
}

TEST(SnapshotCache, AnUnusedReplacedSnapshotIsDroppedAtOnce) {
  routing::BackendIds ids;
  base::Published<Snapshot> published(make_snapshot(two_backends("a", "b"), ids));
  SnapshotCache cache(published);
  { const auto lease = cache.acquire(); }
  published.publish(make_snapshot(two_backends("c", "d"), ids));
  { const auto lease = cache.acquire(); }
  EXPECT_EQ(cache.held(), 1u);
}

}  // namespace snapshot_test
}  // namespace smartlb::net
