#pragma once
// The Files API of one simulated resource: multipart uploads (purpose + file), retrieve,
// content, list, delete, and the files a batch writes. Only the ids it created exist here.
// Bounded: an upload that does not fit is refused (400 store_full; 413 when larger than the
// whole store), nothing is dropped. Pure: time and ids are injected; the engine locks.

#include "smartlb/sim/clock.hpp"
#include "smartlb/sim/object_ids.hpp"
#include "smartlb/sim/object_store.hpp"
#include "smartlb/sim/sim_exchange.hpp"

#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace smartlb::sim {

struct StoredFile {
  std::string id;  // file-...
  std::string filename;
  std::string purpose;
  std::int64_t created_at = 0;
  std::string content;
};

nlohmann::ordered_json file_object(const StoredFile& file);

class FilesStore {
 public:
  FilesStore(StoreLimits limits, IdMinter& ids, const Clock& clock);

  /// POST /files (multipart/form-data: purpose, file).
  SimResponse create(const SimRequest& request);
  SimResponse retrieve(std::string_view id) const;
  /// GET /files/{id}/content: the bytes as uploaded, application/octet-stream.
  SimResponse content(std::string_view id) const;
  /// GET /files (purpose, limit, order, after).
  SimResponse list(std::string_view query) const;
  SimResponse remove(std::string_view id);

  /// A file this resource writes itself (a batch's output); nullptr when the store is full.
  const StoredFile* add(std::string filename, std::string purpose, std::string content);
  const StoredFile* find(std::string_view id) const { return store_.find(id); }

  std::size_t size() const { return store_.size(); }
  std::size_t bytes() const { return store_.bytes(); }

 private:
  SimResponse not_found(std::string_view id) const;

  ObjectStore<StoredFile> store_;
  IdMinter& ids_;
  const Clock& clock_;
};

}  // namespace smartlb::sim
