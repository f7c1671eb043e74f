package io.tidelog.broker.cluster;

import io.vertx.core.json.JsonObject;
import java.net.URLDecoder;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import org.apache.kafka.common.security.scram.ScramCredential;
import org.apache.kafka.common.security.scram.internals.ScramMechanism;

/**
 * A user's SCRAM credential for one mechanism, as stored under {@code scram/<mechanism>/<user>}:
 * salt, stored key, server key and iterations (RFC 5802), from which the broker checks a client's
 * proof; the password is never stored and cannot be recovered from them. The user name is
 * URL-encoded in the key, as names may hold any character.
 */
public record UserScramCredential(
    String user, ScramMechanism mechanism, ScramCredential credential) {
  static final String PREFIX = "scram/";

  String key() {
    return PREFIX
        + mechanism.mechanismName()
        + "/"
        + URLEncoder.encode(user, StandardCharsets.UTF_8);
  }

  /** The image's key of a credential: {@code <mechanism>/<encoded user>}. */
  static String imageKey(String user, ScramMechanism mechanism) {
    return mechanism.mechanismName() + "/" + URLEncoder.encode(user, StandardCharsets.UTF_8);
  }

  String toJson() {
    Base64.Encoder base64 = Base64.getEncoder();
    return new JsonObject()
        .put("salt", base64.encodeToString(credential.salt()))
        .put("storedKey", base64.encodeToString(credential.storedKey()))
        .put("serverKey", base64.encodeToString(credential.serverKey()))
        .put("iterations", credential.iterations())
        .encode();
  }

  /**
   * The credential of a key {@code <mechanism>/<encoded user>} (relative to {@code scram/}).
   *
   * @throws IllegalArgumentException when the key or value has another shape
   */
  static UserScramCredential fromJson(String relativeKey, String value) {
    int slash = relativeKey.indexOf('/');
    if (slash <= 0) {
      throw new IllegalArgumentException("not <mechanism>/<user>");
    }
    ScramMechanism mechanism = ScramMechanism.forMechanismName(relativeKey.substring(0, slash));
    if (mechanism == null) {
      throw new IllegalArgumentException("not a SCRAM mechanism");
    }
    String user = URLDecoder.decode(relativeKey.substring(slash + 1), StandardCharsets.UTF_8);
    JsonObject json = new JsonObject(value);
    Base64.Decoder base64 = Base64.getDecoder();
    return new UserScramCredential(
        user,
        mechanism,
        new ScramCredential(
            base64.decode(json.getString("salt")),
            base64.decode(json.getString("storedKey")),
            base64.decode(json.getString("serverKey")),
            json.getInteger("iterations")));
  }
}
