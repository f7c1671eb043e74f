package io.tidelog.broker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewPartitionReassignment;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.PartitionReassignment;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Partition reassignment (issue 24) on four brokers, judged by Kafka's own clients and {@code
 * kafka-reassign-partitions}: a move under acks=all loses and duplicates nothing and ends with the
 * target's replicas holding the log and the removed ones without it; a move held back by a throttle
 * is listed with its adding and removing replicas and can be cancelled; a move whose controller
 * dies is finished by the next one.
 */
class ReassignmentIT {
  private static final Duration WITHIN = Duration.ofSeconds(90);
  private static final int BROKERS = 4;

  @TempDir Path dir;
  private EtcdServer etcd;
  private final TestBroker[] brokers = new TestBroker[BROKERS];

  @BeforeEach
  void start() throws Exception {
    etcd = EtcdServer.start(dir.resolve("etcd"));
    for (int id = 0; id < BROKERS; id++) {
      brokers[id] = TestBroker.member(dir.resolve("logs-" + id), id, etcd);
    }
  }

  @AfterEach
  void stop() throws Exception {
    for (TestBroker broker : brokers) {
      if (broker != null) {
        broker.close();
      }
    }
    etcd.close();
  }

  private String bootstrap() {
    for (TestBroker broker : brokers) {
      if (broker != null) {
        return broker.bootstrap();
      }
    }
    throw new IllegalStateException("no broker runs");
  }

  private Admin admin() {
    return Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap()));
  }

  private void create(String topic, Map<Integer, List<Integer>> assignment) throws Exception {
    try (Admin admin = admin()) {
      admin.createTopics(List.of(new NewTopic(topic, assignment))).all().get();
    }
  }

  private static TopicPartitionInfo partition(Admin admin, String topic, int partition)
      throws Exception {
    return admin
        .describeTopics(List.of(topic))
        .allTopicNames()
        .get()
        .get(topic)
        .partitions()
        .get(partition);
  }

  private static List<Integer> ids(List<Node> nodes) {
    return nodes.stream().map(Node::id).toList();
  }

  private List<Integer> replicas(Admin admin, String topic, int partition) throws Exception {
    return ids(partition(admin, topic, partition).replicas());
  }

  private List<Integer> isr(Admin admin, String topic, int partition) throws Exception {
    return ids(partition(admin, topic, partition).isr());
  }

  private boolean hasLog(int broker, String topic, int partition) {
    return Files.isDirectory(dir.resolve("logs-" + broker).resolve(topic + "-" + partition));
  }

  private static KafkaProducer<String, String> producer(String bootstrap) {
    return new KafkaProducer<>(
        Map.of(
            ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
            ProducerConfig.ACKS_CONFIG, "all",
            ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true",
            ProducerConfig.LINGER_MS_CONFIG, "5"),
        new StringSerializer(),
        new StringSerializer());
  }

  /** Every value in {@code topic}'s partitions, read from the start to their ends. */
  private List<String> readAll(String topic, int partitions) {
    try (KafkaConsumer<String, String> consumer =
        new KafkaConsumer<>(
            Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG,
                bootstrap(),
                ConsumerConfig.AUTO_OFFSET_RESET_CONFIG,
                "earliest"),
            new StringDeserializer(),
            new StringDeserializer())) {
      List<TopicPartition> tps = new ArrayList<>();
      for (int p = 0; p < partitions; p++) {
        tps.add(new TopicPartition(topic, p));
      }
      consumer.assign(tps);
      consumer.seekToBeginning(tps);
      Map<TopicPartition, Long> ends = consumer.endOffsets(tps);
      List<String> values = new ArrayList<>();
      await()
          .atMost(WITHIN)
          .until(
              () -> {
                for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) {
                  values.add(r.value());
                }
                return tps.stream().allMatch(tp -> consumer.position(tp) >= ends.get(tp));
              });
      return values;
    }
  }

  private ApacheKafka.ToolRun reassignTool(String... args) throws Exception {
    List<String> command =
        new ArrayList<>(
            List.of(
                "org.apache.kafka.tools.reassign.ReassignPartitionsCommand",
                "--bootstrap-server",
                bootstrap()));
    command.addAll(List.of(args));
    return ApacheKafka.tool("", command.toArray(String[]::new));
  }

  @Test
  void aPlanThatKafkaToolsGenerateMovesTheDataUnderLoadAndVerifies() throws Exception {
    // Given a topic on brokers 0-2 and a producer writing to it with acks=all throughout
    create("moved", Map.of(0, List.of(0, 1), 1, List.of(1, 2), 2, List.of(2, 0)));
    Set<String> acknowledged = java.util.concurrent.ConcurrentHashMap.newKeySet();
    java.util.concurrent.atomic.AtomicBoolean producing =
        new java.util.concurrent.atomic.AtomicBoolean(true);
    Thread writer =
        new Thread(
            () -> {
              try (KafkaProducer<String, String> producer = producer(bootstrap())) {
                for (int i = 0; i < 200_000 && producing.get(); i++) {
                  String value = "v" + i;
                  producer
                      .send(
                          new ProducerRecord<>("moved", "k" + i, value),
                          (meta, e) -> {
                            if (e == null) {
                              acknowledged.add(value);
                            }
                          })
                      .get();
                }
              } catch (Exception e) {
                throw new IllegalStateException(e);
              }
            });
    writer.start();
    await().atMost(WITHIN).until(() -> acknowledged.size() >= 500);

    // When kafka-reassign-partitions generates a plan onto brokers 1-3, executes and verifies it
    Path topics = dir.resolve("topics.json");
    Files.writeString(topics, "{\"version\":1,\"topics\":[{\"topic\":\"moved\"}]}");
    ApacheKafka.ToolRun generated =
        reassignTool(
            "--generate",
            "--topics-to-move-json-file",
            topics.toString(),
            "--broker-list",
            "1,2,3");
    assertThat(generated.exitStatus()).as(generated.output()).isZero();
    Matcher proposed =
        Pattern.compile("Proposed partition reassignment configuration\\s*(\\{.*})", Pattern.DOTALL)
            .matcher(generated.output());
    assertThat(proposed.find()).as(generated.output()).isTrue();
    Path plan = dir.resolve("plan.json");
    Files.writeString(plan, proposed.group(1).strip());
    ApacheKafka.ToolRun executed =
        reassignTool("--execute", "--reassignment-json-file", plan.toString());
    assertThat(executed.exitStatus()).as(executed.output()).isZero();
    assertThat(executed.output()).contains("Successfully started partition reassignments");
    await()
        .atMost(WITHIN)
        .pollInterval(Duration.ofSeconds(1))
        .until(
            () ->
                reassignTool("--verify", "--reassignment-json-file", plan.toString())
                    .output()
                    .contains("Reassignment of partition moved-2 is completed"));
    ApacheKafka.ToolRun verified =
        reassignTool("--verify", "--reassignment-json-file", plan.toString());
    for (int p = 0; p < 3; p++) {
      assertThat(verified.output())
          .contains("Reassignment of partition moved-" + p + " is completed");
    }
    producing.set(false);
    writer.join(WITHIN.toMillis());

    // Then every replica is on brokers 1-3, broker 0 holds no log, and nothing was lost or doubled
    try (Admin admin = admin()) {
      for (int p = 0; p < 3; p++) {
        List<Integer> replicas = replicas(admin, "moved", p);
        assertThat(replicas).hasSize(2).doesNotContain(0);
        assertThat(admin.listPartitionReassignments().reassignments().get()).isEmpty();
      }
    }
    await().atMost(WITHIN).until(() -> !hasLog(0, "moved", 0) && !hasLog(0, "moved", 2));
    assertThat(hasLog(3, "moved", 0) || hasLog(3, "moved", 1) || hasLog(3, "moved", 2)).isTrue();
    List<String> read = readAll("moved", 3);
    assertThat(new HashSet<>(read)).as("no duplicates").hasSize(read.size());
    assertThat(read).containsAll(acknowledged);
  }

  /** Makes broker {@code id} fetch {@code topic}'s replicas outside the ISR at about 1 kB/s. */
  private void throttleFollower(Admin admin, int id, String topic) throws Exception {
    admin
        .incrementalAlterConfigs(
            Map.of(
                new ConfigResource(ConfigResource.Type.BROKER, String.valueOf(id)),
                List.of(
                    new AlterConfigOp(
                        new ConfigEntry("follower.replication.throttled.rate", "1000"),
                        AlterConfigOp.OpType.SET)),
                new ConfigResource(ConfigResource.Type.TOPIC, topic),
                List.of(
                    new AlterConfigOp(
                        new ConfigEntry("follower.replication.throttled.replicas", "*"),
                        AlterConfigOp.OpType.SET))))
        .all()
        .get();
  }

  private void unthrottle(Admin admin, String topic) throws Exception {
    admin
        .incrementalAlterConfigs(
            Map.of(
                new ConfigResource(ConfigResource.Type.TOPIC, topic),
                List.of(
                    new AlterConfigOp(
                        new ConfigEntry("follower.replication.throttled.replicas", ""),
                        AlterConfigOp.OpType.DELETE))))
        .all()
        .get();
  }

  /** Writes 3 MB to partition 0 of {@code topic}, more than a throttled follower's first fetch. */
  private void fill(String topic) throws Exception {
    try (KafkaProducer<byte[], byte[]> producer =
        new KafkaProducer<>(
            Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
                bootstrap(),
                ProducerConfig.ACKS_CONFIG,
                "all"),
            new ByteArraySerializer(),
            new ByteArraySerializer())) {
      byte[] value = "x".repeat(1024).getBytes(StandardCharsets.UTF_8);
      for (int i = 0; i < 3_000; i++) {
        producer.send(new ProducerRecord<>(topic, 0, null, value));
      }
      producer.flush();
    }
  }

  @Test
  void aBrokerDownWhileAMoveTookItsReplicaDeletesTheStrayLogWhenItStarts() throws Exception {
    // Given a partition on brokers 0 and 1, and broker 1 down
    create("strayed", Map.of(0, List.of(0, 1)));
    try (KafkaProducer<String, String> producer = producer(bootstrap())) {
      for (int i = 0; i < 100; i++) {
        producer.send(new ProducerRecord<>("strayed", "v" + i)).get();
      }
    }
    await().atMost(WITHIN).until(() -> hasLog(1, "strayed", 0));
    brokers[1].close();
    brokers[1] = null;
    // and a log of a topic that etcd does not know, which must stay
    Path unknown = dir.resolve("logs-1").resolve("unknown-topic-0");
    Files.createDirectories(unknown);

    // When the partition moves to brokers 0 and 2 meanwhile
    TopicPartition tp = new TopicPartition("strayed", 0);
    try (Admin admin = admin()) {
      admin
          .alterPartitionReassignments(
              Map.of(tp, Optional.of(new NewPartitionReassignment(List.of(0, 2)))))
          .all()
          .get();
      await()
          .atMost(WITHIN)
          .ignoreExceptions()
          .until(() -> replicas(admin, "strayed", 0).equals(List.of(0, 2)));
    }
    assertThat(hasLog(1, "strayed", 0)).isTrue();

    // Then broker 1, started again, deletes its copy, and keeps the log etcd does not know
    brokers[1] = TestBroker.member(dir.resolve("logs-1"), 1, etcd);
    await().atMost(WITHIN).until(() -> !hasLog(1, "strayed", 0));
    assertThat(unknown).isDirectory();
    assertThat(readAll("strayed", 1)).hasSize(100);
  }

  @Test
  void aMoveInProgressIsListedAndCanBeCancelled() throws Exception {
    // Given a move of [0, 1] to [0, 3] that broker 3, throttled, cannot finish
    create("held", Map.of(0, List.of(0, 1)));
    fill("held");
    try (Admin admin = admin()) {
      throttleFollower(admin, 3, "held");
      TopicPartition tp = new TopicPartition("held", 0);
      admin
          .alterPartitionReassignments(
              Map.of(tp, Optional.of(new NewPartitionReassignment(List.of(0, 3)))))
          .all()
          .get();

      // Then it is listed with its adding and removing replicas, and Metadata shows all three
      Map<TopicPartition, PartitionReassignment> moving =
          admin.listPartitionReassignments().reassignments().get();
      assertThat(moving).containsOnlyKeys(tp);
      assertThat(moving.get(tp).replicas()).containsExactly(0, 3, 1);
      assertThat(moving.get(tp).addingReplicas()).containsExactly(3);
      assertThat(moving.get(tp).removingReplicas()).containsExactly(1);
      // (Metadata follows etcd: a broker may answer before it has seen the move)
      await()
          .atMost(WITHIN)
          .ignoreExceptions()
          .untilAsserted(() -> assertThat(replicas(admin, "held", 0)).containsExactly(0, 3, 1));
      await().atMost(WITHIN).until(() -> hasLog(3, "held", 0));
      assertThat(isr(admin, "held", 0)).doesNotContain(3);

      // When it is cancelled, the partition is back on [0, 1] and broker 3 drops its copy
      admin.alterPartitionReassignments(Map.of(tp, Optional.empty())).all().get();
      assertThat(admin.listPartitionReassignments().reassignments().get()).isEmpty();
      await()
          .atMost(WITHIN)
          .ignoreExceptions()
          .untilAsserted(() -> assertThat(replicas(admin, "held", 0)).containsExactly(0, 1));
      await().atMost(WITHIN).until(() -> !hasLog(3, "held", 0));
      assertThat(isr(admin, "held", 0)).containsExactlyInAnyOrder(0, 1);
    }
  }

  @Test
  void aNewControllerFinishesAMoveItsPredecessorStarted() throws Exception {
    // Given a held-back move of a partition that does not live on the controller
    int controller;
    try (Admin admin = admin()) {
      controller = admin.describeCluster().controller().get().id();
    }
    List<Integer> others = new ArrayList<>();
    for (int id = 0; id < BROKERS; id++) {
      if (id != controller) {
        others.add(id);
      }
    }
    create("handover", Map.of(0, List.of(others.get(0), others.get(1))));
    fill("handover");
    TopicPartition tp = new TopicPartition("handover", 0);
    List<Integer> target = List.of(others.get(0), others.get(2));
    try (Admin admin = admin()) {
      throttleFollower(admin, others.get(2), "handover");
      admin
          .alterPartitionReassignments(
              Map.of(tp, Optional.of(new NewPartitionReassignment(target))))
          .all()
          .get();
      assertThat(admin.listPartitionReassignments().reassignments().get()).containsKey(tp);
    }

    // When the controller stops and then the throttle goes
    brokers[controller].close();
    brokers[controller] = null;
    try (Admin admin = admin()) {
      await()
          .atMost(WITHIN)
          .ignoreExceptions()
          .until(() -> admin.describeCluster().controller().get().id() != controller);
      unthrottle(admin, "handover");

      // Then the new controller completes the move
      await()
          .atMost(WITHIN)
          .ignoreExceptions()
          .until(() -> admin.listPartitionReassignments().reassignments().get().isEmpty());
      assertThat(replicas(admin, "handover", 0)).containsExactlyElementsOf(target);
      assertThat(isr(admin, "handover", 0)).containsExactlyInAnyOrderElementsOf(target);
    }
    await().atMost(WITHIN).until(() -> !hasLog(others.get(1), "handover", 0));
    assertThat(readAllCount("handover")).isEqualTo(3_000);
  }

  private int readAllCount(String topic) {
    try (KafkaConsumer<byte[], byte[]> consumer =
        new KafkaConsumer<>(
            Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG,
                bootstrap(),
                ConsumerConfig.AUTO_OFFSET_RESET_CONFIG,
                "earliest"),
            new ByteArrayDeserializer(),
            new ByteArrayDeserializer())) {
      TopicPartition tp = new TopicPartition(topic, 0);
      consumer.assign(List.of(tp));
      consumer.seekToBeginning(List.of(tp));
      long end = consumer.endOffsets(List.of(tp)).get(tp);
      int[] count = {0};
      await()
          .atMost(WITHIN)
          .until(
              () -> {
                count[0] += consumer.poll(Duration.ofMillis(200)).count();
                return consumer.position(tp) >= end;
              });
      return count[0];
    }
  }
}
