package io.tidelog.broker.security;

import io.netty.buffer.ByteBufAllocator;
import io.netty.handler.ssl.ClientAuth;
import io.netty.handler.ssl.OpenSsl;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslProvider;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.util.List;
import java.util.Map;
import java.util.Set;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.TrustManagerFactory;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.config.SslConfigs;
import org.apache.kafka.common.config.internals.BrokerSecurityConfigs;
import org.apache.kafka.common.config.types.Password;
import org.apache.kafka.common.security.auth.SslEngineFactory;
import org.apache.kafka.common.security.ssl.DefaultSslEngineFactory;

/**
 * TLS engines from OpenSSL (BoringSSL, through netty-tcnative) instead of the JDK, for {@code
 * ssl.engine.factory.class}: Kafka's {@link DefaultSslEngineFactory} still reads the keystore and
 * truststore (every type and config it takes), and Netty's OpenSSL engine does the handshakes and
 * the record encryption with the same keys, trust, {@code ssl.client.auth}, {@code
 * ssl.enabled.protocols}, {@code ssl.cipher.suites} and, for clients, {@code
 * ssl.endpoint.identification.algorithm}. BoringSSL does not let TLS 1.3's suites be chosen, so
 * {@code ssl.cipher.suites} binds TLS 1.2 only. Measured by {@code bench/run-tls-bench}.
 */
public final class OpenSslEngineFactory implements SslEngineFactory {
  private final DefaultSslEngineFactory stores = new DefaultSslEngineFactory();
  private SslContext server;
  private SslContext client;

  @Override
  public void configure(Map<String, ?> configs) {
    if (!OpenSsl.isAvailable()) {
      throw new KafkaException("OpenSSL is not available", OpenSsl.unavailabilityCause());
    }
    stores.configure(configs);
    try {
      KeyManagerFactory keys = null;
      KeyStore keystore = stores.keystore();
      if (keystore != null) {
        keys =
            KeyManagerFactory.getInstance(
                string(configs, SslConfigs.SSL_KEYMANAGER_ALGORITHM_CONFIG));
        keys.init(keystore, keyPassword(configs));
      }
      TrustManagerFactory trust =
          TrustManagerFactory.getInstance(
              string(configs, SslConfigs.SSL_TRUSTMANAGER_ALGORITHM_CONFIG));
      trust.init(stores.truststore());
      @SuppressWarnings("unchecked")
      List<String> protocols = (List<String>) configs.get(SslConfigs.SSL_ENABLED_PROTOCOLS_CONFIG);
      @SuppressWarnings("unchecked")
      List<String> ciphers = (List<String>) configs.get(SslConfigs.SSL_CIPHER_SUITES_CONFIG);
      List<String> suites = ciphers == null || ciphers.isEmpty() ? null : ciphers;
      if (keys != null) {
        server =
            SslContextBuilder.forServer(keys)
                .sslProvider(SslProvider.OPENSSL)
                .trustManager(trust)
                .clientAuth(clientAuth(configs))
                .protocols(protocols)
                .ciphers(suites)
                .build();
      }
      client =
          SslContextBuilder.forClient()
              .sslProvider(SslProvider.OPENSSL)
              .keyManager(keys)
              .trustManager(trust)
              .protocols(protocols)
              .ciphers(suites)
              .build();
    } catch (GeneralSecurityException | SSLException e) {
      throw new KafkaException("OpenSSL could not take the keystore or truststore", e);
    }
  }

  private static String string(Map<String, ?> configs, String key) {
    return (String) configs.get(key);
  }

  /** As Kafka: {@code ssl.key.password}, else a file keystore's own password. */
  private static char[] keyPassword(Map<String, ?> configs) {
    Password key = (Password) configs.get(SslConfigs.SSL_KEY_PASSWORD_CONFIG);
    if (key == null
        && !DefaultSslEngineFactory.PEM_TYPE.equals(
            configs.get(SslConfigs.SSL_KEYSTORE_TYPE_CONFIG))) {
      key = (Password) configs.get(SslConfigs.SSL_KEYSTORE_PASSWORD_CONFIG);
    }
    return key == null ? null : key.value().toCharArray();
  }

  private static ClientAuth clientAuth(Map<String, ?> configs) {
    Object mode = configs.get(BrokerSecurityConfigs.SSL_CLIENT_AUTH_CONFIG);
    return switch (mode == null ? "none" : mode.toString()) {
      case "required" -> ClientAuth.REQUIRE;
      case "requested" -> ClientAuth.OPTIONAL;
      default -> ClientAuth.NONE;
    };
  }

  @Override
  public SSLEngine createServerSslEngine(String peerHost, int peerPort) {
    if (server == null) {
      throw new KafkaException("a server TLS engine needs a keystore");
    }
    return server.newEngine(ByteBufAllocator.DEFAULT);
  }

  @Override
  public SSLEngine createClientSslEngine(
      String peerHost, int peerPort, String endpointIdentification) {
    SSLEngine engine = client.newEngine(ByteBufAllocator.DEFAULT, peerHost, peerPort);
    if (endpointIdentification != null && !endpointIdentification.isEmpty()) {
      SSLParameters parameters = engine.getSSLParameters();
      parameters.setEndpointIdentificationAlgorithm(endpointIdentification);
      engine.setSSLParameters(parameters);
    }
    return engine;
  }

  @Override
  public boolean shouldBeRebuilt(Map<String, Object> nextConfigs) {
    return stores.shouldBeRebuilt(nextConfigs);
  }

  @Override
  public Set<String> reconfigurableConfigs() {
    return stores.reconfigurableConfigs();
  }

  @Override
  public KeyStore keystore() {
    return stores.keystore();
  }

  @Override
  public KeyStore truststore() {
    return stores.truststore();
  }

  @Override
  public void close() {
    stores.close();
  }
}
