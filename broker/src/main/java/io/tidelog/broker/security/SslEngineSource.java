package io.tidelog.broker.security;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import javax.net.ssl.SSLEngine;
import org.apache.kafka.common.config.SslConfigs;
import org.apache.kafka.common.security.auth.SslEngineFactory;
import org.apache.kafka.common.security.ssl.DefaultSslEngineFactory;
import org.apache.kafka.common.utils.Utils;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The TLS engines of one listener, made from the listener's {@code ssl.*} configs (keystore and
 * truststore as PKCS12, JKS or PEM, protocols, cipher suites, {@code ssl.client.auth}) by the
 * {@code ssl.engine.factory.class}, as in Kafka: Kafka's own {@link DefaultSslEngineFactory} (the
 * JDK's engines) unless it names another, such as {@link OpenSslEngineFactory}; one engine per
 * connection, as Kafka's channels get them.
 *
 * <p>{@link #maybeReload()} reads the keystore and truststore files again and, when their bytes
 * changed, builds a new factory that every later connection gets its engine from; established
 * connections keep theirs, so none is dropped. Kubernetes updates a mounted Secret in place, so
 * rotating a certificate needs no restart and no AlterConfigs call (Kafka needs one). A file that
 * does not load (say, caught half written) leaves the current factory serving and is tried again at
 * the next check.
 *
 * <p>Thread-safe: engines are handed out from a volatile factory; reloads run on one thread.
 */
public final class SslEngineSource {
  private static final Logger LOG = LoggerFactory.getLogger(SslEngineSource.class);
  private final String listener;
  private final Map<String, Object> configs;
  private volatile SslEngineFactory factory;
  private Map<String, byte[]> loaded;

  /**
   * @throws org.apache.kafka.common.KafkaException when the keystore or truststore does not load
   */
  public SslEngineSource(String listener, Map<String, ?> configs) {
    this.listener = listener;
    this.configs = new HashMap<>(configs);
    this.loaded = readFiles();
    this.factory = build();
  }

  /** A new engine for an accepted connection. */
  public SSLEngine serverEngine() {
    return factory.createServerSslEngine(null, -1);
  }

  /**
   * A new engine for a connection to {@code host:port}, checked against the peer's certificate by
   * {@code ssl.endpoint.identification.algorithm} ({@code https} by default: the host must be in
   * the certificate).
   */
  public SSLEngine clientEngine(String host, int port) {
    return factory.createClientSslEngine(
        host, port, (String) configs.get(SslConfigs.SSL_ENDPOINT_IDENTIFICATION_ALGORITHM_CONFIG));
  }

  /**
   * Builds a new factory if the keystore or truststore file changed since the last load.
   *
   * @return whether new connections now get engines of new files
   */
  public synchronized boolean maybeReload() {
    Map<String, byte[]> now = readFiles();
    if (sameFiles(now, loaded)) {
      return false;
    }
    SslEngineFactory rebuilt;
    try {
      rebuilt = build();
    } catch (RuntimeException e) {
      LOG.warn(
          "Listener {}: the changed keystore or truststore does not load, so the current one"
              + " stays: {}",
          listener,
          e.getMessage());
      return false;
    }
    SslEngineFactory previous = factory;
    factory = rebuilt;
    loaded = now;
    Utils.closeQuietly(previous, "the replaced TLS engine factory");
    LOG.info("Listener {}: new connections get the changed keystore and truststore", listener);
    return true;
  }

  private SslEngineFactory build() {
    Class<?> type = (Class<?>) configs.get(SslConfigs.SSL_ENGINE_FACTORY_CLASS_CONFIG);
    SslEngineFactory built =
        type == null
            ? new DefaultSslEngineFactory()
            : Utils.newInstance(type, SslEngineFactory.class);
    built.configure(configs);
    return built;
  }

  private Map<String, byte[]> readFiles() {
    Map<String, byte[]> files = new HashMap<>();
    for (String key :
        new String[] {
          SslConfigs.SSL_KEYSTORE_LOCATION_CONFIG, SslConfigs.SSL_TRUSTSTORE_LOCATION_CONFIG
        }) {
      Object location = configs.get(key);
      if (location != null) {
        try {
          files.put(key, Files.readAllBytes(Path.of((String) location)));
        } catch (NoSuchFileException e) {
          files.put(key, new byte[0]); // between the removal and the rename of a rotation
        } catch (IOException e) {
          files.put(key, new byte[0]);
          LOG.warn("Listener {}: reading {} failed: {}", listener, location, e.toString());
        }
      }
    }
    return files;
  }

  private static boolean sameFiles(Map<String, byte[]> a, Map<String, byte[]> b) {
    if (!a.keySet().equals(b.keySet())) {
      return false;
    }
    return a.keySet().stream().allMatch(key -> Arrays.equals(a.get(key), b.get(key)));
  }
}
