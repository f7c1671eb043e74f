package io.tidelog.broker.config;

import java.util.List;

/**
 * How the broker reaches etcd: its client URLs ({@code https://} for TLS), the CA that signed
 * etcd's certificate, this broker's client certificate and key (PEM files, as etcd's own {@code
 * --trusted-ca-file}, {@code --cert-file} and {@code --key-file} take them) for etcd's {@code
 * --client-cert-auth}, whether etcd's certificate must name the endpoint's host, and a user and
 * password for etcd's authentication. Each is optional but the URLs. The TLS files are read again
 * when they change ({@code cluster.EtcdTlsFiles}), so renewed certificates need no restart.
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
}
