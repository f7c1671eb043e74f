package io.tidelog.broker.security;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import javax.net.ssl.SSLEngine;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.config.SslConfigs;
import org.apache.kafka.common.network.ConnectionMode;
import org.apache.kafka.common.security.auth.SslEngineFactory;
import org.apache.kafka.common.security.ssl.DefaultSslEngineFactory;
import org.apache.kafka.common.security.ssl.SslFactory;
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
 * the next check. A dynamic change of the listener's keystore or truststore configs ({@code
 * kafka-configs --alter --add-config listener.name.<l>.ssl.keystore.location=...}) is checked with
 * {@link #validateReconfiguration} and taken with {@link #reconfigure}, as Kafka does.
 *
 * <p>Thread-safe: engines are handed out from a volatile factory; reloads and reconfigurations are
 * serialized.
 */
public final class SslEngineSource {
  private static final Logger LOG = LoggerFactory.getLogger(SslEngineSource.class);
  private final String listener;
  private volatile Map<String, Object> configs;
  private volatile SslEngineFactory factory;
  private Map<String, byte[]> loaded;

  /**
   * @throws org.apache.kafka.common.KafkaException when the keystore or truststore does not load
   */
  public SslEngineSource(String listener, Map<String, ?> configs) {
    this.listener = listener;
    this.configs = Map.copyOf(withoutNulls(configs));
    this.loaded = readFiles(this.configs);
    this.factory = build(this.configs);
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
    Map<String, byte[]> now = readFiles(configs);
    return !sameFiles(now, loaded) && rebuild(configs, now, "changed keystore and truststore");
  }

  /**
   * Checks, with Kafka's own {@code SslFactory}, that this listener could take the keystore and
   * truststore of {@code next} (the listener's security configs after a dynamic change): they load,
   * none is added or removed, and the certificate keeps its subject and alternative names unless
   * {@code ssl.allow.dn.changes} or {@code ssl.allow.san.changes} allow it.
   *
   * @throws ConfigException with Kafka's message when it could not
   */
  public void validateReconfiguration(Map<String, ?> next) {
    Map<String, Object> changed = withReconfigurable(next);
    if (changed.equals(configs)) {
      return;
    }
    try (SslFactory check = new SslFactory(ConnectionMode.SERVER)) {
      check.configure(configs);
      check.validateReconfiguration(changed);
    } catch (KafkaException e) {
      throw new ConfigException(e.getMessage());
    }
  }

  /**
   * Takes the keystore and truststore configs of {@code next}, once {@link
   * #validateReconfiguration} passed them: later connections get engines of the new stores, as
   * after a file change. Stores that no longer load leave the current ones serving.
   *
   * @return whether the stores changed
   */
  public synchronized boolean reconfigure(Map<String, ?> next) {
    Map<String, Object> changed = withReconfigurable(next);
    return !changed.equals(configs)
        && rebuild(changed, readFiles(changed), "reconfigured keystore and truststore");
  }

  /**
   * Builds a factory of {@code next} and hands it to every later connection; when a store does not
   * load, the current factory stays.
   */
  private boolean rebuild(Map<String, Object> next, Map<String, byte[]> files, String what) {
    SslEngineFactory rebuilt;
    try {
      rebuilt = build(next);
    } catch (RuntimeException e) {
      LOG.warn(
          "Listener {}: a store of the {} does not load, so the current ones stay: {}",
          listener,
          what,
          e.getMessage());
      return false;
    }
    SslEngineFactory previous = factory;
    configs = next;
    factory = rebuilt;
    loaded = files;
    Utils.closeQuietly(previous, "the replaced TLS engine factory");
    LOG.info("Listener {}: new connections get the {}", listener, what);
    return true;
  }

  /** The current configs with the keystore and truststore configs of {@code next}. */
  private Map<String, Object> withReconfigurable(Map<String, ?> next) {
    Map<String, Object> changed = new HashMap<>(configs);
    for (String key : SslConfigs.RECONFIGURABLE_CONFIGS) {
      Object value = next.get(key);
      if (value == null) {
        changed.remove(key);
      } else {
        changed.put(key, value);
      }
    }
    return Map.copyOf(changed);
  }

  private static Map<String, Object> withoutNulls(Map<String, ?> configs) {
    Map<String, Object> present = new HashMap<>();
    configs.forEach(
        (key, value) -> {
          if (value != null) {
            present.put(key, value);
          }
        });
    return present;
  }

  private static SslEngineFactory build(Map<String, Object> configs) {
    Class<?> type = (Class<?>) configs.get(SslConfigs.SSL_ENGINE_FACTORY_CLASS_CONFIG);
    SslEngineFactory built =
        type == null
            ? new DefaultSslEngineFactory()
            : Utils.newInstance(type, SslEngineFactory.class);
    built.configure(configs);
    return built;
  }

  private Map<String, byte[]> readFiles(Map<String, Object> configs) {
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
