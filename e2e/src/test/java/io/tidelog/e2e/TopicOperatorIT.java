package io.tidelog.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.tidelog.operator.OperatorSettings.Controller;
import io.tidelog.operator.api.Conditions;
import io.tidelog.operator.api.Topic;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.config.ConfigResource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Topic reconciler against fabric8's mock API server and a real local Tidelog cluster started
 * by {@code bin/tidelog dev}: every outcome is read back from the cluster with Kafka's Admin.
 */
class TopicOperatorIT {
  private static final String NS = "kafka";
  private static final Duration READY_WITHIN = Duration.ofSeconds(60);

  @TempDir static Path dir;
  static DevCluster cluster;
  static MockKubernetes kubernetes;
  static KubernetesClient client;
  static Admin admin;

  @BeforeAll
  static void start() throws Exception {
    cluster = new DevCluster(dir.resolve("cluster"));
    String bootstrap = cluster.up();
    kubernetes = new MockKubernetes(Set.of(Controller.TOPIC), Duration.ofSeconds(5));
    client = kubernetes.client;
    kubernetes.cluster(NS, "dev", bootstrap);
    admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap));
  }

  @AfterAll
  static void stop() throws Exception {
    if (admin != null) {
      admin.close();
    }
    if (kubernetes != null) {
      kubernetes.close();
    }
    if (cluster != null) {
      cluster.close();
    }
  }

  @Test
  void aTopicBecomesARealTopicWithItsPartitionsAndConfigs() throws Exception {
    // Given a Topic with 3 partitions and two configs, when it is applied,
    Topic topic =
        apply(
            "orders",
            "partitions: 3\n  config: {retention.ms: '3600000', cleanup.policy: compact}");

    // then it is Ready and the cluster holds that topic, with that id, partitions and configs.
    Topic ready = awaitReady(topic);
    TopicDescription description = describe("orders");
    assertThat(description.partitions()).hasSize(3);
    assertThat(ready.getStatus().topicId).isEqualTo(description.topicId().toString());
    assertThat(ready.getStatus().partitions).isEqualTo(3);
    assertThat(ready.getStatus().observedGeneration).isEqualTo(ready.getMetadata().getGeneration());
    assertThat(ownConfigs("orders"))
        .containsExactlyInAnyOrderEntriesOf(
            Map.of("retention.ms", "3600000", "cleanup.policy", "compact"));
  }

  @Test
  void anUpdateGrowsPartitionsAndAppliesConfigsDeclaratively() throws Exception {
    // Given a Ready topic with two configs,
    awaitReady(
        apply(
            "payments",
            "partitions: 2\n  config: {retention.ms: '3600000', segment.bytes: '1048576'}"));

    // when its partitions grow, one config changes and the other is removed from the spec,
    Topic updated = apply("payments", "partitions: 5\n  config: {retention.ms: '7200000'}");

    // then the topic has 5 partitions, the new value, and the removed key is back to its default.
    await()
        .atMost(READY_WITHIN)
        .untilAsserted(
            () -> {
              assertThat(describe("payments").partitions()).hasSize(5);
              assertThat(ownConfigs("payments"))
                  .containsExactlyEntriesOf(Map.of("retention.ms", "7200000"));
            });
    Topic ready = awaitReady(updated);
    assertThat(ready.getStatus().partitions).isEqualTo(5);
  }

  @Test
  void aDecreaseInPartitionsIsNotSupportedAndChangesNothing() throws Exception {
    // Given a Ready topic with 4 partitions,
    awaitReady(apply("clicks", "partitions: 4\n  config: {retention.ms: '3600000'}"));

    // when its spec asks for 2 partitions and another retention,
    apply("clicks", "partitions: 2\n  config: {retention.ms: '60000'}");

    // then it says NotSupported, naming the field, and the topic is unchanged.
    Condition condition = awaitCondition("clicks", "NotSupported");
    assertThat(condition.getMessage()).startsWith("spec.partitions: cannot decrease from 4 to 2");
    assertThat(describe("clicks").partitions()).hasSize(4);
    assertThat(ownConfigs("clicks")).containsExactlyEntriesOf(Map.of("retention.ms", "3600000"));
  }

  @Test
  void deletingTheTopicResourceDeletesTheTopicUnlessRetained() throws Exception {
    // Given two Ready topics, one annotated to be retained,
    Topic doomed = awaitReady(apply("doomed", "partitions: 1"));
    Topic kept = apply("kept", "partitions: 1");
    kept.getMetadata().getAnnotations().put(Topic.DELETION_POLICY_ANNOTATION, "retain");
    kept = awaitReady(client.resource(kept).update());

    // when both resources are deleted,
    client.resource(doomed).delete();
    client.resource(kept).delete();

    // then both resources go, the first topic with its resource and the retained one stays.
    await()
        .atMost(READY_WITHIN)
        .untilAsserted(
            () -> {
              assertThat(get("doomed")).isNull();
              assertThat(get("kept")).isNull();
              assertThat(admin.listTopics().names().get())
                  .doesNotContain("doomed")
                  .contains("kept");
            });
  }

  @Test
  void anInvalidConfigGivesAConditionAndTheNextSpecRecovers() throws Exception {
    // Given a Topic whose config the broker refuses,
    apply("bad-config", "partitions: 1\n  config: {retention.ms: banana}");

    // then it says InvalidSpec with the broker's reason, and no topic is created;
    Condition condition = awaitCondition("bad-config", "InvalidSpec");
    assertThat(condition.getMessage()).startsWith("spec: ").contains("retention.ms");
    assertThat(admin.listTopics().names().get()).doesNotContain("bad-config");

    // when the spec is fixed, the topic is created.
    awaitReady(apply("bad-config", "partitions: 1\n  config: {retention.ms: '60000'}"));
    assertThat(ownConfigs("bad-config")).containsExactlyEntriesOf(Map.of("retention.ms", "60000"));
  }

  @Test
  void theOldestOfTwoTopicsForOneKafkaTopicWinsAndTheOtherIsInConflict() throws Exception {
    // Given a Ready Topic "first" for Kafka topic "shared",
    awaitReady(apply("first", "topicName: shared\n  partitions: 2"));

    // when a second resource declares the same Kafka topic,
    apply("second", "topicName: shared\n  partitions: 3");

    // then the second is in conflict, naming the first, and the topic is left as the first says;
    Condition condition = awaitCondition("second", "ResourceConflict");
    assertThat(condition.getMessage()).contains("kafka/first");
    assertThat(describe("shared").partitions()).hasSize(2);

    // and deleting the loser leaves the winner's topic in place.
    client.resource(get("second")).delete();
    await().atMost(READY_WITHIN).until(() -> get("second") == null);
    assertThat(admin.listTopics().names().get()).contains("shared");
  }

  @Test
  void anExistingTopicIsAdoptedOnlyWhenAnnotated() throws Exception {
    // Given a topic created outside the operator,
    admin
        .createTopics(List.of(new NewTopic("legacy", 2, (short) 1)))
        .all()
        .get(30, TimeUnit.SECONDS);

    // when a Topic declares it, it is refused;
    Topic topic = apply("legacy", "partitions: 2\n  config: {retention.ms: '3600000'}");
    assertThat(awaitCondition("legacy", "TopicExists").getMessage()).startsWith("metadata.name: ");
    assertThat(ownConfigs("legacy")).isEmpty();

    // when it is annotated for adoption, it is managed.
    topic = get("legacy");
    topic.getMetadata().getAnnotations().put(Topic.ADOPT_ANNOTATION, "true");
    client.resource(topic).update();
    awaitReady(get("legacy"));
    assertThat(ownConfigs("legacy")).containsExactlyEntriesOf(Map.of("retention.ms", "3600000"));
  }

  @Test
  void aTopicOfAMissingClusterOrAnotherNamespaceIsRefusedUntilAllowed() throws Exception {
    // Given a Topic that names a Cluster that does not exist,
    apply("orphan", "partitions: 1", NS, "nowhere");
    assertThat(awaitCondition("orphan", "ClusterNotFound").getMessage())
        .startsWith("spec.clusterRef: ");

    // and one in namespace "apps" that names Cluster kafka/dev, which does not allow it,
    Topic foreign = topic("apps", "foreign", "partitions: 1", NS, "dev");
    client.resource(foreign).create();
    await()
        .atMost(READY_WITHIN)
        .until(() -> reason(client.resource(foreign).get()).equals("Forbidden"));

    // when the Cluster allows namespace "apps", the Topic becomes Ready without being touched.
    var dev =
        client.resources(io.tidelog.operator.api.Cluster.class).inNamespace(NS).withName("dev");
    dev.edit(
        c -> {
          c.getSpec().topicNamespaces = List.of("apps");
          return c;
        });
    await()
        .atMost(READY_WITHIN)
        .until(() -> reason(client.resource(foreign).get()).equals("Reconciled"));
    assertThat(admin.listTopics().names().get()).contains("foreign");
  }

  private static Topic apply(String name, String spec) {
    return apply(name, spec, NS, "dev");
  }

  private static Topic apply(
      String name, String spec, String clusterNamespace, String clusterName) {
    Topic topic = topic(NS, name, spec, clusterNamespace, clusterName);
    Topic existing = get(name);
    if (existing == null) {
      return client.resource(topic).create();
    }
    existing.setSpec(topic.getSpec());
    return client.resource(existing).update();
  }

  static Topic topic(
      String namespace, String name, String spec, String clusterNamespace, String clusterName) {
    return client
        .getKubernetesSerialization()
        .unmarshal(
            """
        apiVersion: tidelog.io/v1alpha1
        kind: Topic
        metadata: {name: %s, namespace: %s, annotations: {}}
        spec:
          clusterRef: {name: %s, namespace: %s}
          %s
        """
                .formatted(name, namespace, clusterName, clusterNamespace, spec),
            Topic.class);
  }

  private static Topic get(String name) {
    return client.resources(Topic.class).inNamespace(NS).withName(name).get();
  }

  private static Topic awaitReady(Topic topic) {
    String name = topic.getMetadata().getName();
    await()
        .atMost(READY_WITHIN)
        .until(
            () -> {
              Topic now = get(name);
              return now.getStatus() != null
                  && Conditions.isTrue(now.getStatus().conditions, Conditions.READY)
                  && now.getMetadata().getGeneration().equals(now.getStatus().observedGeneration);
            });
    return get(name);
  }

  private static Condition awaitCondition(String name, String reason) {
    await().atMost(READY_WITHIN).until(() -> reason(get(name)).equals(reason));
    return Conditions.find(get(name).getStatus().conditions, Conditions.READY).orElseThrow();
  }

  static String reason(Topic topic) {
    return topic == null || topic.getStatus() == null
        ? ""
        : Conditions.find(topic.getStatus().conditions, Conditions.READY)
            .map(Condition::getReason)
            .orElse("");
  }

  private static TopicDescription describe(String name) throws Exception {
    return admin.describeTopics(List.of(name)).allTopicNames().get(30, TimeUnit.SECONDS).get(name);
  }

  /** The configs set on the topic itself. */
  private static Map<String, String> ownConfigs(String name) throws Exception {
    ConfigResource resource = new ConfigResource(ConfigResource.Type.TOPIC, name);
    Config config =
        admin.describeConfigs(List.of(resource)).all().get(30, TimeUnit.SECONDS).get(resource);
    Map<String, String> own = new java.util.TreeMap<>();
    for (ConfigEntry entry : config.entries()) {
      if (entry.source() == ConfigEntry.ConfigSource.DYNAMIC_TOPIC_CONFIG) {
        own.put(entry.name(), entry.value());
      }
    }
    return own;
  }
}
