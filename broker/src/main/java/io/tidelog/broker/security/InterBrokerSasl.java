package io.tidelog.broker.security;

import java.security.NoSuchAlgorithmException;
import java.util.List;
import java.util.Map;
import javax.security.auth.callback.Callback;
import javax.security.auth.callback.CallbackHandler;
import javax.security.auth.callback.NameCallback;
import javax.security.auth.callback.PasswordCallback;
import javax.security.auth.login.AppConfigurationEntry;
import javax.security.sasl.Sasl;
import javax.security.sasl.SaslClient;
import javax.security.sasl.SaslException;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.config.internals.BrokerSecurityConfigs;
import org.apache.kafka.common.network.ListenerName;
import org.apache.kafka.common.security.JaasContext;
import org.apache.kafka.common.security.scram.internals.ScramMechanism;
import org.apache.kafka.common.security.scram.internals.ScramSaslClient;

/**
 * How this broker authenticates to the others on a SASL inter-broker listener, as Kafka's brokers
 * do: with {@code sasl.mechanism.inter.broker.protocol} (PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512) and
 * the {@code username} and {@code password} of that mechanism's JAAS config on the listener ({@code
 * listener.name.<l>.<mechanism>.sasl.jaas.config}). The clients are kafka-clients' SCRAM client and
 * the JDK's PLAIN client. Nothing of the credentials is logged.
 */
public final class InterBrokerSasl {
  private final String mechanism;
  private final String username;
  private final char[] password;

  private InterBrokerSasl(String mechanism, String username, char[] password) {
    this.mechanism = mechanism;
    this.username = username;
    this.password = password;
  }

  /**
   * @throws ConfigException when the mechanism is not enabled or served, or the JAAS config has no
   *     username and password
   */
  public static InterBrokerSasl create(ListenerName listener, Map<String, Object> configs) {
    String mechanism =
        (String) configs.get(BrokerSecurityConfigs.SASL_MECHANISM_INTER_BROKER_PROTOCOL_CONFIG);
    @SuppressWarnings("unchecked")
    List<String> enabled =
        (List<String>) configs.get(BrokerSecurityConfigs.SASL_ENABLED_MECHANISMS_CONFIG);
    if (!enabled.contains(mechanism)) {
      throw new ConfigException(
          BrokerSecurityConfigs.SASL_MECHANISM_INTER_BROKER_PROTOCOL_CONFIG,
          mechanism,
          "must be one of the inter-broker listener's sasl.enabled.mechanisms " + enabled);
    }
    List<AppConfigurationEntry> entries;
    try {
      entries = JaasContext.loadServerContext(listener, mechanism, configs).configurationEntries();
    } catch (IllegalArgumentException e) {
      throw new ConfigException(
          listener.saslMechanismConfigPrefix(mechanism) + "sasl.jaas.config is needed: " + e);
    }
    String username = JaasContext.configEntryOption(entries, "username", null);
    String password = JaasContext.configEntryOption(entries, "password", null);
    if (username == null || password == null) {
      throw new ConfigException(
          listener.saslMechanismConfigPrefix(mechanism)
              + "sasl.jaas.config needs username and password, which this broker authenticates"
              + " to the others with");
    }
    return new InterBrokerSasl(mechanism, username, password.toCharArray());
  }

  public String mechanism() {
    return mechanism;
  }

  /** A new client for one authentication to the broker at {@code host}. */
  public SaslClient newClient(String host) {
    CallbackHandler credentials =
        callbacks -> {
          for (Callback callback : callbacks) {
            if (callback instanceof NameCallback name) {
              name.setName(username);
            } else if (callback instanceof PasswordCallback secret) {
              secret.setPassword(password);
            } // SCRAM's extensions callback keeps its default: none
          }
        };
    try {
      if (mechanism.equals("PLAIN")) {
        return Sasl.createSaslClient(
            new String[] {mechanism}, null, "kafka", host, Map.of(), credentials);
      }
      return new ScramSaslClient(ScramMechanism.forMechanismName(mechanism), credentials);
    } catch (SaslException | NoSuchAlgorithmException e) {
      throw new IllegalStateException("no " + mechanism + " client in this JVM", e);
    }
  }
}
