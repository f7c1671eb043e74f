package io.tidelog.broker.security;

import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import javax.security.sasl.SaslServer;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.config.SaslConfigs;
import org.apache.kafka.common.config.internals.BrokerSecurityConfigs;
import org.apache.kafka.common.network.ListenerName;
import org.apache.kafka.common.security.JaasContext;
import org.apache.kafka.common.security.auth.AuthenticateCallbackHandler;
import org.apache.kafka.common.security.auth.KafkaPrincipalBuilder;
import org.apache.kafka.common.security.auth.SecurityProtocol;
import org.apache.kafka.common.security.authenticator.DefaultKafkaPrincipalBuilder;
import org.apache.kafka.common.security.oauthbearer.BrokerJwtValidator;
import org.apache.kafka.common.security.oauthbearer.DefaultJwtValidator;
import org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule;
import org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler;
import org.apache.kafka.common.security.oauthbearer.internals.OAuthBearerSaslServer;
import org.apache.kafka.common.security.plain.internals.PlainSaslServer;
import org.apache.kafka.common.security.plain.internals.PlainServerCallbackHandler;
import org.apache.kafka.common.security.scram.internals.ScramMechanism;
import org.apache.kafka.common.security.scram.internals.ScramSaslServer;
import org.apache.kafka.common.security.scram.internals.ScramServerCallbackHandler;
import org.apache.kafka.common.security.ssl.SslPrincipalMapper;
import org.apache.kafka.common.security.token.delegation.internals.DelegationTokenCache;

/**
 * How one listener authenticates its clients, built from its security configs with kafka-clients'
 * own classes: Kafka's {@link DefaultKafkaPrincipalBuilder} (with {@code
 * ssl.principal.mapping.rules} for certificates), the TLS engines of SSL and SASL_SSL listeners,
 * and a SASL server per enabled mechanism: {@link PlainSaslServer} checking the {@code user_<name>}
 * entries of the listener's PLAIN JAAS config, as Kafka's {@link PlainServerCallbackHandler} does,
 * {@link ScramSaslServer} checking the {@link ScramCredentials} of the cluster, and {@link
 * OAuthBearerSaslServer} checking JWTs with Kafka's {@link OAuthBearerValidatorCallbackHandler}:
 * the signature against the keys of {@code sasl.oauthbearer.jwks.endpoint.url} (a file or an https
 * URL, which the JVM must allow, as in Kafka, with the system properties {@code
 * org.apache.kafka.sasl.oauthbearer.allowed.urls} and {@code
 * org.apache.kafka.sasl.oauthbearer.allowed.files}), expiry, and the expected audience and issuer.
 * Unlike Kafka, an OAUTHBEARER listener never falls back to Kafka's unsecured validator, which
 * takes unsigned tokens.
 */
public final class ListenerSecurity implements AutoCloseable {
  private final KafkaPrincipalBuilder principals;
  private final SslEngineSource sslEngines;
  private final Map<String, Supplier<SaslServer>> saslServers;
  private final List<AuthenticateCallbackHandler> handlers;
  private final long connectionsMaxReauthMs;
  private final int saslServerMaxReceiveBytes;

  private ListenerSecurity(
      KafkaPrincipalBuilder principals,
      SslEngineSource sslEngines,
      Map<String, Supplier<SaslServer>> saslServers,
      List<AuthenticateCallbackHandler> handlers,
      long connectionsMaxReauthMs,
      int saslServerMaxReceiveBytes) {
    this.principals = principals;
    this.sslEngines = sslEngines;
    this.saslServers = saslServers;
    this.handlers = handlers;
    this.connectionsMaxReauthMs = connectionsMaxReauthMs;
    this.saslServerMaxReceiveBytes = saslServerMaxReceiveBytes;
  }

  /**
   * @param configs the listener's security configs, as {@code BrokerConfig.security} resolves them
   * @throws ConfigException when a store does not load or a mechanism has no JAAS config
   */
  public static ListenerSecurity create(
      ListenerName listener,
      SecurityProtocol protocol,
      Map<String, Object> configs,
      ScramCredentials scram) {
    KafkaPrincipalBuilder principals =
        new DefaultKafkaPrincipalBuilder(
            null,
            SslPrincipalMapper.fromRules(
                (String) configs.get(BrokerSecurityConfigs.SSL_PRINCIPAL_MAPPING_RULES_CONFIG)));
    SslEngineSource sslEngines = null;
    if (protocol == SecurityProtocol.SSL || protocol == SecurityProtocol.SASL_SSL) {
      try {
        sslEngines = new SslEngineSource(listener.value(), configs);
      } catch (RuntimeException e) {
        throw new ConfigException(
            "Listener " + listener.value() + ": the TLS keystore or truststore: " + e.getMessage());
      }
    }
    Map<String, Supplier<SaslServer>> saslServers = new LinkedHashMap<>();
    List<AuthenticateCallbackHandler> handlers = new ArrayList<>();
    if (protocol == SecurityProtocol.SASL_PLAINTEXT || protocol == SecurityProtocol.SASL_SSL) {
      DelegationTokenCache tokens = new DelegationTokenCache(ScramMechanism.mechanismNames());
      @SuppressWarnings("unchecked")
      List<String> mechanisms =
          (List<String>) configs.get(BrokerSecurityConfigs.SASL_ENABLED_MECHANISMS_CONFIG);
      for (String mechanism : mechanisms) {
        if (mechanism.equals(OAuthBearerLoginModule.OAUTHBEARER_MECHANISM)) {
          OAuthBearerValidatorCallbackHandler jwts = new OAuthBearerValidatorCallbackHandler();
          Map<String, Object> oauth = new HashMap<>(configs);
          // kafka-clients' DefaultJwtValidator, built by name, checks no signature: a broker
          // must check each token against its JWKS, which BrokerJwtValidator does
          if (DefaultJwtValidator.class.equals(
              oauth.get(SaslConfigs.SASL_OAUTHBEARER_JWT_VALIDATOR_CLASS))) {
            oauth.put(SaslConfigs.SASL_OAUTHBEARER_JWT_VALIDATOR_CLASS, BrokerJwtValidator.class);
          }
          try {
            jwts.configure(oauth, mechanism, jaas(listener, mechanism, configs));
          } catch (RuntimeException e) {
            throw new ConfigException(
                "Listener " + listener.value() + ": OAUTHBEARER: " + e.getMessage());
          }
          handlers.add(jwts);
          saslServers.put(mechanism, () -> new OAuthBearerSaslServer(jwts));
        } else if (mechanism.equals(PlainSaslServer.PLAIN_MECHANISM)) {
          PlainServerCallbackHandler users = new PlainServerCallbackHandler();
          users.configure(configs, mechanism, jaas(listener, mechanism, configs));
          saslServers.put(mechanism, () -> new PlainSaslServer(users));
        } else {
          ScramMechanism scramMechanism = ScramMechanism.forMechanismName(mechanism);
          ScramServerCallbackHandler credentials =
              new ScramServerCallbackHandler(scram.of(scramMechanism), tokens);
          saslServers.put(mechanism, () -> scramServer(scramMechanism, credentials));
        }
      }
    }
    return new ListenerSecurity(
        principals,
        sslEngines,
        saslServers,
        List.copyOf(handlers),
        (Long) configs.get(BrokerSecurityConfigs.CONNECTIONS_MAX_REAUTH_MS_CONFIG),
        (Integer) configs.get(BrokerSecurityConfigs.SASL_SERVER_MAX_RECEIVE_SIZE_CONFIG));
  }

  private static List<javax.security.auth.login.AppConfigurationEntry> jaas(
      ListenerName listener, String mechanism, Map<String, Object> configs) {
    try {
      return JaasContext.loadServerContext(listener, mechanism, configs).configurationEntries();
    } catch (IllegalArgumentException e) {
      throw new ConfigException(
          listener.saslMechanismConfigPrefix(mechanism)
              + "sasl.jaas.config is needed for "
              + mechanism
              + " on listener "
              + listener.value()
              + ": "
              + e.getMessage());
    }
  }

  private static SaslServer scramServer(
      ScramMechanism mechanism, ScramServerCallbackHandler credentials) {
    try {
      return new ScramSaslServer(mechanism, Map.of(), credentials);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(mechanism + " needs a hash this JVM lacks", e);
    }
  }

  public KafkaPrincipalBuilder principals() {
    return principals;
  }

  /** The listener's TLS engines; null unless it is an SSL or SASL_SSL listener. */
  public SslEngineSource sslEngines() {
    return sslEngines;
  }

  /** The enabled SASL mechanisms, in {@code sasl.enabled.mechanisms} order. */
  public List<String> saslMechanisms() {
    return List.copyOf(saslServers.keySet());
  }

  /** A new server of an enabled {@code mechanism}, for one authentication. */
  public SaslServer saslServer(String mechanism) {
    return saslServers.get(mechanism).get();
  }

  /** How long a SASL session lasts before the client must authenticate again; 0: for ever. */
  public long connectionsMaxReauthMs() {
    return connectionsMaxReauthMs;
  }

  /** The largest request frame before the client is authenticated. */
  public int saslServerMaxReceiveBytes() {
    return saslServerMaxReceiveBytes;
  }

  /** Stops what the listener's SASL validators run, such as the refresh of an OAuth JWKS. */
  @Override
  public void close() {
    handlers.forEach(AuthenticateCallbackHandler::close);
  }
}
