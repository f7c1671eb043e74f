package io.tidelog.broker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.auth.Permission;
import io.tidelog.broker.cluster.MetadataStore;
import io.tidelog.broker.config.EtcdSettings;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.KafkaException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A broker whose etcd serves only TLS clients with a certificate of its CA (--client-cert-auth) and
 * has user authentication on: with the tidelog.etcd.tls.* files and user it runs; without the
 * certificate, or with a wrong password, it cannot read the metadata.
 */
class EtcdSecurityIT {
  private static final String PASSWORD = "etcd-root-secret";
  @TempDir static Path dir;
  static EtcdServer etcd;
  static Path caPem;
  static Path clientCert;
  static Path clientKey;

  @BeforeAll
  static void start() throws Exception {
    TestCertificates.Authority ca = TestCertificates.authority("etcd-ca");
    caPem = ca.writePem(dir.resolve("ca.pem"));
    TestCertificates.Issued server = ca.issue("etcd");
    TestCertificates.Issued client = ca.issue("root");
    clientCert = client.writeCertificatePem(dir.resolve("client.pem"));
    clientKey = client.writeKeyPem(dir.resolve("client-key.pem"));
    etcd =
        EtcdServer.startTls(
            dir.resolve("etcd"),
            caPem,
            server.writeCertificatePem(dir.resolve("server.pem")),
            server.writeKeyPem(dir.resolve("server-key.pem")));
    try (Client admin =
        Client.builder()
            .endpoints(etcd.endpoint())
            .sslContext(
                tls ->
                    tls.trustManager(caPem.toFile())
                        .keyManager(clientCert.toFile(), clientKey.toFile()))
            .build()) {
      ByteSequence root = bytes("root");
      admin.getAuthClient().userAdd(root, bytes(PASSWORD)).get();
      admin.getAuthClient().roleAdd(root).get();
      admin.getAuthClient().userGrantRole(root, root).get();
      admin
          .getAuthClient()
          .roleGrantPermission(root, bytes("\0"), bytes("\0"), Permission.Type.READWRITE)
          .get();
      admin.getAuthClient().authEnable().get();
    }
  }

  @AfterAll
  static void stop() throws Exception {
    etcd.close();
  }

  private static ByteSequence bytes(String text) {
    return ByteSequence.from(text, StandardCharsets.UTF_8);
  }

  @Test
  void aBrokerWithTheCertificateAndTheUserRunsOnTlsEtcd() throws Exception {
    Map<String, String> config = new HashMap<>();
    config.put("tidelog.etcd.endpoints", etcd.endpoint());
    config.put("tidelog.etcd.tls.ca.file", caPem.toString());
    config.put("tidelog.etcd.tls.cert.file", clientCert.toString());
    config.put("tidelog.etcd.tls.key.file", clientKey.toString());
    config.put("tidelog.etcd.user", "root");
    config.put("tidelog.etcd.password", PASSWORD);
    try (TestBroker broker = TestBroker.start(dir.resolve("logs"), config);
        Admin admin =
            Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrap()))) {
      admin.createTopics(List.of(new NewTopic("over-tls", 3, (short) 1))).all().get();
      assertThat(admin.listTopics().names().get()).contains("over-tls");
    }
  }

  /**
   * A CA renewed under a running broker: its etcd TLS files are rewritten in place (as the kubelet
   * updates a mounted Secret) with a new CA and a certificate it signed, and etcd restarts trusting
   * only the new CA with a certificate of the new CA. The broker reconnects with the new files;
   * with the files it read at its start it could neither trust etcd nor be trusted.
   */
  @Test
  void renewedEtcdTlsFilesAreUsedWhenTheBrokerReconnects() throws Exception {
    Path renewal = java.nio.file.Files.createDirectories(dir.resolve("renewal"));
    TestCertificates.Authority oldCa = TestCertificates.authority("old-etcd-ca");
    TestCertificates.Authority newCa = TestCertificates.authority("new-etcd-ca");
    Path etcdTrust = oldCa.writePem(renewal.resolve("etcd-trust.pem"));
    TestCertificates.Issued oldServer = oldCa.issue("etcd");
    Path serverCert = oldServer.writeCertificatePem(renewal.resolve("server.pem"));
    Path serverKey = oldServer.writeKeyPem(renewal.resolve("server-key.pem"));
    Path brokerTrust = oldCa.writePem(renewal.resolve("broker-trust.pem"));
    TestCertificates.Issued oldClient = oldCa.issue("broker");
    Path brokerCert = oldClient.writeCertificatePem(renewal.resolve("broker.pem"));
    Path brokerKey = oldClient.writeKeyPem(renewal.resolve("broker-key.pem"));
    Map<String, String> config = new HashMap<>();
    try (EtcdServer renewed =
        EtcdServer.startTls(renewal.resolve("etcd"), etcdTrust, serverCert, serverKey)) {
      config.put("tidelog.etcd.endpoints", renewed.endpoint());
      config.put("tidelog.etcd.tls.ca.file", brokerTrust.toString());
      config.put("tidelog.etcd.tls.cert.file", brokerCert.toString());
      config.put("tidelog.etcd.tls.key.file", brokerKey.toString());
      try (TestBroker broker = TestBroker.start(renewal.resolve("logs"), config);
          Admin admin =
              Admin.create(
                  Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrap()))) {
        admin.createTopics(List.of(new NewTopic("before-renewal", 1, (short) 1))).all().get();

        newCa.writePem(brokerTrust);
        TestCertificates.Issued newClient = newCa.issue("broker");
        newClient.writeKeyPem(brokerKey);
        newClient.writeCertificatePem(brokerCert);
        renewed.stop();
        newCa.writePem(etcdTrust);
        TestCertificates.Issued newServer = newCa.issue("etcd");
        newServer.writeKeyPem(serverKey);
        newServer.writeCertificatePem(serverCert);
        renewed.start();

        org.awaitility.Awaitility.await()
            .atMost(java.time.Duration.ofSeconds(90))
            .ignoreExceptions()
            .untilAsserted(
                () ->
                    admin
                        .createTopics(List.of(new NewTopic("after-renewal", 1, (short) 1)))
                        .all()
                        .get());
        assertThat(admin.listTopics().names().get()).contains("before-renewal", "after-renewal");
      }
    }
  }

  @Test
  void withoutTheClientCertificateOrWithAWrongPasswordTheMetadataIsRefused() {
    EtcdSettings noCertificate =
        new EtcdSettings(
            List.of(etcd.endpoint()), caPem.toString(), null, null, true, "root", PASSWORD);
    EtcdSettings wrongPassword =
        new EtcdSettings(
            List.of(etcd.endpoint()),
            caPem.toString(),
            clientCert.toString(),
            clientKey.toString(),
            true,
            "root",
            "wrong");
    for (EtcdSettings settings : List.of(noCertificate, wrongPassword)) {
      assertThrows(KafkaException.class, () -> MetadataStore.connect(settings, "refused").close());
    }
    assertThat(new File(clientKey.toString())).exists();
  }
}
