package io.tidelog.operator.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.tidelog.operator.api.Cluster;
import io.tidelog.operator.api.ClusterSpec;
import java.io.StringReader;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import org.junit.jupiter.api.Test;

/**
 * spec.config reaches server.properties exactly as given, or is refused: no value or key can add a
 * line of its own, such as {@code listeners}, whatever its spelling in properties syntax.
 */
class ServerPropertiesTest {
  @Test
  void valuesComeBackAsTheyWereGiven() throws Exception {
    // Given values that properties syntax would otherwise read differently,
    Map<String, String> config =
        Map.of(
            "sasl.jaas.config",
            "org.apache.kafka.common.security.plain.PlainLoginModule required username=\"a\";",
            "ssl.truststore.location",
            "C:\\keys\\broker.p12",
            "log.retention.ms",
            "#not a comment",
            "message.max.bytes",
            " 1048588",
            "client.id",
            "è=:\\u0041");
    Cluster cluster = cluster(config);
    assertThat(SpecChecks.problem(cluster, null, null, List.of(), null)).isEmpty();

    // when server.properties is read back as the broker reads it,
    Properties read = new Properties();
    read.load(new StringReader(ClusterModel.serverProperties(cluster)));

    // then every value is the one given, and the operator's own keys are the operator's.
    config.forEach((key, value) -> assertThat(read.getProperty(key)).as(key).isEqualTo(value));
    assertThat(read.getProperty("listeners"))
        .isEqualTo("REPLICATION://0.0.0.0:9091,PLAIN://0.0.0.0:9092");
  }

  @Test
  void aChangeOfDynamicKeysAloneRollsNoBrokerAndAStaticOneDoes() {
    Cluster before = cluster(Map.of("log.retention.ms", "1000", "num.partitions", "3"));
    Cluster dynamic =
        cluster(Map.of("log.retention.ms", "2000", "max.connections", "50", "num.partitions", "3"));
    Cluster restarting = cluster(Map.of("log.retention.ms", "1000", "num.partitions", "4"));

    // The file changes with every key, as a restarted or new broker reads it,
    assertThat(ClusterModel.serverProperties(dynamic))
        .isNotEqualTo(ClusterModel.serverProperties(before))
        .contains("log.retention.ms=2000", "max.connections=50");
    // but the pod template, whose change rolls the brokers, only with keys that need a restart.
    assertThat(ClusterModel.brokerRevision(dynamic)).isEqualTo(ClusterModel.brokerRevision(before));
    assertThat(ClusterModel.brokerRevision(restarting))
        .isNotEqualTo(ClusterModel.brokerRevision(before));
    assertThat(DynamicConfigs.of(dynamic))
        .isEqualTo(Map.of("log.retention.ms", "2000", "max.connections", "50"));
  }

  @Test
  void aValueWithALineBreakIsRefusedWithItsFieldPath() throws Exception {
    for (String breaking : List.of("\n", "\r", "\u000b", "\f", "\u0000")) {
      Cluster cluster =
          cluster(Map.of("log.retention.ms", "1000" + breaking + "listeners=PLAINTEXT://evil:1"));
      assertThat(SpecChecks.problem(cluster, null, null, List.of(), null))
          .get()
          .asString()
          .startsWith("spec.config.log.retention.ms: a value may not hold a line break");
    }
  }

  @Test
  void aKeyThatIsNotAConfigNameIsRefusedSoNoSpellingReachesAnOwnedKey() throws Exception {
    for (String key :
        List.of(
            "listen\\ers",
            "listeners\\",
            "a=listeners",
            "x\nlisteners",
            " listeners",
            "listeners ",
            "#comment",
            "node.id:7",
            "")) {
      Optional<String> problem =
          SpecChecks.problem(cluster(Map.of(key, "1")), null, null, List.of(), null);
      assertThat(problem).as(key).get().asString().startsWith("spec.config: \"");
      assertThat(problem.get()).as(key).contains("is not a config name").doesNotContain("\n");
    }
    assertThat(SpecChecks.problem(cluster(Map.of("node.id", "7")), null, null, List.of(), null))
        .contains("spec.config.node.id: set by the operator; remove it from spec.config");
  }

  @Test
  void listenersBecomeKafkasListenerConfigsWithMutualTlsBetweenBrokers() throws Exception {
    Cluster cluster = cluster(Map.of());
    cluster.getSpec().listeners =
        List.of(
            ownCertificate(
                listener("scram", 9092, true, ClusterSpec.AuthenticationType.SCRAM_SHA_512)),
            listener("mtls", 9093, true, ClusterSpec.AuthenticationType.TLS),
            listener("oauth", 9094, false, ClusterSpec.AuthenticationType.OAUTH));
    cluster.getSpec().listeners.get(2).authentication.jwksEndpointUri = "https://idp/jwks";
    cluster.getSpec().listeners.get(2).authentication.validIssuerUri = "https://idp";
    cluster.getSpec().authorization = new ClusterSpec.Authorization();
    cluster.getSpec().authorization.type = ClusterSpec.AuthorizationType.SIMPLE;
    cluster.getSpec().authorization.superUsers = List.of("User:admin");
    assertThat(SpecChecks.problem(cluster, null, null, List.of(), null)).isEmpty();
    Properties read = new Properties();
    read.load(new StringReader(ClusterModel.serverProperties(cluster)));
    assertThat(read)
        .containsEntry(
            "listeners",
            "REPLICATION://0.0.0.0:9091,SCRAM://0.0.0.0:9092,MTLS://0.0.0.0:9093,OAUTH://0.0.0.0:9094")
        .containsEntry(
            "listener.security.protocol.map",
            "REPLICATION:SSL,SCRAM:SASL_SSL,MTLS:SSL,OAUTH:SASL_PLAINTEXT")
        .containsEntry("inter.broker.listener.name", "REPLICATION")
        .containsEntry("listener.name.replication.ssl.client.auth", "required")
        .containsEntry(
            "listener.name.replication.ssl.truststore.location",
            "/etc/tidelog-tls/cluster-ca/ca.crt")
        .containsEntry("listener.name.scram.sasl.enabled.mechanisms", "SCRAM-SHA-512")
        // the user's own certificate, which the operator keeps as a PEM keystore
        .containsEntry(
            "listener.name.scram.ssl.keystore.location", "/etc/tidelog-tls/listeners/scram.pem")
        .doesNotContainKey("listener.name.mtls.ssl.keystore.location")
        .containsEntry("listener.name.mtls.ssl.client.auth", "required")
        .containsEntry(
            "listener.name.mtls.ssl.truststore.location", "/etc/tidelog-tls/clients-ca/ca.crt")
        .containsEntry(
            "listener.name.mtls.ssl.principal.mapping.rules",
            "RULE:^CN=([^,]+),O=tidelog\\.io$/$1/,DEFAULT")
        .containsEntry("listener.name.oauth.sasl.enabled.mechanisms", "OAUTHBEARER")
        .containsEntry("listener.name.oauth.sasl.oauthbearer.jwks.endpoint.url", "https://idp/jwks")
        .containsEntry("listener.name.oauth.sasl.oauthbearer.expected.issuer", "https://idp")
        .containsEntry(
            "authorizer.class.name", "org.apache.kafka.metadata.authorizer.StandardAuthorizer")
        .containsEntry(
            "super.users",
            "User:CN=c-broker,O=tidelog.io;User:CN=c-operator,O=tidelog.io;User:admin");
    assertThat(ClusterModel.bootstrapServers(cluster)).isEqualTo("c-bootstrap.ns.svc:9092");
    var pod = ClusterModel.brokerStatefulSet(cluster).getSpec().getTemplate().getSpec();
    assertThat(pod.getVolumes())
        .filteredOn(v -> v.getSecret() != null)
        .extracting(v -> v.getSecret().getSecretName())
        .contains("c-listener-certs");
    assertThat(pod.getContainers().get(0).getVolumeMounts())
        .anySatisfy(m -> assertThat(m.getMountPath()).isEqualTo("/etc/tidelog-tls/listeners"));
  }

  @Test
  void listenersThatCannotBeServedAreRefusedWithTheirFieldPath() throws Exception {
    Map<List<ClusterSpec.Listener>, String> refused =
        Map.of(
            List.of(listener("a", 9092, false, null), listener("a", 9093, false, null)),
            "spec.listeners[1].name: a is taken",
            List.of(listener("replication", 9092, false, null)),
            "spec.listeners[0].name: replication is taken",
            List.of(listener("a", 9091, false, null)),
            "spec.listeners[0].port: 9091 is taken",
            List.of(listener("a", 9092, false, ClusterSpec.AuthenticationType.TLS)),
            "spec.listeners[0].authentication.type: tls needs tls: true",
            List.of(listener("a", 9092, true, ClusterSpec.AuthenticationType.OAUTH)),
            "spec.listeners[0].authentication.jwksEndpointUri: oauth needs",
            List.of(ownCertificate(listener("a", 9092, false, null))),
            "spec.listeners[0].configuration.brokerCertChainAndKey: needs tls: true");
    for (var entry : refused.entrySet()) {
      Cluster cluster = cluster(Map.of());
      cluster.getSpec().listeners = entry.getKey();
      assertThat(SpecChecks.problem(cluster, null, null, List.of(), null))
          .get()
          .asString()
          .startsWith(entry.getValue());
    }
    assertThat(
            SpecChecks.problem(
                cluster(Map.of("listener.name.replication.ssl.client.auth", "none")),
                null,
                null,
                List.of(),
                null))
        .contains(
            "spec.config.listener.name.replication.ssl.client.auth: set by the operator; remove it from spec.config");
  }

  /** {@code listener} presenting the certificate of Secret own-cert. */
  private static ClusterSpec.Listener ownCertificate(ClusterSpec.Listener listener) {
    listener.configuration = new ClusterSpec.ListenerConfiguration();
    listener.configuration.brokerCertChainAndKey = new ClusterSpec.CertificateSecret();
    listener.configuration.brokerCertChainAndKey.secretName = "own-cert";
    listener.configuration.brokerCertChainAndKey.certificate = "tls.crt";
    listener.configuration.brokerCertChainAndKey.key = "tls.key";
    return listener;
  }

  private static ClusterSpec.Listener listener(
      String name, int port, boolean tls, ClusterSpec.AuthenticationType type) {
    ClusterSpec.Listener listener = new ClusterSpec.Listener();
    listener.name = name;
    listener.port = port;
    listener.tls = tls;
    if (type != null) {
      listener.authentication = new ClusterSpec.ListenerAuthentication();
      listener.authentication.type = type;
    }
    return listener;
  }

  private static Cluster cluster(Map<String, String> config) {
    Cluster cluster = new Cluster();
    cluster.setMetadata(new ObjectMetaBuilder().withName("c").withNamespace("ns").build());
    ClusterSpec spec = new ClusterSpec();
    spec.replicas = 1;
    spec.storage = new ClusterSpec.Storage();
    spec.storage.size = "1Gi";
    spec.etcd = new ClusterSpec.Etcd();
    spec.etcd.endpoints = List.of("http://etcd:2379");
    spec.config = config;
    cluster.setSpec(spec);
    return cluster;
  }
}
