package io.tidelog.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.tidelog.operator.api.Topic;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
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

  @TempDir static Path dir;
  static DevCluster cluster;
  static MockKubernetes kubernetes;
  static KubernetesClient client;
  static Admin admin;
  static TopicFixture topics;

  @BeforeAll
  static void start() throws Exception {
    cluster = new DevCluster(dir.resolve("cluster"));
    String bootstrap = cluster.up();
    kubernetes = MockKubernetes.topicOperator(Duration.ofSeconds(5));
    client = kubernetes.client;
    kubernetes.cluster(NS, "dev", bootstrap);
    admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap));
    topics = new TopicFixture(client, admin, NS);
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
        topics.apply(
            "orders", "partitions: 3\nconfig: {retention.ms: '3600000', cleanup.policy: compact}");

    // then it is Ready and the cluster holds that topic, with that id, partitions and configs.
    Topic ready = topics.awaitReady(topic);
    TopicDescription description = topics.describe("orders");
    assertThat(description.partitions()).hasSize(3);
    assertThat(ready.getStatus().topicId).isEqualTo(description.topicId().toString());
    assertThat(ready.getStatus().partitions).isEqualTo(3);
    assertThat(ready.getStatus().observedGeneration).isEqualTo(ready.getMetadata().getGeneration());
    assertThat(topics.ownConfigs("orders"))
        .containsExactlyInAnyOrderEntriesOf(
            Map.of("retention.ms", "3600000", "cleanup.policy", "compact"));
  }

  @Test
  void aTopicOfHundredsOfPartitionsIsCreated() throws Exception {
    // Given a Topic of 300 partitions (more etcd operations than etcd allows by default in one
    // transaction; bin/tidelog's etcd, like the operator's managed etcd, allows more),
    Topic topic = topics.apply("wide", "partitions: 300");

    // then it is Ready and the topic has 300 partitions.
    assertThat(topics.awaitReady(topic).getStatus().partitions).isEqualTo(300);
    assertThat(topics.describe("wide").partitions()).hasSize(300);
  }

  @Test
  void anUpdateGrowsPartitionsAndAppliesConfigsDeclaratively() throws Exception {
    // Given a Ready topic with two configs,
    topics.awaitReady(
        topics.apply(
            "payments",
            "partitions: 2\nconfig: {retention.ms: '3600000', segment.bytes: '1048576'}"));

    // when its partitions grow, one config changes and the other is removed from the spec,
    Topic updated = topics.apply("payments", "partitions: 5\nconfig: {retention.ms: '7200000'}");

    // then the topic has 5 partitions, the new value, and the removed key is back to its default.
    await()
        .atMost(TopicFixture.READY_WITHIN)
        .untilAsserted(
            () -> {
              assertThat(topics.describe("payments").partitions()).hasSize(5);
              assertThat(topics.ownConfigs("payments"))
                  .containsExactlyEntriesOf(Map.of("retention.ms", "7200000"));
            });
    Topic ready = topics.awaitReady(updated);
    assertThat(ready.getStatus().partitions).isEqualTo(5);
  }

  @Test
  void aDecreaseInPartitionsIsNotSupportedAndChangesNothing() throws Exception {
    // Given a Ready topic with 4 partitions,
    topics.awaitReady(topics.apply("clicks", "partitions: 4\nconfig: {retention.ms: '3600000'}"));

    // when its spec asks for 2 partitions and another retention,
    topics.apply("clicks", "partitions: 2\nconfig: {retention.ms: '60000'}");

    // then it says NotSupported, naming the field, and the topic is unchanged.
    Condition condition = topics.awaitCondition("clicks", "NotSupported");
    assertThat(condition.getMessage()).startsWith("spec.partitions: cannot decrease from 4 to 2");
    assertThat(topics.describe("clicks").partitions()).hasSize(4);
    assertThat(topics.ownConfigs("clicks"))
        .containsExactlyEntriesOf(Map.of("retention.ms", "3600000"));
  }

  @Test
  void deletingTheTopicResourceDeletesTheTopicUnlessRetained() throws Exception {
    // Given two Ready topics, one annotated to be retained,
    Topic doomed = topics.awaitReady(topics.apply("doomed", "partitions: 1"));
    Topic kept = Resources.topic(NS, "kept", "partitions: 1", NS, "dev");
    kept.getMetadata().getAnnotations().put(Topic.DELETION_POLICY_ANNOTATION, "retain");
    kept = topics.awaitReady(client.resource(kept).create());

    // when both resources are deleted,
    client.resource(doomed).delete();
    client.resource(kept).delete();

    // then both resources go, the first topic with its resource and the retained one stays.
    await()
        .atMost(TopicFixture.READY_WITHIN)
        .untilAsserted(
            () -> {
              assertThat(topics.get("doomed")).isNull();
              assertThat(topics.get("kept")).isNull();
              assertThat(admin.listTopics().names().get())
                  .doesNotContain("doomed")
                  .contains("kept");
            });
  }

  @Test
  void anInvalidConfigGivesAConditionAndTheNextSpecRecovers() throws Exception {
    // Given a Topic whose config the broker refuses,
    topics.apply("bad-config", "partitions: 1\nconfig: {retention.ms: banana}");

    // then it says InvalidSpec with the broker's reason, and no topic is created;
    Condition condition = topics.awaitCondition("bad-config", "InvalidSpec");
    assertThat(condition.getMessage()).startsWith("spec: ").contains("retention.ms");
    assertThat(admin.listTopics().names().get()).doesNotContain("bad-config");

    // when the spec is fixed, the topic is created.
    topics.awaitReady(topics.apply("bad-config", "partitions: 1\nconfig: {retention.ms: '60000'}"));
    assertThat(topics.ownConfigs("bad-config"))
        .containsExactlyEntriesOf(Map.of("retention.ms", "60000"));
  }

  @Test
  void theOldestOfTwoTopicsForOneKafkaTopicWinsAndTheOtherIsInConflict() throws Exception {
    // Given a Ready Topic "first" for Kafka topic "shared",
    topics.awaitReady(topics.apply("first", "topicName: shared\npartitions: 2"));

    // when a second resource declares the same Kafka topic,
    topics.apply("second", "topicName: shared\npartitions: 3");

    // then the second is in conflict, naming the first, and the topic is left as the first says;
    Condition condition = topics.awaitCondition("second", "ResourceConflict");
    assertThat(condition.getMessage()).contains("kafka/first");
    assertThat(topics.describe("shared").partitions()).hasSize(2);

    // and deleting the loser leaves the winner's topic in place.
    client.resource(topics.get("second")).delete();
    await().atMost(TopicFixture.READY_WITHIN).until(() -> topics.get("second") == null);
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
    topics.apply("legacy", "partitions: 2\nconfig: {retention.ms: '3600000'}");
    assertThat(topics.awaitCondition("legacy", "TopicExists").getMessage())
        .startsWith("metadata.name: ");
    assertThat(topics.ownConfigs("legacy")).isEmpty();

    // when it is annotated for adoption, it is managed.
    topics.edit(
        "legacy",
        t -> {
          t.getMetadata().getAnnotations().put(Topic.ADOPT_ANNOTATION, "true");
          return t;
        });
    topics.awaitReady(topics.get("legacy"));
    assertThat(topics.ownConfigs("legacy"))
        .containsExactlyEntriesOf(Map.of("retention.ms", "3600000"));
  }

  @Test
  void aTopicOfAMissingClusterOrAnotherNamespaceIsRefusedUntilAllowed() throws Exception {
    // Given a Topic that names a Cluster that does not exist,
    topics.apply("orphan", "partitions: 1", NS, "nowhere");
    assertThat(topics.awaitCondition("orphan", "ClusterNotFound").getMessage())
        .startsWith("spec.clusterRef: ");
    // which, deleted, goes at once: there is no cluster to wait for.
    client.resource(topics.get("orphan")).delete();
    await().atMost(Duration.ofSeconds(10)).until(() -> topics.get("orphan") == null);

    // and one in namespace "apps" that names Cluster kafka/dev, which does not allow it,
    Topic foreign = Resources.topic("apps", "foreign", "partitions: 1", NS, "dev");
    client.resource(foreign).create();
    await()
        .atMost(TopicFixture.READY_WITHIN)
        .until(() -> TopicFixture.reason(client.resource(foreign).get()).equals("Forbidden"));

    // when the Cluster allows namespace "apps", the Topic becomes Ready without being touched.
    var dev =
        client.resources(io.tidelog.operator.api.Cluster.class).inNamespace(NS).withName("dev");
    Resources.edit(
        dev,
        c -> {
          c.getSpec().topicNamespaces = List.of("apps");
          return c;
        });
    await()
        .atMost(TopicFixture.READY_WITHIN)
        .until(() -> TopicFixture.reason(client.resource(foreign).get()).equals("Reconciled"));
    assertThat(admin.listTopics().names().get()).contains("foreign");
  }
}
