package io.tidelog.broker.security;

import java.security.NoSuchAlgorithmException;
import java.util.HashMap;
import java.util.Map;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.security.scram.ScramCredential;
import org.apache.kafka.common.security.scram.internals.ScramFormatter;
import org.apache.kafka.common.security.scram.internals.ScramMechanism;

/**
 * A SCRAM credential to create at first start, in the syntax of Kafka's {@code kafka-storage format
 * --add-scram}: {@code SCRAM-SHA-512=[name=admin,password=admin-secret]}, with {@code iterations=}
 * optional (4096 by default, the mechanism's minimum). It lets the first super user in before
 * anyone can alter credentials. {@link #toString()} leaves the password out.
 */
public record ScramCredentialSpec(
    ScramMechanism mechanism, String user, String password, int iterations) {

  /**
   * @throws ConfigException naming what is wrong, never the password
   */
  public static ScramCredentialSpec parse(String spec) {
    int equals = spec.indexOf('=');
    if (equals <= 0 || !spec.endsWith("]") || spec.indexOf('[') != equals + 1) {
      throw new ConfigException("--add-scram takes MECHANISM=[name=USER,password=PASSWORD]");
    }
    ScramMechanism mechanism = ScramMechanism.forMechanismName(spec.substring(0, equals));
    if (mechanism == null) {
      throw new ConfigException(
          "--add-scram: " + spec.substring(0, equals) + " is not SCRAM-SHA-256 or SCRAM-SHA-512");
    }
    Map<String, String> fields = new HashMap<>();
    for (String field : spec.substring(equals + 2, spec.length() - 1).split(",")) {
      int at = field.indexOf('=');
      if (at <= 0) {
        throw new ConfigException("--add-scram: expected key=value fields inside [...]");
      }
      fields.put(field.substring(0, at).trim(), field.substring(at + 1));
    }
    String user = fields.get("name");
    String password = fields.get("password");
    if (user == null || user.isEmpty() || password == null) {
      throw new ConfigException("--add-scram needs name= and password=");
    }
    int iterations;
    try {
      iterations =
          Integer.parseInt(
              fields.getOrDefault("iterations", String.valueOf(mechanism.minIterations())));
    } catch (NumberFormatException e) {
      throw new ConfigException("--add-scram: iterations must be a number");
    }
    if (iterations < mechanism.minIterations() || iterations > mechanism.maxIterations()) {
      throw new ConfigException(
          "--add-scram: iterations must be between "
              + mechanism.minIterations()
              + " and "
              + mechanism.maxIterations());
    }
    return new ScramCredentialSpec(mechanism, user, password, iterations);
  }

  /** A salted, iterated credential of the password, with a fresh random salt. */
  public ScramCredential credential() {
    try {
      return new ScramFormatter(mechanism).generateCredential(password, iterations);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(mechanism + " needs a hash this JVM lacks", e);
    }
  }

  @Override
  public String toString() {
    return mechanism.mechanismName() + " credential of " + user;
  }
}
