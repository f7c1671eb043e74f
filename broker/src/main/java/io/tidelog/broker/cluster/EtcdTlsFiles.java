package io.tidelog.broker.cluster;

import java.io.IOException;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.Principal;
import java.security.PrivateKey;
import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.LongSupplier;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509ExtendedKeyManager;
import javax.net.ssl.X509ExtendedTrustManager;
import org.apache.kafka.common.config.SslConfigs;
import org.apache.kafka.common.config.types.Password;
import org.apache.kafka.common.security.ssl.DefaultSslEngineFactory;
import org.apache.kafka.common.utils.Utils;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The etcd client's TLS files (PEM: the CA certificates to trust, this broker's certificate chain
 * and its PKCS#8 key), read again when they change: the key manager and trust manager that jetcd's
 * connections handshake with look at the files at most once per {@link #CHECK_INTERVAL_MS}, and
 * every handshake after a change gets the new ones. Established connections keep theirs; etcd
 * checks a certificate only at the handshake. So a certificate or CA renewed in a mounted Secret
 * reaches etcd at the next reconnection without a restart, as the listeners' keystores do ({@code
 * SslEngineSource}). Files that do not load (caught half written) leave the last good ones in use.
 *
 * <p>The PEM text is read by Kafka's own PEM keystore ({@code ssl.keystore.type=PEM}).
 *
 * <p>Thread-safe: handshakes on gRPC's threads read a volatile snapshot.
 */
final class EtcdTlsFiles {
  static final long CHECK_INTERVAL_MS = 1_000;
  private static final Logger LOG = LoggerFactory.getLogger(EtcdTlsFiles.class);

  private final Path caFile;
  private final Path certFile;
  private final Path keyFile;
  private final boolean verifyHostname;
  private final LongSupplier clock;
  private volatile Loaded loaded;
  private volatile long checkedAt;

  /** What one reading of the files gave. */
  private record Loaded(
      Map<Path, byte[]> files, X509ExtendedKeyManager keys, X509ExtendedTrustManager trust) {}

  /**
   * @param caFile the CA certificates to trust, or null for the JVM's
   * @param certFile this broker's certificate chain, or null for none (with {@code keyFile})
   * @param verifyHostname whether etcd's certificate must name the host connected to
   * @throws IllegalArgumentException when the files do not load
   */
  EtcdTlsFiles(
      String caFile, String certFile, String keyFile, boolean verifyHostname, LongSupplier clock) {
    this.caFile = caFile == null ? null : Path.of(caFile);
    this.certFile = certFile == null ? null : Path.of(certFile);
    this.keyFile = keyFile == null ? null : Path.of(keyFile);
    this.verifyHostname = verifyHostname;
    this.clock = clock;
    try {
      this.loaded = load(read());
    } catch (IOException | GeneralSecurityException | RuntimeException e) {
      throw new IllegalArgumentException(e.getMessage(), e);
    }
    this.checkedAt = clock.getAsLong();
  }

  boolean hasKey() {
    return certFile != null;
  }

  /** The current snapshot, read again first if the files changed since the last check. */
  private Loaded current() {
    long now = clock.getAsLong();
    if (now - checkedAt >= CHECK_INTERVAL_MS) {
      synchronized (this) {
        if (now - checkedAt >= CHECK_INTERVAL_MS) {
          checkedAt = now;
          reloadIfChanged();
        }
      }
    }
    return loaded;
  }

  private void reloadIfChanged() {
    Map<Path, byte[]> files;
    try {
      files = read();
    } catch (IOException e) {
      LOG.warn("Reading the etcd TLS files failed, the last ones stay: {}", e.toString());
      return;
    }
    if (sameFiles(files, loaded.files())) {
      return;
    }
    try {
      loaded = load(files);
      LOG.info("etcd connections now handshake with the changed TLS files");
    } catch (GeneralSecurityException | RuntimeException e) {
      LOG.warn("The changed etcd TLS files do not load, the last ones stay: {}", e.getMessage());
    }
  }

  private Map<Path, byte[]> read() throws IOException {
    Map<Path, byte[]> files = new HashMap<>();
    for (Path file : Arrays.asList(caFile, certFile, keyFile)) {
      if (file != null) {
        files.put(file, Files.readAllBytes(file));
      }
    }
    return files;
  }

  private static boolean sameFiles(Map<Path, byte[]> a, Map<Path, byte[]> b) {
    return a.keySet().equals(b.keySet())
        && a.keySet().stream().allMatch(file -> Arrays.equals(a.get(file), b.get(file)));
  }

  private Loaded load(Map<Path, byte[]> files) throws GeneralSecurityException {
    Map<String, Object> configs = new HashMap<>();
    configs.put(SslConfigs.SSL_PROTOCOL_CONFIG, SslConfigs.DEFAULT_SSL_PROTOCOL);
    configs.put(SslConfigs.SSL_ENABLED_PROTOCOLS_CONFIG, List.of("TLSv1.3", "TLSv1.2"));
    configs.put(
        SslConfigs.SSL_KEYMANAGER_ALGORITHM_CONFIG, KeyManagerFactory.getDefaultAlgorithm());
    configs.put(
        SslConfigs.SSL_TRUSTMANAGER_ALGORITHM_CONFIG, TrustManagerFactory.getDefaultAlgorithm());
    if (certFile != null) {
      configs.put(SslConfigs.SSL_KEYSTORE_TYPE_CONFIG, "PEM");
      configs.put(SslConfigs.SSL_KEYSTORE_CERTIFICATE_CHAIN_CONFIG, text(files, certFile));
      configs.put(SslConfigs.SSL_KEYSTORE_KEY_CONFIG, text(files, keyFile));
    }
    if (caFile != null) {
      configs.put(SslConfigs.SSL_TRUSTSTORE_TYPE_CONFIG, "PEM");
      configs.put(SslConfigs.SSL_TRUSTSTORE_CERTIFICATES_CONFIG, text(files, caFile));
    }
    DefaultSslEngineFactory pem = new DefaultSslEngineFactory();
    try {
      pem.configure(configs);
      X509ExtendedKeyManager keys = null;
      if (certFile != null) {
        KeyManagerFactory keyFactory =
            KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        keyFactory.init(pem.keystore(), new char[0]);
        keys = (X509ExtendedKeyManager) keyFactory.getKeyManagers()[0];
      }
      TrustManagerFactory trustFactory =
          TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
      trustFactory.init(caFile == null ? null : pem.truststore());
      X509ExtendedTrustManager trust =
          (X509ExtendedTrustManager) trustFactory.getTrustManagers()[0];
      return new Loaded(files, keys, trust);
    } finally {
      Utils.closeQuietly(pem, "the PEM reader of the etcd TLS files");
    }
  }

  private static Password text(Map<Path, byte[]> files, Path file) {
    return new Password(new String(files.get(file), java.nio.charset.StandardCharsets.US_ASCII));
  }

  /** The key manager of the current files. */
  X509ExtendedKeyManager keyManager() {
    return new X509ExtendedKeyManager() {
      @Override
      public String chooseEngineClientAlias(
          String[] keyType, Principal[] issuers, SSLEngine engine) {
        return keys().chooseEngineClientAlias(keyType, issuers, engine);
      }

      @Override
      public String chooseClientAlias(String[] keyType, Principal[] issuers, Socket socket) {
        return keys().chooseClientAlias(keyType, issuers, socket);
      }

      @Override
      public String[] getClientAliases(String keyType, Principal[] issuers) {
        return keys().getClientAliases(keyType, issuers);
      }

      @Override
      public String[] getServerAliases(String keyType, Principal[] issuers) {
        return keys().getServerAliases(keyType, issuers);
      }

      @Override
      public String chooseServerAlias(String keyType, Principal[] issuers, Socket socket) {
        return keys().chooseServerAlias(keyType, issuers, socket);
      }

      @Override
      public X509Certificate[] getCertificateChain(String alias) {
        return keys().getCertificateChain(alias);
      }

      @Override
      public PrivateKey getPrivateKey(String alias) {
        return keys().getPrivateKey(alias);
      }
    };
  }

  private X509ExtendedKeyManager keys() {
    return Objects.requireNonNull(current().keys(), "no etcd client certificate configured");
  }

  /** The trust manager of the current files. */
  X509ExtendedTrustManager trustManager() {
    return new X509ExtendedTrustManager() {
      @Override
      public void checkServerTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
          throws CertificateException {
        if (verifyHostname) {
          current().trust().checkServerTrusted(chain, authType, engine);
        } else {
          current().trust().checkServerTrusted(chain, authType); // the engine's host unchecked
        }
      }

      @Override
      public void checkServerTrusted(X509Certificate[] chain, String authType, Socket socket)
          throws CertificateException {
        if (verifyHostname) {
          current().trust().checkServerTrusted(chain, authType, socket);
        } else {
          current().trust().checkServerTrusted(chain, authType);
        }
      }

      @Override
      public void checkServerTrusted(X509Certificate[] chain, String authType)
          throws CertificateException {
        current().trust().checkServerTrusted(chain, authType);
      }

      @Override
      public void checkClientTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
          throws CertificateException {
        current().trust().checkClientTrusted(chain, authType, engine);
      }

      @Override
      public void checkClientTrusted(X509Certificate[] chain, String authType, Socket socket)
          throws CertificateException {
        current().trust().checkClientTrusted(chain, authType, socket);
      }

      @Override
      public void checkClientTrusted(X509Certificate[] chain, String authType)
          throws CertificateException {
        current().trust().checkClientTrusted(chain, authType);
      }

      @Override
      public X509Certificate[] getAcceptedIssuers() {
        return current().trust().getAcceptedIssuers();
      }
    };
  }
}
