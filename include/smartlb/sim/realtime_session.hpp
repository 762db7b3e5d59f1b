#pragma once
// One Realtime API session over WebSocket, without the socket: the server's first event
// (session.created), then the server events each client event gets, in the GA protocol of the
// OpenAI SDK we test with:
//   session.update           -> session.updated (the whole session, fields replaced)
//   conversation.item.create -> conversation.item.created
//   response.create          -> response.created, response.output_item.added,
//                               response.content_part.added, response.output_text.delta (one
//                               per generated piece), response.output_text.done,
//                               response.content_part.done, response.output_item.done,
//                               response.done (with usage)
//   anything else, a binary frame or text that is not a JSON event -> an error event
// Input tokens grow with the conversation (every item and answer so far), so usage tells turns
// apart. Memory is bounded: the session keeps counts, not the items. Pure; one per connection.

#include "smartlb/sim/object_ids.hpp"
#include "smartlb/sim/responses_store.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace smartlb::sim {

struct RealtimeMessage {
  std::string text;         // one text frame: a JSON server event
  bool is_content = false;  // a generated piece (paced by --chunk-interval-ms)
};

struct RealtimeReply {
  std::vector<RealtimeMessage> messages;
  std::int64_t tokens_served = 0;  // usage.total_tokens of a response.done in it, else 0
};

class RealtimeSession {
 public:
  RealtimeSession(std::string model, GenerationSettings generation, std::uint64_t id_seed,
                  std::int64_t now_unix);

  /// session.created, sent once the handshake is done.
  RealtimeMessage opening();
  /// The events a client text frame gets.
  RealtimeReply on_text(std::string_view frame);
  /// A client binary frame: an error event (the protocol is JSON text).
  RealtimeReply on_binary();

  std::int64_t context_tokens() const { return context_tokens_; }

 private:
  RealtimeMessage event(std::string_view type, nlohmann::ordered_json fields, bool is_content = false);
  RealtimeReply error(std::string_view code, std::string message,
                      const nlohmann::ordered_json& client_event_id);
  RealtimeReply update_session(const nlohmann::ordered_json& client_event);
  RealtimeReply create_item(const nlohmann::ordered_json& client_event);
  RealtimeReply create_response(const nlohmann::ordered_json& client_event);

  GenerationSettings generation_;
  IdMinter ids_;
  nlohmann::ordered_json session_;
  std::int64_t context_tokens_ = 0;
  nlohmann::ordered_json last_item_id_ = nullptr;
};

}  // namespace smartlb::sim
