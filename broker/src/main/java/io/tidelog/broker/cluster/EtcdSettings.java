package io.tidelog.broker.cluster;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.ClientBuilder;
import io.netty.handler.ssl.SslContextBuilder;
import java.nio.charset.StandardCharsets;
import java.util.List;
import javax.net.ssl.SSLException;
import org.apache.kafka.common.config.ConfigException;

/**
 * How the broker reaches etcd: its client URLs ({@code https://} for TLS), the CA that signed
 * etcd's certificate, this broker's client certificate and key (PEM files, as etcd's own {@code
 * --trusted-ca-file}, {@code --cert-file} and {@code --key-file} take them) for etcd's {@code
 * --client-cert-auth}, whether etcd's certificate must name the endpoint's host, and a user and
 * password for etcd's authentication. Each is optional but the URLs. The TLS files are read again
 * when they change ({@link EtcdTlsFiles}), so renewed certificates need no restart.
 */
public record EtcdSettings(
    List<String> endpoints,
    String caFile,
    String certFile,
    String keyFile,
    boolean verifyHostname,
    String user,
    String password) {

  /** Plain etcd: no TLS, no authentication. */
  public static EtcdSettings plain(List<String> endpoints) {
    return new EtcdSettings(endpoints, null, null, null, true, null, null);
  }

  /** A jetcd client with these settings. */
  Client client() {
    ClientBuilder builder = Client.builder().endpoints(endpoints.toArray(String[]::new));
    if (caFile != null || certFile != null) {
      EtcdTlsFiles files;
      try {
        files =
            new EtcdTlsFiles(
                caFile, certFile, keyFile, verifyHostname, () -> System.nanoTime() / 1_000_000);
        builder.sslContext(
            (SslContextBuilder tls) -> {
              tls.trustManager(files.trustManager());
              if (files.hasKey()) {
                tls.keyManager(files.keyManager());
              }
            });
      } catch (SSLException | IllegalArgumentException e) {
        throw new ConfigException("The etcd TLS files do not load: " + e.getMessage());
      }
    }
    if (user != null) {
      builder
          .user(ByteSequence.from(user, StandardCharsets.UTF_8))
          .password(ByteSequence.from(password == null ? "" : password, StandardCharsets.UTF_8));
    }
    return builder.build();
  }
}
