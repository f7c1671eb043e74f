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
            "ssl.keystore.location",
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
    assertThat(read.getProperty("listeners")).isEqualTo("PLAINTEXT://0.0.0.0:9092");
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
