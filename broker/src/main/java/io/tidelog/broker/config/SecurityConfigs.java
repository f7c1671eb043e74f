package io.tidelog.broker.config;

import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.SaslConfigs;
import org.apache.kafka.common.config.SslConfigs;
import org.apache.kafka.common.config.internals.BrokerSecurityConfigs;
import org.apache.kafka.common.network.ListenerName;

/**
 * The security configs a listener is set up with, under Kafka's names, types and defaults (taken
 * from kafka-clients' own definitions): TLS ({@code ssl.*}, as Kafka's {@code
 * DefaultSslEngineFactory} reads them), {@code ssl.client.auth}, {@code
 * ssl.principal.mapping.rules}, {@code sasl.enabled.mechanisms}, {@code connections.max.reauth.ms},
 * {@code sasl.server.max.receive.size} and OAUTHBEARER's {@code sasl.oauthbearer.*} (JWKS, expected
 * audience and issuer, claims, clock skew). As in Kafka, each may be set for one listener by
 * prefixing it with {@code listener.name.<listener>.}, and a mechanism's JAAS config is {@code
 * listener.name.<listener>.<mechanism>.sasl.jaas.config}.
 */
public final class SecurityConfigs {
  static final String LISTENER_PREFIX = "listener.name.";
  private static final Set<String> BROKER_KEYS =
      Set.of(
          BrokerSecurityConfigs.SSL_CLIENT_AUTH_CONFIG,
          BrokerSecurityConfigs.SSL_PRINCIPAL_MAPPING_RULES_CONFIG,
          BrokerSecurityConfigs.SSL_ALLOW_DN_CHANGES_CONFIG,
          BrokerSecurityConfigs.SSL_ALLOW_SAN_CHANGES_CONFIG,
          BrokerSecurityConfigs.SASL_ENABLED_MECHANISMS_CONFIG,
          BrokerSecurityConfigs.SASL_MECHANISM_INTER_BROKER_PROTOCOL_CONFIG,
          BrokerSecurityConfigs.CONNECTIONS_MAX_REAUTH_MS_CONFIG,
          BrokerSecurityConfigs.SASL_SERVER_MAX_RECEIVE_SIZE_CONFIG,
          SaslConfigs.SASL_OAUTHBEARER_JWKS_ENDPOINT_URL,
          SaslConfigs.SASL_OAUTHBEARER_JWKS_ENDPOINT_REFRESH_MS,
          SaslConfigs.SASL_OAUTHBEARER_JWKS_ENDPOINT_RETRY_BACKOFF_MS,
          SaslConfigs.SASL_OAUTHBEARER_JWKS_ENDPOINT_RETRY_BACKOFF_MAX_MS,
          SaslConfigs.SASL_OAUTHBEARER_CLOCK_SKEW_SECONDS,
          SaslConfigs.SASL_OAUTHBEARER_EXPECTED_AUDIENCE,
          SaslConfigs.SASL_OAUTHBEARER_EXPECTED_ISSUER,
          SaslConfigs.SASL_OAUTHBEARER_SCOPE_CLAIM_NAME,
          SaslConfigs.SASL_OAUTHBEARER_SUB_CLAIM_NAME,
          SaslConfigs.SASL_OAUTHBEARER_JWT_VALIDATOR_CLASS);

  /** The mechanisms a listener can enable. */
  public static final List<String> SERVED_MECHANISMS =
      List.of("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER");

  static final ConfigDef CONFIG_DEF = definitions();

  private SecurityConfigs() {}

  private static ConfigDef definitions() {
    ConfigDef def = new ConfigDef();
    SslConfigs.addClientSslSupport(def);
    BrokerSecurityConfigs.CONFIG_DEF.configKeys().values().stream()
        .filter(key -> BROKER_KEYS.contains(key.name))
        .forEach(def::define);
    return def;
  }

  /** Adds the definitions to the broker's own. */
  static void addTo(ConfigDef brokerDef) {
    CONFIG_DEF.configKeys().values().forEach(brokerDef::define);
  }

  /** {@code key} without its {@code listener.name.<listener>.} prefix. */
  static String unprefixed(String key) {
    if (!key.startsWith(LISTENER_PREFIX)) {
      return key;
    }
    String rest = key.substring(LISTENER_PREFIX.length());
    return rest.substring(rest.indexOf('.') + 1);
  }

  /** Whether {@code key} sets a security config of one listener. */
  static boolean isListenerKey(String key) {
    if (!key.startsWith(LISTENER_PREFIX)) {
      return false;
    }
    String rest = key.substring(LISTENER_PREFIX.length());
    int dot = rest.indexOf('.');
    if (dot <= 0) {
      return false;
    }
    String config = rest.substring(dot + 1);
    if (CONFIG_DEF.names().contains(config)) {
      return true;
    }
    return config.endsWith("." + SaslConfigs.SASL_JAAS_CONFIG)
        && SERVED_MECHANISMS.contains(
            config
                .substring(0, config.length() - SaslConfigs.SASL_JAAS_CONFIG.length() - 1)
                .toUpperCase(Locale.ROOT));
  }

  /**
   * The security configs of {@code listener}: the broker-wide values with the listener's own on
   * top, parsed, plus its mechanisms' JAAS configs under {@code <mechanism>.sasl.jaas.config}, as
   * Kafka hands them to its channel builders.
   */
  static Map<String, Object> forListener(ListenerName listener, Map<String, String> raw) {
    String prefix = listener.configPrefix();
    Map<String, String> merged = new HashMap<>();
    Map<String, Object> jaas = new HashMap<>();
    raw.forEach(
        (key, value) -> {
          if (CONFIG_DEF.names().contains(key) && !merged.containsKey(key)) {
            merged.put(key, value);
          }
        });
    ConfigDef jaasDef = new ConfigDef();
    raw.forEach(
        (key, value) -> {
          if (!key.startsWith(prefix)) {
            return;
          }
          String config = key.substring(prefix.length());
          if (CONFIG_DEF.names().contains(config)) {
            merged.put(config, value);
          } else {
            jaasDef.define(config, ConfigDef.Type.PASSWORD, ConfigDef.Importance.HIGH, config);
            jaas.putAll(jaasDef.parse(Map.of(config, value)));
          }
        });
    Map<String, Object> values = new HashMap<>(CONFIG_DEF.parse(merged));
    @SuppressWarnings("unchecked")
    List<String> mechanisms =
        (List<String>) values.get(BrokerSecurityConfigs.SASL_ENABLED_MECHANISMS_CONFIG);
    values.putAll(jaas);
    values.put(
        BrokerSecurityConfigs.SASL_ENABLED_MECHANISMS_CONFIG,
        mechanisms.stream().map(m -> m.trim().toUpperCase(Locale.ROOT)).toList());
    return values;
  }
}
