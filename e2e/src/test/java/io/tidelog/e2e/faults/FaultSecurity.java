package io.tidelog.e2e.faults;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/**
 * The secure fault round's configs: a fresh CA (openssl, as {@code bin/tidelog dev up --secure}
 * makes its own) that signs a certificate for each etcd member and broker, for its address; etcd
 * serving clients over TLS and taking only clients with a certificate of that CA; brokers with one
 * SASL_SSL listener that clients (SCRAM-SHA-512, a user {@code --add-scram} stores) and followers
 * (PLAIN, a broker user) both use, with the authorizer on, reaching etcd over TLS with their
 * certificates.
 */
final class FaultSecurity {
  static final String CLIENT_USER = "jepsen";
  private static final String BROKER_USER = "broker";
  private final Path dir;
  private final String clientPassword = UUID.randomUUID().toString();
  private final String brokerPassword = UUID.randomUUID().toString();
  private final String storePassword = UUID.randomUUID().toString();

  private FaultSecurity(Path dir) {
    this.dir = dir;
  }

  /** Makes the CA and the harness's own client certificate under {@code dir}. */
  static FaultSecurity create(Path dir) throws IOException, InterruptedException {
    Files.createDirectories(dir);
    FaultSecurity security = new FaultSecurity(dir);
    Command.run(
        "openssl",
        "req",
        "-x509",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:P-256",
        "-nodes",
        "-days",
        "2",
        "-subj",
        "/CN=tidelog-faults-ca",
        "-keyout",
        dir.resolve("ca-key.pem").toString(),
        "-out",
        dir.resolve("ca.pem").toString());
    security.issue("harness", "127.0.0.1");
    Command.run(
        "openssl",
        "pkcs12",
        "-export",
        "-inkey",
        dir.resolve("harness-key.pem").toString(),
        "-in",
        dir.resolve("harness.pem").toString(),
        "-out",
        dir.resolve("harness.p12").toString(),
        "-passout",
        "pass:" + security.storePassword);
    return security;
  }

  /** Issues {@code name}'s key and certificate, for the IP address {@code address}. */
  void issue(String name, String address) throws IOException, InterruptedException {
    Path key = dir.resolve(name + "-key.pem");
    Path request = dir.resolve(name + ".csr");
    Path extensions = dir.resolve(name + ".ext");
    Command.run(
        "openssl",
        "genpkey",
        "-algorithm",
        "EC",
        "-pkeyopt",
        "ec_paramgen_curve:P-256",
        "-out",
        key.toString());
    Command.run(
        "openssl",
        "req",
        "-new",
        "-key",
        key.toString(),
        "-subj",
        "/CN=" + name,
        "-out",
        request.toString());
    Files.writeString(
        extensions, "subjectAltName=IP:" + address + "\nextendedKeyUsage=serverAuth,clientAuth\n");
    Command.run(
        "openssl",
        "x509",
        "-req",
        "-in",
        request.toString(),
        "-CA",
        ca().toString(),
        "-CAkey",
        dir.resolve("ca-key.pem").toString(),
        "-CAcreateserial",
        "-days",
        "2",
        "-extfile",
        extensions.toString(),
        "-out",
        certificate(name).toString());
    Files.writeString(
        dir.resolve(name + "-keystore.pem"),
        Files.readString(key) + Files.readString(certificate(name)));
    Files.delete(request);
    Files.delete(extensions);
  }

  private Path ca() {
    return dir.resolve("ca.pem");
  }

  private Path certificate(String name) {
    return dir.resolve(name + ".pem");
  }

  /**
   * The flags that make etcd member {@code name} serve clients over TLS with client certificates.
   */
  List<String> etcdFlags(String name) {
    return List.of(
        "--cert-file",
        certificate(name).toString(),
        "--key-file",
        dir.resolve(name + "-key.pem").toString(),
        "--trusted-ca-file",
        ca().toString(),
        "--client-cert-auth");
  }

  /** Broker {@code name}'s security configs, its listener at {@code address}:9092. */
  Map<String, String> brokerConfig(String name, String address) {
    Map<String, String> config = new HashMap<>();
    config.put("listeners", "SASL_SSL://" + address + ":9092");
    config.put("inter.broker.listener.name", "SASL_SSL");
    config.put("ssl.keystore.type", "PEM");
    config.put("ssl.keystore.location", dir.resolve(name + "-keystore.pem").toString());
    config.put("ssl.truststore.type", "PEM");
    config.put("ssl.truststore.location", ca().toString());
    config.put("sasl.enabled.mechanisms", "SCRAM-SHA-512,PLAIN");
    config.put("sasl.mechanism.inter.broker.protocol", "PLAIN");
    config.put(
        "listener.name.sasl_ssl.plain.sasl.jaas.config",
        "org.apache.kafka.common.security.plain.PlainLoginModule required username=\""
            + BROKER_USER
            + "\" password=\""
            + brokerPassword
            + "\" user_"
            + BROKER_USER
            + "=\""
            + brokerPassword
            + "\";");
    config.put("authorizer.class.name", "org.apache.kafka.metadata.authorizer.StandardAuthorizer");
    config.put("super.users", "User:" + BROKER_USER + ";User:" + CLIENT_USER);
    config.put("tidelog.etcd.tls.ca.file", ca().toString());
    config.put("tidelog.etcd.tls.cert.file", certificate(name).toString());
    config.put("tidelog.etcd.tls.key.file", dir.resolve(name + "-key.pem").toString());
    return config;
  }

  /** What a broker's command line adds: the client user's SCRAM credential, stored once. */
  List<String> brokerArguments() {
    return List.of(
        "--add-scram", "SCRAM-SHA-512=[name=" + CLIENT_USER + ",password=" + clientPassword + "]");
  }

  /** The Kafka client configs of the workload: SASL_SSL, SCRAM-SHA-512, the CA trusted. */
  Map<String, Object> clientConfig() {
    return Map.of(
        "security.protocol",
        "SASL_SSL",
        "sasl.mechanism",
        "SCRAM-SHA-512",
        "sasl.jaas.config",
        "org.apache.kafka.common.security.scram.ScramLoginModule required username=\""
            + CLIENT_USER
            + "\" password=\""
            + clientPassword
            + "\";",
        "ssl.truststore.type",
        "PEM",
        "ssl.truststore.location",
        ca().toString());
  }

  /** The harness's TLS for etcd's HTTP gateway: its own certificate, the CA trusted. */
  SSLContext harnessTls() throws IOException, GeneralSecurityException {
    KeyStore own = KeyStore.getInstance("PKCS12");
    try (InputStream in = Files.newInputStream(dir.resolve("harness.p12"))) {
      own.load(in, storePassword.toCharArray());
    }
    KeyManagerFactory keys = KeyManagerFactory.getInstance("PKIX");
    keys.init(own, storePassword.toCharArray());
    KeyStore trusted = KeyStore.getInstance("PKCS12");
    trusted.load(null, null);
    try (InputStream in = Files.newInputStream(ca())) {
      trusted.setCertificateEntry(
          "ca", CertificateFactory.getInstance("X.509").generateCertificate(in));
    }
    TrustManagerFactory trust = TrustManagerFactory.getInstance("PKIX");
    trust.init(trusted);
    SSLContext context = SSLContext.getInstance("TLS");
    context.init(keys.getKeyManagers(), trust.getTrustManagers(), null);
    return context;
  }
}
