package io.tidelog.operator.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.tidelog.operator.api.Cluster;
import io.tidelog.operator.api.ClusterSpec;
import io.tidelog.operator.brokers.BrokerAccess;
import io.tidelog.operator.certificates.CaSecret;
import io.tidelog.operator.certificates.CertificateAuthority;
import io.tidelog.operator.certificates.Pem;
import java.nio.charset.StandardCharsets;
import java.security.PrivateKey;
import java.security.Signature;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A Cluster's CAs and broker certificates over a year of a clock the test moves: issued with the
 * right names, renewed before expiry, and a CA renewed in its three steps, each no shorter than the
 * Secret propagation time.
 */
@EnableKubernetesMockClient(crud = true)
class ClusterCertificatesTest {
  private static final Duration PROPAGATION = Duration.ofMinutes(3);
  private static final Instant START = Instant.parse("2026-01-01T00:00:00Z");

  KubernetesClient client;

  @Test
  void brokersGetCertificatesOfTheirNamesFromTheClusterCa() throws Exception {
    Cluster cluster = cluster("c", 2);
    ClusterCertificates.Outcome outcome = reconcile(cluster, START);
    assertThat(outcome.problem()).isEmpty();
    assertThat(outcome.renewals()).isEmpty();

    X509Certificate ca = clusterCa(cluster);
    assertThat(ca.getBasicConstraints()).isGreaterThanOrEqualTo(0);
    // the operator's Admin reads its certificate and the trusted CAs where they are written
    assertThat(BrokerAccess.mutualTls(cluster, client, "c-brokers:9091"))
        .get()
        .satisfies(
            access -> {
              assertThat(access.security().get("ssl.truststore.certificates"))
                  .isEqualTo(Pem.of(ca));
              assertThat(access.toString()).doesNotContain("PRIVATE KEY");
            });
    X509Certificate operator =
        Pem.certificates(data(cluster, "c-operator-certs", "operator.crt")).get(0);
    operator.verify(ca.getPublicKey());
    assertThat(operator.getSubjectX500Principal().getName())
        .isEqualTo("CN=c-operator,O=tidelog.io");
    assertThat(trusted(cluster, "cluster")).containsExactly(ca);
    assertThat(trusted(cluster, "clients")).singleElement().isNotEqualTo(ca);
    for (int id = 0; id < 2; id++) {
      String pod = "c-broker-" + id;
      List<X509Certificate> chain = Pem.certificates(data(cluster, "c-broker-certs", pod + ".crt"));
      X509Certificate broker = chain.get(0);
      broker.verify(ca.getPublicKey());
      assertThat(chain.get(1)).isEqualTo(ca);
      assertThat(broker.getSubjectX500Principal().getName()).isEqualTo("CN=c-broker,O=tidelog.io");
      assertThat(names(broker))
          .contains(pod + ".c-brokers.ns.svc", pod + ".c-brokers.ns.svc.cluster.local")
          .contains("c-bootstrap", "c-bootstrap.ns.svc", "c-brokers.ns.svc");
      assertThat(broker.getExtendedKeyUsage())
          .contains("1.3.6.1.5.5.7.3.1", "1.3.6.1.5.5.7.3.2"); // server and client auth
      PrivateKey key = Pem.privateKey(data(cluster, "c-broker-certs", pod + ".key"));
      assertThat(signsFor(key, broker)).isTrue();
      assertThat(data(cluster, "c-broker-certs", pod + ".pem"))
          .isEqualTo(data(cluster, "c-broker-certs", pod + ".key") + Pem.of(chain));
    }

    // A second reconcile changes nothing; a third broker gets its own certificate.
    String before = secret(cluster, "c-broker-certs").getMetadata().getResourceVersion();
    reconcile(cluster, START.plusSeconds(60));
    assertThat(secret(cluster, "c-broker-certs").getMetadata().getResourceVersion())
        .isEqualTo(before);
    cluster.getSpec().replicas = 3;
    reconcile(cluster, START.plusSeconds(120));
    assertThat(secret(cluster, "c-broker-certs").getData())
        .containsKeys("c-broker-2.crt", "c-broker-2.key", "c-broker-2.pem");
  }

  /**
   * A managed etcd's members get certificates of their names from the cluster CA, and a cluster CA
   * renewal switches only once every member runs trusting both CAs (etcd reads them at start).
   */
  @Test
  void etcdMembersGetCertificatesAndTheSwitchWaitsForEtcdToTrustBoth() throws Exception {
    Cluster cluster = cluster("m", 1);
    cluster.getSpec().etcd.endpoints = null;
    cluster.getSpec().etcd.replicas = 3;
    java.util.concurrent.atomic.AtomicReference<String> etcdTrust =
        new java.util.concurrent.atomic.AtomicReference<>();
    java.util.function.Function<Instant, ClusterCertificates.Outcome> reconcile =
        now ->
            ClusterCertificates.reconcile(
                client, cluster, now, PROPAGATION, trusted -> trusted.equals(etcdTrust.get()));
    ClusterCertificates.Outcome first = reconcile.apply(START);
    X509Certificate ca = clusterCa(cluster);
    assertThat(first.clusterTrust()).isEqualTo(Pem.of(ca));
    for (int id = 0; id < 3; id++) {
      String pod = "m-etcd-" + id;
      List<X509Certificate> chain = Pem.certificates(data(cluster, "m-etcd-certs", pod + ".crt"));
      chain.get(0).verify(ca.getPublicKey());
      assertThat(chain.get(0).getSubjectX500Principal().getName())
          .isEqualTo("CN=m-etcd,O=tidelog.io");
      assertThat(names(chain.get(0)))
          .contains(pod + ".m-etcd.ns.svc", "m-etcd-client.ns.svc", "m-etcd-client");
      assertThat(
              signsFor(Pem.privateKey(data(cluster, "m-etcd-certs", pod + ".key")), chain.get(0)))
          .isTrue();
    }
    etcdTrust.set(first.clusterTrust());

    Secret caSecret = secret(cluster, "m-cluster-ca");
    caSecret.getMetadata().setAnnotations(Map.of(CaSecret.FORCE_RENEW_ANNOTATION, "true"));
    client.resource(caSecret).update();
    ClusterCertificates.Outcome trustingBoth = reconcile.apply(START.plusSeconds(60));
    assertThat(trustingBoth.clusterTrust()).isNotEqualTo(etcdTrust.get());
    // past the propagation time, the switch waits while etcd trusts only the old CA,
    Instant later = START.plusSeconds(60).plus(PROPAGATION).plusSeconds(1);
    assertThat(reconcile.apply(later).renewals())
        .containsExactly(
            new ClusterCertificates.Renewal(
                "cluster", CaSecret.Step.TRUSTING_BOTH, START.plusSeconds(60), true));
    assertThat(Pem.certificates(data(cluster, "m-etcd-certs", "m-etcd-0.crt")).get(0))
        .satisfies(c -> c.verify(ca.getPublicKey()));
    // and comes once its members restarted trusting both.
    etcdTrust.set(trustingBoth.clusterTrust());
    assertThat(reconcile.apply(later.plusSeconds(1)).renewals())
        .singleElement()
        .satisfies(r -> assertThat(r.step()).isEqualTo(CaSecret.Step.SWITCHED));
    Pem.certificates(data(cluster, "m-etcd-certs", "m-etcd-0.crt"))
        .get(0)
        .verify(clusterCa(cluster).getPublicKey());
  }

  /**
   * A listener's certificate of the user's own (as cert-manager writes it: the chain, the key in
   * SEC1) becomes a Kafka PEM keystore in the Cluster's listener Secret, and follows the user's
   * Secret when it changes; a missing Secret or a key of another certificate is said, with the
   * field, and nothing is written.
   */
  @Test
  void aListenerCertificateOfTheUsersOwnIsCheckedAndKeptAsAKeystore() throws Exception {
    Cluster cluster = cluster("own", 1);
    ClusterSpec.Listener external = new ClusterSpec.Listener();
    external.name = "external";
    external.port = 9094;
    external.tls = true;
    external.configuration = new ClusterSpec.ListenerConfiguration();
    external.configuration.brokerCertChainAndKey = new ClusterSpec.CertificateSecret();
    external.configuration.brokerCertChainAndKey.secretName = "public-cert";
    external.configuration.brokerCertChainAndKey.certificate = "tls.crt";
    external.configuration.brokerCertChainAndKey.key = "tls.key";
    cluster.getSpec().listeners = List.of(external);

    assertThat(reconcile(cluster, START).problem())
        .contains(
            "spec.listeners[0].configuration.brokerCertChainAndKey: Secret public-cert does not"
                + " exist in namespace ns");

    CertificateAuthority publicCa =
        CertificateAuthority.create("public", START, Duration.ofDays(90));
    CertificateAuthority.Issued first =
        publicCa.issue("kafka.example.com", List.of("*.example.com"), START, Duration.ofDays(90));
    CertificateAuthority.Issued other =
        publicCa.issue("other", List.of(), START, Duration.ofDays(90));
    writeUserSecret(Pem.of(first.certificate(), publicCa.certificate()), sec1(other.key()));
    assertThat(reconcile(cluster, START).problem())
        .hasValueSatisfying(
            problem ->
                assertThat(problem)
                    .startsWith(
                        "spec.listeners[0].configuration.brokerCertChainAndKey: Secret"
                            + " public-cert: the key is not the key of the certificate"));
    assertThat(secret(cluster, "own-listener-certs")).isNull();

    writeUserSecret(Pem.of(first.certificate(), publicCa.certificate()), sec1(first.key()));
    assertThat(reconcile(cluster, START).problem()).isEmpty();
    String keystore = data(cluster, "own-listener-certs", "external.pem");
    assertThat(keystore).startsWith("-----BEGIN PRIVATE KEY-----");
    assertThat(Pem.certificates(keystore))
        .containsExactly(first.certificate(), publicCa.certificate());
    assertThat(signsFor(Pem.privateKey(keystore), first.certificate())).isTrue();

    // cert-manager renews it: the next reconcile keeps the new one.
    CertificateAuthority.Issued renewed =
        publicCa.issue("kafka.example.com", List.of("*.example.com"), START, Duration.ofDays(90));
    writeUserSecret(Pem.of(renewed.certificate(), publicCa.certificate()), sec1(renewed.key()));
    reconcile(cluster, START.plusSeconds(60));
    assertThat(Pem.certificates(data(cluster, "own-listener-certs", "external.pem")).get(0))
        .isEqualTo(renewed.certificate());
  }

  private void writeUserSecret(String chain, String key) {
    client
        .resource(
            new io.fabric8.kubernetes.api.model.SecretBuilder()
                .withNewMetadata()
                .withName("public-cert")
                .withNamespace("ns")
                .endMetadata()
                .withType("kubernetes.io/tls")
                .withData(Map.of("tls.crt", base64(chain), "tls.key", base64(key)))
                .build())
        .createOr(existing -> existing.update());
  }

  /**
   * The key as OpenSSL's traditional PEM (SEC1, {@code EC PRIVATE KEY}, with its curve), as
   * cert-manager writes it by default.
   */
  private static String sec1(PrivateKey key) throws Exception {
    var info = org.bouncycastle.asn1.pkcs.PrivateKeyInfo.getInstance(key.getEncoded());
    var inner = org.bouncycastle.asn1.sec.ECPrivateKey.getInstance(info.parsePrivateKey());
    var withCurve =
        new org.bouncycastle.asn1.sec.ECPrivateKey(
            256,
            inner.getKey(),
            inner.getPublicKey(),
            info.getPrivateKeyAlgorithm().getParameters());
    java.io.StringWriter text = new java.io.StringWriter();
    try (org.bouncycastle.util.io.pem.PemWriter pem =
        new org.bouncycastle.util.io.pem.PemWriter(text)) {
      pem.writeObject(
          new org.bouncycastle.util.io.pem.PemObject("EC PRIVATE KEY", withCurve.getEncoded()));
    }
    return text.toString();
  }

  @Test
  void certificatesAndTheCaAreRenewedBeforeTheyExpireInThreeSteps() throws Exception {
    Cluster cluster = cluster("r", 1);
    cluster.getSpec().clusterCa = new ClusterSpec.CertificateAuthoritySpec();
    cluster.getSpec().clusterCa.validityDays = 100;
    cluster.getSpec().clusterCa.renewalDays = 10;
    reconcile(cluster, START);
    X509Certificate oldCa = clusterCa(cluster);
    X509Certificate first = broker(cluster);

    // Before the renewal window, nothing changes;
    reconcile(cluster, START.plus(Duration.ofDays(80)));
    assertThat(broker(cluster)).isEqualTo(first);

    // in it, the new CA is trusted beside the old, and the broker keeps the old CA's certificate
    Instant renewal = START.plus(Duration.ofDays(91));
    assertThat(reconcile(cluster, renewal).renewals())
        .containsExactly(
            new ClusterCertificates.Renewal("cluster", CaSecret.Step.TRUSTING_BOTH, renewal));
    X509Certificate newCa = clusterCa(cluster);
    assertThat(newCa).isNotEqualTo(oldCa);
    assertThat(trusted(cluster, "cluster")).containsExactly(newCa, oldCa);
    assertThat(broker(cluster)).isEqualTo(first);
    // until the Secret had time to reach every pod;
    Instant early = renewal.plus(PROPAGATION).minusSeconds(1);
    assertThat(reconcile(cluster, early).renewals())
        .singleElement()
        .satisfies(r -> assertThat(r.step()).isEqualTo(CaSecret.Step.TRUSTING_BOTH));
    assertThat(broker(cluster)).isEqualTo(first);

    // then certificates come from the new CA, still trusting both,
    Instant switched = renewal.plus(PROPAGATION);
    assertThat(reconcile(cluster, switched).renewals())
        .singleElement()
        .satisfies(r -> assertThat(r.step()).isEqualTo(CaSecret.Step.SWITCHED));
    X509Certificate second = broker(cluster);
    second.verify(newCa.getPublicKey());
    assertThat(trusted(cluster, "cluster")).containsExactly(newCa, oldCa);

    // and at last only the new CA is trusted, its old key gone.
    assertThat(reconcile(cluster, switched.plus(PROPAGATION)).renewals()).isEmpty();
    assertThat(trusted(cluster, "cluster")).containsExactly(newCa);
    assertThat(secret(cluster, "r-cluster-ca").getData()).containsOnlyKeys("ca.crt", "ca.key");
    assertThat(secret(cluster, "r-cluster-ca").getMetadata().getAnnotations())
        .doesNotContainKeys(CaSecret.RENEWAL_ANNOTATION, CaSecret.RENEWAL_SINCE_ANNOTATION);
    assertThat(broker(cluster)).isEqualTo(second);
  }

  @Test
  void aCertificateIsRenewedBeforeItExpiresWithoutTouchingTheCa() throws Exception {
    // Given a CA of the user's for ten years, and certificates of 100 days renewed 10 before,
    Cluster cluster = cluster("l", 1);
    cluster.getSpec().clusterCa = new ClusterSpec.CertificateAuthoritySpec();
    cluster.getSpec().clusterCa.generateCertificateAuthority = false;
    cluster.getSpec().clusterCa.validityDays = 100;
    cluster.getSpec().clusterCa.renewalDays = 10;
    CertificateAuthority own = userCa(cluster, Duration.ofDays(3650));
    reconcile(cluster, START);
    X509Certificate first = broker(cluster);
    assertThat(first.getNotAfter().toInstant()).isEqualTo(START.plus(Duration.ofDays(100)));

    // then on day 89 the certificate stays, and on day 91 another of 100 days replaces it.
    reconcile(cluster, START.plus(Duration.ofDays(89)));
    assertThat(broker(cluster)).isEqualTo(first);
    Instant due = START.plus(Duration.ofDays(91));
    reconcile(cluster, due);
    X509Certificate second = broker(cluster);
    assertThat(second).isNotEqualTo(first);
    assertThat(second.getNotAfter().toInstant()).isEqualTo(due.plus(Duration.ofDays(100)));
    second.verify(own.certificate().getPublicKey());
    assertThat(clusterCa(cluster)).isEqualTo(own.certificate());
  }

  @Test
  void aCaTheUserBringsIsRequiredAndNeverRenewedByTheOperator() throws Exception {
    Cluster cluster = cluster("b", 1);
    cluster.getSpec().clusterCa = new ClusterSpec.CertificateAuthoritySpec();
    cluster.getSpec().clusterCa.generateCertificateAuthority = false;
    assertThat(reconcile(cluster, START).problem())
        .get()
        .asString()
        .startsWith("spec.clusterCa.generateCertificateAuthority: false, and Secret b-cluster-ca");

    CertificateAuthority own = userCa(cluster, Duration.ofDays(20));
    // within 30 days of its expiry (the default renewalDays), yet not renewed
    assertThat(reconcile(cluster, START).problem()).isEmpty();
    String written = secret(cluster, "b-broker-certs").getMetadata().getResourceVersion();
    assertThat(reconcile(cluster, START.plusSeconds(1)).renewals()).isEmpty();
    assertThat(clusterCa(cluster)).isEqualTo(own.certificate());
    broker(cluster).verify(own.certificate().getPublicKey());
    // and a certificate that already lasts as long as its CA is not issued again and again
    assertThat(broker(cluster).getNotAfter()).isEqualTo(own.certificate().getNotAfter());
    assertThat(secret(cluster, "b-broker-certs").getMetadata().getResourceVersion())
        .isEqualTo(written);
  }

  /** The user's own CA for {@code cluster}, in the Secret the operator reads it from. */
  private CertificateAuthority userCa(Cluster cluster, Duration validity) {
    CertificateAuthority own = CertificateAuthority.create("own", START, validity);
    client
        .secrets()
        .inNamespace("ns")
        .resource(
            new io.fabric8.kubernetes.api.model.SecretBuilder()
                .withNewMetadata()
                .withName(cluster.getMetadata().getName() + "-cluster-ca")
                .endMetadata()
                .withData(
                    Map.of(
                        "ca.crt", base64(Pem.of(own.certificate())),
                        "ca.key", base64(Pem.of(own.key()))))
                .build())
        .create();
    return own;
  }

  private static String base64(String text) {
    return Base64.getEncoder().encodeToString(text.getBytes(StandardCharsets.UTF_8));
  }

  private ClusterCertificates.Outcome reconcile(Cluster cluster, Instant now) {
    return ClusterCertificates.reconcile(client, cluster, now, PROPAGATION, trusted -> true);
  }

  private static Cluster cluster(String name, int replicas) {
    Cluster cluster = new Cluster();
    cluster.setMetadata(
        new ObjectMetaBuilder().withName(name).withNamespace("ns").withUid("uid-" + name).build());
    ClusterSpec spec = new ClusterSpec();
    spec.replicas = replicas;
    spec.storage = new ClusterSpec.Storage();
    spec.storage.size = "1Gi";
    spec.etcd = new ClusterSpec.Etcd();
    spec.etcd.endpoints = List.of("http://etcd:2379");
    cluster.setSpec(spec);
    return cluster;
  }

  private Secret secret(Cluster cluster, String name) {
    return client.secrets().inNamespace(cluster.getMetadata().getNamespace()).withName(name).get();
  }

  private String data(Cluster cluster, String secret, String key) {
    String value = secret(cluster, secret).getData().get(key);
    return new String(Base64.getDecoder().decode(value), StandardCharsets.UTF_8);
  }

  private X509Certificate clusterCa(Cluster cluster) {
    String name = cluster.getMetadata().getName();
    return Pem.certificates(data(cluster, name + "-cluster-ca", "ca.crt")).get(0);
  }

  private List<X509Certificate> trusted(Cluster cluster, String kind) {
    String name = cluster.getMetadata().getName();
    return Pem.certificates(data(cluster, name + "-" + kind + "-ca-cert", "ca.crt"));
  }

  private X509Certificate broker(Cluster cluster) {
    String name = cluster.getMetadata().getName();
    return Pem.certificates(data(cluster, name + "-broker-certs", name + "-broker-0.crt")).get(0);
  }

  private static List<String> names(X509Certificate certificate) throws Exception {
    return certificate.getSubjectAlternativeNames().stream().map(n -> (String) n.get(1)).toList();
  }

  private static boolean signsFor(PrivateKey key, X509Certificate certificate) throws Exception {
    byte[] message = "proof".getBytes(StandardCharsets.UTF_8);
    Signature signer = Signature.getInstance("SHA256withECDSA");
    signer.initSign(key);
    signer.update(message);
    byte[] signature = signer.sign();
    Signature verifier = Signature.getInstance("SHA256withECDSA");
    verifier.initVerify(certificate.getPublicKey());
    verifier.update(message);
    return verifier.verify(signature);
  }
}
