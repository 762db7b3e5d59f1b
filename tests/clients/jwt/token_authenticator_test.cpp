#include "smartlb/clients/jwt/token_authenticator.hpp"

#include <gtest/gtest.h>

#include <set>

#include "jwt_signer.hpp"
#include "smartlb/clients/client_auth.hpp"
#include "smartlb/clients/jwt/base64url.hpp"
#include "smartlb/clients/jwt/jwt.hpp"

namespace smartlb::clients::jwt {
namespace token_authenticator_test {  // named, not anonymous: tests/CMakeLists.txt

using smartlb::testing::b64;
using smartlb::testing::jwks_of;
using smartlb::testing::sign_jwt;
using smartlb::testing::TestRsaKey;
using smartlb::testing::unsigned_jwt;

constexpr const char* kTenant = "11111111-2222-3333-4444-555555555555";
constexpr const char* kIssuer = "https://login.microsoftonline.com/11111111-2222-3333-4444-555555555555/v2.0";

// RSA key generation is slow under ASan: one pair for the whole suite.
const TestRsaKey& key_a() {
  static const TestRsaKey k("key-a");
  return k;
}
const TestRsaKey& key_b() {
  static const TestRsaKey k("key-b");
  return k;
}

KeySet keys_of(const std::vector<const TestRsaKey*>& keys) {
  auto parsed = parse_jwks(jwks_of(keys));
  EXPECT_TRUE(parsed.keys) << parsed.error;
  return std::move(*parsed.keys);
}

class TokenAuthenticatorTest : public ::testing::Test {
 protected:
  TokenAuthenticatorTest() {
    clock.set_wall_epoch(std::chrono::system_clock::time_point(std::chrono::seconds(1'800'000'000)) -
                         base::Nanos(clock.now()));
    keys->fetch_succeeded(keys_of({&key_a()}));
  }

  std::int64_t now_s() const {
    return std::chrono::duration_cast<std::chrono::seconds>(clock.wall_now().time_since_epoch()).count();
  }

  // A user's delegated token for the API, valid for an hour.
  nlohmann::json user_claims() const {
    return {{"iss", kIssuer},        {"aud", "api://smartlb"},     {"exp", now_s() + 3600},
            {"nbf", now_s() - 10},   {"iat", now_s() - 10},        {"tid", kTenant},
            {"oid", "oid-alice"},    {"sub", "pairwise-sub"},      {"scp", "access"},
            {"azp", "app-chat"},     {"upn", "alice@example.com"}, {"roles", {"Reader"}},
            {"groups", {"g1", "g2"}}};
  }

  TokenAuthenticator make(std::vector<std::string> roles = {}) {
    IssuerRules rules;
    rules.name = "contoso";
    rules.issuers = tenant_issuers("https://login.microsoftonline.com/", kTenant);
    rules.audiences = {"api://smartlb", "00000000-aaaa-bbbb-cccc-000000000000"};
    rules.required_roles = std::move(roles);
    return TokenAuthenticator({TokenIssuer{rules, keys}});
  }

  TokenVerdict verify(const TokenAuthenticator& a, const std::string& token) {
    return a.verify(token, cache, clock);
  }
  std::optional<TokenRefusal> refusal(const TokenAuthenticator& a, const std::string& token) {
    const auto v = verify(a, token);
    if (v.token) return std::nullopt;
    return v.refusal;
  }

  base::ManualClock clock;
  std::shared_ptr<IssuerKeys> keys = std::make_shared<IssuerKeys>("test");
  VerifiedTokenCache cache;
};

TEST(Base64Url, DecodesUnpaddedAndRefusesEverythingElse) {
  EXPECT_EQ(base64url_decode("aGk"), "hi");
  EXPECT_EQ(base64url_decode("-_8"), std::string("\xfb\xff"));
  EXPECT_EQ(base64url_decode(""), "");
  EXPECT_FALSE(base64url_decode("aGk="));   // padding
  EXPECT_FALSE(base64url_decode("a+/k"));   // base64, not base64url
  EXPECT_FALSE(base64url_decode("aGkha"));  // a length no encoding has
  EXPECT_FALSE(base64url_decode("aGl"));    // non-zero leftover bits
  for (const std::string s : {"", "a", "ab", "abc", "abcd", "\x01\xff\x80"})
    EXPECT_EQ(base64url_decode(base64url_encode(s)), s);
}

TEST(Jwt, ParsesHeaderClaimsAndSignature) {
  const std::string token =
      unsigned_jwt({{"alg", "RS256"}, {"kid", "k1"}, {"typ", "JWT"}}, {{"a", 1}}) + "." + b64("sig");
  const auto t = parse_jwt(token);
  ASSERT_TRUE(t);
  EXPECT_EQ(t->alg, "RS256");
  EXPECT_EQ(t->kid, "k1");
  EXPECT_EQ(t->typ, "JWT");
  EXPECT_EQ(t->claims["a"], 1);
  EXPECT_EQ(t->signature, "sig");
  EXPECT_EQ(t->signing_input, token.substr(0, token.rfind('.')));
  EXPECT_TRUE(looks_like_jwt(token));
  EXPECT_FALSE(looks_like_jwt("sk-abc.def"));
}

TEST(Jwt, RefusesBadShapes) {
  const std::string header = b64(R"({"alg":"RS256"})"), claims = b64(R"({"a":1})");
  EXPECT_FALSE(parse_jwt(header + "." + claims));                         // two parts
  EXPECT_FALSE(parse_jwt(header + "." + claims + ".c2ln.eA"));            // four parts
  EXPECT_FALSE(parse_jwt(header + "." + claims + ".c2l=="));              // padded signature
  EXPECT_FALSE(parse_jwt(header + ".!!!." + "c2ln"));                     // not base64url
  EXPECT_FALSE(parse_jwt(header + "." + b64("{not json") + ".c2ln"));     // not JSON
  EXPECT_FALSE(parse_jwt(header + "." + b64("[1,2]") + ".c2ln"));         // not an object
  EXPECT_FALSE(parse_jwt(b64(R"({"alg":5})") + "." + claims + ".c2ln"));  // alg not a string
}

TEST(KeySetParsing, TakesRsaSigningKeysAndSkipsOthers) {
  nlohmann::json doc = nlohmann::json::parse(jwks_of({&key_a(), &key_b()}));
  doc["keys"][1]["use"] = "enc";
  doc["keys"].push_back({{"kty", "EC"}, {"kid", "ec"}});
  doc["keys"].push_back({{"kty", "RSA"}, {"kid", "short"}, {"n", b64("\x01\x02")}, {"e", "AQAB"}});
  const auto parsed = parse_jwks(doc.dump());
  ASSERT_TRUE(parsed.keys);
  EXPECT_EQ(parsed.keys->by_kid.size(), 1u);
  EXPECT_TRUE(parsed.keys->find("key-a"));
  EXPECT_FALSE(parse_jwks(R"({"keys":[]})").keys);
  EXPECT_FALSE(parse_jwks("nope").keys);
}

TEST(KeySetParsing, ReadsTheDiscoveryDocumentsJwksUri) {
  EXPECT_EQ(parse_discovery(R"({"jwks_uri":"https://login.example/keys"})").jwks_uri,
            "https://login.example/keys");
  EXPECT_FALSE(parse_discovery(R"({"jwks_uri":"file:///etc/passwd"})").error.empty());
  EXPECT_FALSE(parse_discovery(R"({"issuer":"x"})").error.empty());
}

TEST_F(TokenAuthenticatorTest, AcceptsAGoodTokenAndNamesTheCaller) {
  const auto a = make();
  const auto v = verify(a, sign_jwt(key_a(), user_claims()));
  ASSERT_TRUE(v.token) << label(v.refusal);
  EXPECT_EQ(v.token->name, "contoso");
  EXPECT_EQ(v.token->principal, "user:oid-alice");
  EXPECT_EQ(v.token->subjects,
            (std::vector<std::string>{"user:oid-alice", "app:app-chat", "role:Reader", "group:g1", "group:g2",
                                      "tenant:" + std::string(kTenant)}));
}

TEST_F(TokenAuthenticatorTest, AcceptsTheV1IssuerAndAnAudienceArray) {
  const auto a = make();
  auto c = user_claims();
  c["iss"] = "https://sts.windows.net/" + std::string(kTenant) + "/";
  c["aud"] = {"other", "00000000-aaaa-bbbb-cccc-000000000000"};
  EXPECT_FALSE(refusal(a, sign_jwt(key_a(), c)));
}

TEST_F(TokenAuthenticatorTest, RefusesEachBadClaim) {
  const auto a = make();
  const auto with = [&](const char* name, nlohmann::json value) {
    auto c = user_claims();
    if (value.is_null())
      c.erase(name);
    else
      c[name] = std::move(value);
    return refusal(a, sign_jwt(key_a(), c));
  };
  EXPECT_EQ(with("exp", now_s() - 61), TokenRefusal::Expired);
  EXPECT_EQ(with("exp", nullptr), TokenRefusal::MissingClaim);
  EXPECT_EQ(with("exp", "soon"), TokenRefusal::Malformed);
  EXPECT_EQ(with("nbf", now_s() + 61), TokenRefusal::NotYetValid);
  EXPECT_EQ(with("aud", "api://other"), TokenRefusal::WrongAudience);
  EXPECT_EQ(with("aud", nullptr), TokenRefusal::MissingClaim);
  EXPECT_EQ(with("iss", "https://login.microsoftonline.com/other-tenant/v2.0"), TokenRefusal::UnknownIssuer);
  EXPECT_EQ(with("iss", nullptr), TokenRefusal::UnknownIssuer);
}

TEST_F(TokenAuthenticatorTest, AllowsTheClockSkewOnExpAndNbf) {
  const auto a = make();
  auto c = user_claims();
  c["exp"] = now_s() - 59;
  c["nbf"] = now_s() + 59;
  EXPECT_FALSE(refusal(a, sign_jwt(key_a(), c)));
}

TEST_F(TokenAuthenticatorTest, RefusesAWrongKeyATamperedTokenAndOtherAlgorithms) {
  const auto a = make();
  // Signed by key B but naming key A's kid.
  EXPECT_EQ(refusal(a, sign_jwt(key_b(), user_claims(), "key-a")), TokenRefusal::BadSignature);
  // Claims changed after signing.
  std::string good = sign_jwt(key_a(), user_claims());
  auto c = user_claims();
  c["oid"] = "oid-mallory";
  const std::string forged =
      unsigned_jwt({{"alg", "RS256"}, {"typ", "JWT"}, {"kid", "key-a"}}, c) + good.substr(good.rfind('.'));
  EXPECT_EQ(refusal(a, forged), TokenRefusal::BadSignature);
  // alg none, with and without a signature; HS256 keyed with the public key's modulus.
  EXPECT_EQ(refusal(a, unsigned_jwt({{"alg", "none"}, {"kid", "key-a"}}, user_claims()) + "."),
            TokenRefusal::UnsupportedAlgorithm);
  EXPECT_EQ(refusal(a, unsigned_jwt({{"alg", "HS256"}, {"kid", "key-a"}}, user_claims()) + "." + b64("mac")),
            TokenRefusal::UnsupportedAlgorithm);
  EXPECT_EQ(refusal(a, "eyJ.not.atoken"), TokenRefusal::Malformed);
}

TEST_F(TokenAuthenticatorTest, UnknownKidAsksForOneRefetchAMinute) {
  const auto a = make();
  int refetches = 0;
  keys->on_refetch_request([&] { ++refetches; });
  const auto v = verify(a, sign_jwt(key_b(), user_claims()));
  EXPECT_EQ(v.refusal, TokenRefusal::UnknownKey);
  EXPECT_EQ(v.wait_for, keys);  // a fetch is under way: worth waiting for
  EXPECT_EQ(refetches, 1);
  keys->fetch_failed("down");
  clock.advance(std::chrono::seconds(30));
  const auto again = verify(a, sign_jwt(key_b(), user_claims()));
  EXPECT_EQ(again.refusal, TokenRefusal::UnknownKey);
  EXPECT_FALSE(again.wait_for);  // too soon for another fetch
  EXPECT_EQ(refetches, 1);
  clock.advance(std::chrono::seconds(31));
  EXPECT_TRUE(verify(a, sign_jwt(key_b(), user_claims())).wait_for);
  EXPECT_EQ(refetches, 2);
  // The rotated keys arrive: the same token now passes (unknown keys are never cached as refusals).
  keys->fetch_succeeded(keys_of({&key_a(), &key_b()}));
  EXPECT_TRUE(verify(a, sign_jwt(key_b(), user_claims())).token);
}

TEST_F(TokenAuthenticatorTest, NoKeysYetIsKeysUnavailable) {
  keys = std::make_shared<IssuerKeys>("fresh");  // never fetched
  const auto b = make();
  const auto v = verify(b, sign_jwt(key_a(), user_claims()));
  EXPECT_EQ(v.refusal, TokenRefusal::KeysUnavailable);
  EXPECT_TRUE(v.wait_for);  // the first fetch is under way
}

TEST_F(TokenAuthenticatorTest, RequiredRolesNeedAnyOneOfThem) {
  EXPECT_FALSE(refusal(make({"Writer", "Reader"}), sign_jwt(key_a(), user_claims())));
  EXPECT_EQ(refusal(make({"Admin"}), sign_jwt(key_a(), user_claims())), TokenRefusal::MissingRole);
  auto c = user_claims();
  c.erase("roles");
  EXPECT_EQ(refusal(make({"Reader"}), sign_jwt(key_a(), c)), TokenRefusal::MissingRole);
}

TEST_F(TokenAuthenticatorTest, AppOnlyTokensAreKnownByTheirApplication) {
  const auto a = make();
  auto c = user_claims();
  for (const char* k : {"scp", "upn", "groups"}) c.erase(k);
  c["oid"] = c["sub"] = "sp-object-id";
  c.erase("azp");
  c["appid"] = "app-batch";  // v1 tokens name the client appid
  c["roles"] = {"Jobs.Run"};
  const auto v = verify(a, sign_jwt(key_a(), c));
  ASSERT_TRUE(v.token);
  EXPECT_EQ(v.token->principal, "app:app-batch");
  EXPECT_EQ(v.token->subjects,
            (std::vector<std::string>{"app:app-batch", "role:Jobs.Run", "tenant:" + std::string(kTenant)}));
  c["idtyp"] = "app";
  c["upn"] = "x";  // idtyp decides
  EXPECT_EQ(verify(a, sign_jwt(key_a(), c)).token->principal, "app:app-batch");
}

TEST_F(TokenAuthenticatorTest, AUserWithoutOidIsKnownByUpn) {
  const auto a = make();
  auto c = user_claims();
  c.erase("oid");
  EXPECT_EQ(verify(a, sign_jwt(key_a(), c)).token->principal, "user:alice@example.com");
  c.erase("upn");
  c.erase("azp");
  EXPECT_EQ(refusal(a, sign_jwt(key_a(), c)), TokenRefusal::MissingClaim);  // nothing names the caller
}

TEST_F(TokenAuthenticatorTest, CachesAVerifiedTokenUntilItExpires) {
  const auto a = make();
  auto c = user_claims();
  c["exp"] = now_s() + 120;
  const std::string token = sign_jwt(key_a(), c);
  const auto first = verify(a, token);
  ASSERT_TRUE(first.token);
  EXPECT_EQ(cache.size(), 1u);
  // A hit: the same entry, even once the key is gone from the issuer's set.
  keys->fetch_succeeded(keys_of({&key_b()}));
  EXPECT_EQ(verify(a, token).token, first.token);
  clock.advance(std::chrono::seconds(120 + 59));
  EXPECT_EQ(verify(a, token).token, first.token);  // within the skew
  clock.advance(std::chrono::seconds(2));
  EXPECT_EQ(refusal(a, token), TokenRefusal::UnknownKey);  // expired from the cache: checked again
}

TEST_F(TokenAuthenticatorTest, CachesRefusalsBriefly) {
  const auto a = make();
  const std::string bad = sign_jwt(key_b(), user_claims(), "key-a");
  EXPECT_EQ(refusal(a, bad), TokenRefusal::BadSignature);
  EXPECT_EQ(cache.refused_size(), 1u);
  EXPECT_EQ(refusal(a, bad), TokenRefusal::BadSignature);
  EXPECT_EQ(cache.refused_size(), 1u);
}

TEST_F(TokenAuthenticatorTest, ANewConfigurationEmptiesTheCache) {
  const auto a = make();
  ASSERT_TRUE(verify(a, sign_jwt(key_a(), user_claims())).token);
  const auto strict = make({"Admin"});
  EXPECT_EQ(refusal(strict, sign_jwt(key_a(), user_claims())), TokenRefusal::MissingRole);
}

TEST(VerifiedTokenCacheTest, EvictsTheOldestWhenFull) {
  VerifiedTokenCache cache({2, 2, std::chrono::seconds(30)});
  const WallTime now{std::chrono::seconds(1000)};
  const auto entry = [&](const char* p) {
    return std::make_shared<const VerifiedToken>(VerifiedToken{"n", p, {}, now + std::chrono::hours(1)});
  };
  for (const char* t : {"t1", "t2", "t3"}) cache.insert(t, VerifiedTokenCache::hash(t), entry(t));
  EXPECT_EQ(cache.size(), 2u);
  EXPECT_FALSE(cache.find("t1", VerifiedTokenCache::hash("t1"), now));
  EXPECT_TRUE(cache.find("t3", VerifiedTokenCache::hash("t3"), now));
  // A colliding hash with another token is a miss, never the other caller's identity.
  EXPECT_FALSE(cache.find("t9", VerifiedTokenCache::hash("t3"), now));
}

TEST_F(TokenAuthenticatorTest, ClientAuthenticatorTakesKeysAndTokensSideBySide) {
  auto tokens = std::make_shared<const TokenAuthenticator>(make());
  const ClientAuthenticator auth({{"batch", "batch-key-1", {"team:batch"}, {}}}, tokens);
  EXPECT_TRUE(auth.enabled());
  const std::string token = sign_jwt(key_a(), user_claims());
  const auto t = auth.authenticate("", "Bearer " + token, cache, clock);
  ASSERT_TRUE(t.identity);
  EXPECT_EQ(t.identity->name, "contoso");
  EXPECT_EQ(t.identity->principal, "user:oid-alice");
  EXPECT_EQ(t.identity->subjects.size(), 6u);
  EXPECT_TRUE(t.identity->hold);
  const auto k = auth.authenticate("", "Bearer batch-key-1", cache, clock);
  ASSERT_TRUE(k.identity);
  EXPECT_EQ(k.identity->principal, "batch");
  EXPECT_FALSE(k.token);
  EXPECT_TRUE(auth.authenticate("batch-key-1", "", cache, clock).identity);
  const auto bad = auth.authenticate("", "Bearer " + sign_jwt(key_b(), user_claims(), "key-a"), cache, clock);
  EXPECT_FALSE(bad.identity);
  EXPECT_TRUE(bad.token);
  EXPECT_EQ(bad.refusal, TokenRefusal::BadSignature);
  EXPECT_FALSE(auth.authenticate("", "Bearer not-a-key", cache, clock).identity);
  // Tokens alone turn authentication on: no anonymous caller.
  const ClientAuthenticator tokens_only({}, tokens);
  EXPECT_TRUE(tokens_only.enabled());
  EXPECT_FALSE(tokens_only.authenticate("", "", cache, clock).identity);
}

TEST(TokenRefusalText, NeverEmptyAndDistinct) {
  std::set<std::string_view> labels;
  for (int r = 0; r <= static_cast<int>(TokenRefusal::MissingRole); ++r) {
    EXPECT_FALSE(message(TokenRefusal(r)).empty());
    labels.insert(label(TokenRefusal(r)));
  }
  EXPECT_EQ(labels.size(), static_cast<std::size_t>(TokenRefusal::MissingRole) + 1);
}

}  // namespace token_authenticator_test
}  // namespace smartlb::clients::jwt
