package io.tidelog.broker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.errors.SaslAuthenticationException;
import org.jose4j.jwk.JsonWebKey;
import org.jose4j.jwk.JsonWebKeySet;
import org.jose4j.jwk.RsaJsonWebKey;
import org.jose4j.jwk.RsaJwkGenerator;
import org.jose4j.jws.AlgorithmIdentifiers;
import org.jose4j.jws.JsonWebSignature;
import org.jose4j.jwt.JwtClaims;
import org.jose4j.jwt.NumericDate;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * OAUTHBEARER on a SASL_PLAINTEXT listener, with kafka-clients' own login handler reading a JWT
 * from a file: a token signed by a key of the broker's JWKS file, for the expected audience and
 * issuer, authenticates as {@code User:<sub>}; an expired one, one signed by another key, and one
 * for another audience are refused with SASL_AUTHENTICATION_FAILED.
 */
class OAuthBearerIT {
  private static final String ISSUER = "https://issuer.tidelog.test";
  private static final String AUDIENCE = "tidelog";
  @TempDir static Path dir;
  static RsaJsonWebKey key;
  static Path jwks;
  static TestBroker broker;
  static int port;

  @BeforeAll
  static void start() throws Exception {
    key = RsaJwkGenerator.generateJwk(2048);
    key.setKeyId("trusted");
    jwks =
        Files.writeString(
            dir.resolve("jwks.json"),
            new JsonWebKeySet(key).toJson(JsonWebKey.OutputControlLevel.PUBLIC_ONLY));
    // Kafka refuses JWKS and token locations the JVM does not allow, as here
    List<String> allowed = new java.util.ArrayList<>(List.of(jwks.toUri().toString()));
    for (String token : List.of("good", "expired", "untrusted", "misaddressed")) {
      allowed.add(dir.resolve(token + ".jwt").toUri().toString());
    }
    System.setProperty("org.apache.kafka.sasl.oauthbearer.allowed.urls", String.join(",", allowed));
    System.setProperty("org.apache.kafka.sasl.oauthbearer.allowed.files", dir.toString() + "/*");
    port = EtcdServer.freePort();
    Map<String, String> config = new HashMap<>();
    config.put(
        "listeners",
        "PLAINTEXT://127.0.0.1:" + EtcdServer.freePort() + ",SASL_PLAINTEXT://127.0.0.1:" + port);
    config.put("sasl.enabled.mechanisms", "OAUTHBEARER");
    config.put(
        "listener.name.sasl_plaintext.oauthbearer.sasl.jaas.config",
        "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;");
    config.put("sasl.oauthbearer.jwks.endpoint.url", jwks.toUri().toString());
    config.put("sasl.oauthbearer.expected.audience", AUDIENCE);
    config.put("sasl.oauthbearer.expected.issuer", ISSUER);
    broker = TestBroker.start(dir.resolve("logs"), config);
  }

  @AfterAll
  static void stop() throws Exception {
    broker.close();
  }

  private static String token(RsaJsonWebKey signer, String audience, long expiresInSeconds)
      throws Exception {
    JwtClaims claims = new JwtClaims();
    claims.setSubject("alice");
    claims.setIssuer(ISSUER);
    claims.setAudience(audience);
    claims.setIssuedAt(NumericDate.fromSeconds(System.currentTimeMillis() / 1000 - 60));
    claims.setExpirationTime(
        NumericDate.fromSeconds(System.currentTimeMillis() / 1000 + expiresInSeconds));
    JsonWebSignature jws = new JsonWebSignature();
    jws.setPayload(claims.toJson());
    jws.setKey(signer.getPrivateKey());
    jws.setKeyIdHeaderValue(signer.getKeyId());
    jws.setAlgorithmHeaderValue(AlgorithmIdentifiers.RSA_USING_SHA256);
    return jws.getCompactSerialization();
  }

  private static Admin client(String token, String name) throws Exception {
    Path file = Files.writeString(dir.resolve(name + ".jwt"), token);
    Properties p = new Properties();
    p.put("bootstrap.servers", "127.0.0.1:" + port);
    p.put("security.protocol", "SASL_PLAINTEXT");
    p.put("sasl.mechanism", "OAUTHBEARER");
    p.put(
        "sasl.jaas.config",
        "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;");
    p.put(
        "sasl.login.callback.handler.class",
        "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler");
    p.put("sasl.oauthbearer.token.endpoint.url", file.toUri().toString());
    p.put("default.api.timeout.ms", "20000");
    p.put("request.timeout.ms", "10000");
    return Admin.create(p);
  }

  @Test
  void aSignedTokenForTheExpectedAudienceAuthenticates() throws Exception {
    try (Admin alice = client(token(key, AUDIENCE, 600), "good")) {
      alice.createTopics(List.of(new NewTopic("oauth", 1, (short) 1))).all().get();
      assertThat(alice.listTopics().names().get()).contains("oauth");
    }
  }

  @Test
  void expiredUntrustedAndMisaddressedTokensAreRefused() throws Exception {
    RsaJsonWebKey other = RsaJwkGenerator.generateJwk(2048);
    other.setKeyId("trusted"); // same key id, another key: the signature does not verify
    Map<String, String> tokens =
        Map.of(
            "expired", token(key, AUDIENCE, -600),
            "untrusted", token(other, AUDIENCE, 600),
            "misaddressed", token(key, "someone-else", 600));
    for (Map.Entry<String, String> bad : tokens.entrySet()) {
      try (Admin refused = client(bad.getValue(), bad.getKey())) {
        ExecutionException e =
            assertThrows(
                ExecutionException.class,
                () -> refused.describeCluster().nodes().get(),
                bad.getKey());
        assertThat(e.getCause()).as(bad.getKey()).isInstanceOf(SaslAuthenticationException.class);
      } catch (org.apache.kafka.common.KafkaException e) {
        // kafka-clients' own login refuses an expired token before it reaches the broker
        assertThat(bad.getKey()).isEqualTo("expired");
      }
    }
  }
}
