package io.tidelog.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Condition;
import io.tidelog.e2e.faults.CheckedWorkload;
import io.tidelog.operator.api.Conditions;
import io.tidelog.operator.api.Topic;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewPartitionReassignment;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A Topic's replication factor changed both ways by the Topic reconciler (fabric8's mock API
 * server) on a real three-broker cluster, by reassignment, while the fault suite's clients produce
 * with acks=all and read; the checker then finds nothing lost or duplicated.
 */
class TopicReplicationFactorIT {
  private static final String NS = "kafka";
  private static final String TOPIC = CheckedWorkload.TOPIC;
  private static final int PARTITIONS = 3;
  private static final ConfigResource ALL_BROKERS =
      new ConfigResource(ConfigResource.Type.BROKER, "");

  @TempDir static Path dir;
  static DevCluster cluster;
  static MockKubernetes kubernetes;
  static Admin admin;
  static TopicFixture topics;
  static String bootstrap;

  @BeforeAll
  static void start() throws Exception {
    cluster = new DevCluster(dir.resolve("cluster"), 3);
    bootstrap = cluster.up();
    kubernetes = MockKubernetes.topicOperator(Duration.ofSeconds(5));
    kubernetes.cluster(NS, "dev", bootstrap);
    admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap));
    topics = new TopicFixture(kubernetes.client, admin, NS);
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
  void replicasGoFromOneToThreeToTwoUnderLoadLosingNothing() throws Exception {
    // Given a topic of one replica per partition, written and read with acks=all,
    topics.awaitReady(topics.apply(TOPIC, "partitions: %d\nreplicas: 1".formatted(PARTITIONS)));
    CheckedWorkload.fill(bootstrap, PARTITIONS);
    try (CheckedWorkload workload =
        CheckedWorkload.start(bootstrap, PARTITIONS, Duration.ofMinutes(5))) {
      await().atMost(Duration.ofSeconds(60)).until(() -> workload.acknowledged() > 200);

      // when the brokers' follower throttle is 1 kB/s, below what the clients write, and the spec
      // asks for three replicas,
      brokerDefault("follower.replication.throttled.rate", "1000");
      topics.apply(TOPIC, "partitions: %d\nreplicas: 3".formatted(PARTITIONS));

      // then the move runs throttled: the Topic says Reassigning, the new replicas are marked as
      // throttled and cannot catch up,
      Condition moving = topics.awaitCondition(TOPIC, "Reassigning");
      assertThat(moving.getMessage())
          .isEqualTo("spec.replicas: moving 3 partition(s) from 1 to 3 replicas");
      await()
          .atMost(Duration.ofSeconds(30))
          .untilAsserted(
              () ->
                  assertThat(topics.ownConfigs(TOPIC))
                      .containsKeys(
                          "leader.replication.throttled.replicas",
                          "follower.replication.throttled.replicas"));
      Thread.sleep(3_000); // the throttle holds the move: its replicas stay out of sync
      assertThat(TopicFixture.reason(topics.get(TOPIC))).isEqualTo("Reassigning");
      assertThat(topics.describe(TOPIC).partitions())
          .allSatisfy(p -> assertThat(p.isr()).hasSize(1));

      // and once the throttle is lifted, the move completes: three replicas in sync everywhere,
      // the throttles gone, and the Topic Ready again.
      brokerDefault("follower.replication.throttled.rate", null);
      awaitReplicas(3);
      assertThat(topics.ownConfigs(TOPIC)).isEmpty();

      // When the spec then asks for two,
      Map<Integer, Integer> leaders = leaders(topics.describe(TOPIC));
      topics.apply(TOPIC, "partitions: %d\nreplicas: 2".formatted(PARTITIONS));

      // then each partition keeps two replicas, its leader among them where it was.
      awaitReplicas(2);
      assertThat(leaders(topics.describe(TOPIC))).isEqualTo(leaders);

      // Finally, every acknowledged write is read, once and in order.
      CheckedWorkload.Verdict verdict = workload.finish();
      assertThat(verdict.acknowledged()).isGreaterThan(200);
      assertThat(verdict.anomalies()).as("anomalies:%n%s", verdict.summary()).isZero();
    }
  }

  @Test
  void theThrottlesOfAMoveTheTopicDidNotStartStayWhileItLasts() throws Exception {
    // Given a Ready topic of one replica that does not declare its replication factor, holding
    // more than a throttled follower's first fetch,
    topics.awaitReady(topics.apply("steady", "partitions: 1\nreplicas: 1"));
    topics.awaitReady(topics.apply("steady", "partitions: 1"));
    int from = topics.describe("steady").partitions().get(0).replicas().get(0).id();
    int to = (from + 1) % 3;
    try (KafkaProducer<byte[], byte[]> producer =
        new KafkaProducer<>(
            Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap),
            new ByteArraySerializer(),
            new ByteArraySerializer())) {
      for (int i = 0; i < 200; i++) {
        producer.send(new ProducerRecord<>("steady", new byte[10_000]));
      }
      producer.flush();
    }

    // when another part of the operator (a Cluster's scale-down) moves it, throttled at 1 kB/s,
    // and the Topic is reconciled meanwhile,
    brokerDefault("follower.replication.throttled.rate", "1000");
    admin
        .incrementalAlterConfigs(
            Map.of(
                new ConfigResource(ConfigResource.Type.TOPIC, "steady"),
                List.of(
                    new AlterConfigOp(
                        new ConfigEntry("leader.replication.throttled.replicas", "0:" + from),
                        AlterConfigOp.OpType.SET),
                    new AlterConfigOp(
                        new ConfigEntry("follower.replication.throttled.replicas", "0:" + to),
                        AlterConfigOp.OpType.SET))))
        .all()
        .get(30, TimeUnit.SECONDS);
    admin
        .alterPartitionReassignments(
            Map.of(
                new TopicPartition("steady", 0),
                Optional.of(new NewPartitionReassignment(List.of(to)))))
        .all()
        .get(30, TimeUnit.SECONDS);
    topics.apply("steady", "partitions: 1\nconfig: {retention.ms: '7200000'}");

    // then the Topic says it is being moved and keeps the move's throttles beside its config,
    Condition moving = topics.awaitCondition("steady", "Reassigning");
    assertThat(moving.getMessage())
        .startsWith("spec.replicas: 1 partition(s) moving, adding [" + to);
    assertThat(topics.ownConfigs("steady"))
        .containsEntry("retention.ms", "7200000")
        .containsEntry("follower.replication.throttled.replicas", "0:" + to);

    // and once the move is done, it drops them and is Ready.
    brokerDefault("follower.replication.throttled.rate", null);
    await()
        .atMost(Duration.ofSeconds(90))
        .ignoreExceptions()
        .untilAsserted(
            () -> {
              assertThat(TopicFixture.reason(topics.get("steady"))).isEqualTo("Reconciled");
              assertThat(topics.ownConfigs("steady"))
                  .containsExactlyEntriesOf(Map.of("retention.ms", "7200000"));
            });
  }

  @Test
  void aFactorTheClusterCannotHoldIsRefusedAndChangesNothing() throws Exception {
    // Given a Ready topic of two replicas,
    topics.awaitReady(topics.apply("narrow", "partitions: 2\nreplicas: 2"));

    // when its spec asks for more replicas than there are brokers, it is refused with Kafka's
    // message;
    topics.apply("narrow", "partitions: 2\nreplicas: 4");
    awaitMessage(
        "narrow",
        "spec.replicas: Unable to replicate the partition 4 time(s): The target replication"
            + " factor of 4 cannot be reached because only 3 broker(s) are registered.");

    // and when it asks for fewer replicas than acks=all writes need, it is refused too.
    topics.apply("narrow", "partitions: 2\nreplicas: 1\nconfig: {min.insync.replicas: '2'}");
    awaitMessage(
        "narrow",
        "spec.replicas: 1 is below the topic's min.insync.replicas (2): acks=all writes would"
            + " fail");
    assertThat(topics.describe("narrow").partitions())
        .allSatisfy(p -> assertThat(p.replicas()).hasSize(2));
    assertThat(topics.ownConfigs("narrow")).isEmpty();
  }

  /**
   * Waits until the Topic is refused (InvalidSpec) for its current generation with {@code message}.
   */
  private static void awaitMessage(String name, String message) {
    await()
        .atMost(TopicFixture.READY_WITHIN)
        .untilAsserted(
            () -> {
              Topic topic = topics.get(name);
              assertThat(topic.getStatus().observedGeneration)
                  .isEqualTo(topic.getMetadata().getGeneration());
              Condition ready =
                  Conditions.find(topic.getStatus().conditions, Conditions.READY).orElseThrow();
              assertThat(ready.getReason()).isEqualTo("InvalidSpec");
              assertThat(ready.getMessage()).isEqualTo(message);
            });
  }

  private static void awaitReplicas(int factor) {
    await()
        .atMost(Duration.ofSeconds(90))
        .ignoreExceptions()
        .untilAsserted(
            () -> {
              Topic topic = topics.get(TOPIC);
              assertThat(TopicFixture.reason(topic)).isEqualTo("Reconciled");
              assertThat(topic.getStatus().replicas).isEqualTo(factor);
              assertThat(topics.describe(TOPIC).partitions())
                  .allSatisfy(
                      p -> {
                        assertThat(p.replicas()).hasSize(factor);
                        assertThat(p.isr()).hasSize(factor);
                      });
              assertThat(
                      admin.listPartitionReassignments().reassignments().get(30, TimeUnit.SECONDS))
                  .isEmpty();
            });
  }

  private static Map<Integer, Integer> leaders(TopicDescription topic) {
    return topic.partitions().stream()
        .collect(
            Collectors.toMap(
                TopicPartitionInfo::partition, p -> p.leader() == null ? -1 : p.leader().id()));
  }

  /** Sets (or, when null, removes) a cluster-wide dynamic broker config. */
  private static void brokerDefault(String key, String value) throws Exception {
    AlterConfigOp op =
        value == null
            ? new AlterConfigOp(new ConfigEntry(key, ""), AlterConfigOp.OpType.DELETE)
            : new AlterConfigOp(new ConfigEntry(key, value), AlterConfigOp.OpType.SET);
    admin.incrementalAlterConfigs(Map.of(ALL_BROKERS, List.of(op))).all().get(30, TimeUnit.SECONDS);
  }
}
