package io.tidelog.broker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.tidelog.broker.config.BrokerConfig;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.DescribeReplicaLogDirsResult.ReplicaLogDirInfo;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.ReplicaInfo;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionReplica;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Replicas moving between one broker's two log directories (AlterReplicaLogDirs, issue 24): under
 * acks=all load and throttled, the move shows as a future replica in DescribeLogDirs and {@code
 * kafka-log-dirs}; once the throttle lifts the replica is in its new directory with every record
 * acknowledged, once, and a transaction aborted before the move still aborted; the old directory
 * holds nothing of it, and a restart keeps it there. {@code kafka-reassign-partitions} moves a
 * replica to the log directory its plan names and verifies it.
 */
class LogDirMoveIT {
  private static final Duration WITHIN = Duration.ofSeconds(120);
  private static final String RATE = BrokerConfig.REPLICA_ALTER_LOG_DIRS_IO_MAX_BYTES_PER_SECOND;

  @TempDir Path dir;
  private EtcdServer etcd;
  private TestBroker broker;

  @BeforeEach
  void start() throws Exception {
    etcd = EtcdServer.start(dir.resolve("etcd"));
    broker = startBroker();
  }

  private TestBroker startBroker() throws Exception {
    return TestBroker.start(
        dir.resolve("a"),
        Map.of(
            "node.id",
            "0",
            BrokerConfig.ETCD_ENDPOINTS,
            etcd.endpoint(),
            "log.dirs",
            dir.resolve("a") + "," + dir.resolve("b")));
  }

  @AfterEach
  void stop() throws Exception {
    try (EtcdServer e = etcd;
        TestBroker b = broker) {
      // both closed
    }
  }

  private Admin admin() {
    return Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrap()));
  }

  private KafkaProducer<String, String> producer(Map<String, Object> extra) {
    Map<String, Object> config =
        new java.util.HashMap<>(
            Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrap(),
                ProducerConfig.ACKS_CONFIG, "all",
                ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true",
                ProducerConfig.LINGER_MS_CONFIG, "5"));
    config.putAll(extra);
    return new KafkaProducer<>(config, new StringSerializer(), new StringSerializer());
  }

  /**
   * The log directory of the replica of {@code topic}-0 here, and where it moves to, if it does.
   */
  private static ReplicaLogDirInfo logDirOf(Admin admin, String topic) throws Exception {
    TopicPartitionReplica replica = new TopicPartitionReplica(topic, 0, 0);
    return admin.describeReplicaLogDirs(List.of(replica)).all().get().get(replica);
  }

  /** The log directory of {@code topic}-0, once its replica is created. */
  private static Path currentDir(Admin admin, String topic) {
    return await()
        .atMost(WITHIN)
        .ignoreExceptions()
        .until(() -> Path.of(logDirOf(admin, topic).getCurrentReplicaLogDir()), p -> true);
  }

  /** Asserts that moving-0 is in {@code current}, and moves to {@code future} or nowhere. */
  private static void assertLogDirs(Admin admin, Path current, Path future) throws Exception {
    ReplicaLogDirInfo info = logDirOf(admin, "moving");
    assertThat(info.getCurrentReplicaLogDir()).isEqualTo(current.toString());
    assertThat(info.getFutureReplicaLogDir()).isEqualTo(future == null ? null : future.toString());
  }

  private Path otherDir(Path current) {
    return current.equals(dir.resolve("a")) ? dir.resolve("b") : dir.resolve("a");
  }

  private void setRate(Admin admin, String value) throws Exception {
    ConfigEntry entry = new ConfigEntry(RATE, value);
    admin
        .incrementalAlterConfigs(
            Map.of(
                new ConfigResource(ConfigResource.Type.BROKER, "0"),
                List.of(
                    new AlterConfigOp(
                        entry,
                        value == null ? AlterConfigOp.OpType.DELETE : AlterConfigOp.OpType.SET))))
        .all()
        .get();
  }

  /** Every value of {@code topic}-0, read_committed, from its start to its end. */
  private List<String> readCommitted(String topic) {
    TopicPartition tp = new TopicPartition(topic, 0);
    try (KafkaConsumer<String, String> consumer =
        new KafkaConsumer<>(
            Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG,
                broker.bootstrap(),
                ConsumerConfig.ISOLATION_LEVEL_CONFIG,
                "read_committed"),
            new StringDeserializer(),
            new StringDeserializer())) {
      consumer.assign(List.of(tp));
      consumer.seekToBeginning(List.of(tp));
      long end = consumer.endOffsets(List.of(tp)).get(tp);
      List<String> values = new ArrayList<>();
      await()
          .atMost(WITHIN)
          .until(
              () -> {
                for (int polls = 0; polls < 100 && consumer.position(tp) < end; polls++) {
                  for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) {
                    values.add(r.value());
                  }
                }
                return consumer.position(tp) >= end;
              });
      return values;
    }
  }

  @Test
  void aReplicaMovesUnderLoadThrottledAndKeepsEveryRecordOnce() throws Exception {
    String payload = "x".repeat(1000);
    List<String> expected = new ArrayList<>();
    Set<String> acknowledged = ConcurrentHashMap.newKeySet();
    Path from;
    Path to;
    try (Admin admin = admin()) {
      admin.createTopics(List.of(new NewTopic("moving", 1, (short) 1))).all().get();
      from = currentDir(admin, "moving");
      to = otherDir(from);
      // Given 4 MB of records and an aborted transaction in the partition
      try (KafkaProducer<String, String> producer = producer(Map.of())) {
        for (int i = 0; i < 4000; i++) {
          String value = "before-" + i + "-" + payload;
          producer.send(new ProducerRecord<>("moving", value));
          expected.add(value);
        }
        producer.flush();
      }
      try (KafkaProducer<String, String> txn =
          producer(Map.of(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "aborting"))) {
        txn.initTransactions();
        txn.beginTransaction();
        for (int i = 0; i < 10; i++) {
          txn.send(new ProducerRecord<>("moving", "aborted-" + i));
        }
        txn.flush();
        txn.abortTransaction();
      }
      setRate(admin, "100000");

      // When a producer keeps writing with acks=all and the replica moves to the other directory
      AtomicBoolean producing = new AtomicBoolean(true);
      Thread writer =
          new Thread(
              () -> {
                try (KafkaProducer<String, String> producer = producer(Map.of())) {
                  for (int i = 0; i < 200_000 && producing.get(); i++) {
                    String value = "during-" + i;
                    producer.send(
                        new ProducerRecord<>("moving", value),
                        (meta, e) -> {
                          if (e == null) {
                            acknowledged.add(value);
                          }
                        });
                    if (i % 100 == 0) {
                      producer.flush();
                      sleep(5); // a steady load until the move ends, not a burst before it
                    }
                  }
                }
              });
      writer.start();
      admin
          .alterReplicaLogDirs(Map.of(new TopicPartitionReplica("moving", 0, 0), to.toString()))
          .all()
          .get();

      // Then, while the throttle holds it, the move is a future replica in the new directory
      await()
          .atMost(WITHIN)
          .ignoreExceptions()
          .untilAsserted(
              () -> {
                assertLogDirs(admin, from, to);
                ReplicaInfo future =
                    admin
                        .describeLogDirs(List.of(0))
                        .allDescriptions()
                        .get()
                        .get(0)
                        .get(to.toString())
                        .replicaInfos()
                        .get(new TopicPartition("moving", 0));
                assertThat(future.isFuture()).isTrue();
                assertThat(future.size()).isPositive();
                assertThat(future.offsetLag()).isPositive();
              });
      ApacheKafka.ToolRun tool =
          ApacheKafka.tool(
              "",
              "org.apache.kafka.tools.LogDirsCommand",
              "--bootstrap-server",
              broker.bootstrap(),
              "--describe",
              "--topic-list",
              "moving");
      assertThat(tool.exitStatus()).as(tool.output()).isZero();
      assertThat(tool.output()).contains("\"isFuture\":true").contains("\"isFuture\":false");
      assertThat(Files.isDirectory(from.resolve("moving-0"))).isTrue();

      // and once it is lifted, the replica is in the new directory alone
      setRate(admin, null);
      await().atMost(WITHIN).ignoreExceptions().untilAsserted(() -> assertLogDirs(admin, to, null));
      producing.set(false);
      writer.join(WITHIN.toMillis());
      assertThat(writer.isAlive()).isFalse();
    }
    assertThat(from.resolve("moving-0")).doesNotExist();
    assertThat(to.resolve("moving-0")).isDirectory();

    // with every record acknowledged, once, in order of writing, and the aborted ones left out
    List<String> read = readCommitted("moving");
    assertThat(read.subList(0, expected.size())).isEqualTo(expected);
    List<String> during = read.subList(expected.size(), read.size());
    Set<String> readOnce = new HashSet<>(during);
    assertThat(readOnce).as("nothing read twice").hasSize(during.size());
    assertThat(acknowledged.stream().filter(v -> !readOnce.contains(v)).toList())
        .as("acknowledged, not read")
        .isEmpty();
    assertThat(during).allMatch(v -> v.startsWith("during-"));
    assertThat(acknowledged).isNotEmpty();

    // and a restart finds it there
    broker.close();
    broker = startBroker();
    assertThat(readCommitted("moving")).isEqualTo(read);
    try (Admin admin = admin()) {
      assertThat(logDirOf(admin, "moving").getCurrentReplicaLogDir()).isEqualTo(to.toString());
    }
  }

  @Test
  void kafkaReassignPartitionsMovesAReplicaToTheLogDirOfItsPlan() throws Exception {
    Path to;
    try (Admin admin = admin()) {
      admin.createTopics(List.of(new NewTopic("planned", 1, (short) 1))).all().get();
      to = otherDir(currentDir(admin, "planned"));
    }
    try (KafkaProducer<String, String> producer = producer(Map.of())) {
      for (int i = 0; i < 100; i++) {
        producer.send(new ProducerRecord<>("planned", "v" + i));
      }
    }
    Path plan = dir.resolve("plan.json");
    Files.writeString(
        plan,
        "{\"version\":1,\"partitions\":[{\"topic\":\"planned\",\"partition\":0,"
            + "\"replicas\":[0],\"log_dirs\":[\""
            + to
            + "\"]}]}");
    ApacheKafka.ToolRun execute =
        reassign("--execute", "--reassignment-json-file", plan.toString());
    assertThat(execute.exitStatus()).as(execute.output()).isZero();
    assertThat(execute.output()).contains("Successfully started moving log directory to " + to);
    await()
        .atMost(WITHIN)
        .untilAsserted(
            () -> {
              ApacheKafka.ToolRun verify =
                  reassign("--verify", "--reassignment-json-file", plan.toString());
              assertThat(verify.exitStatus()).as(verify.output()).isZero();
              assertThat(verify.output())
                  .contains("Reassignment of replica planned-0-0 completed successfully")
                  .doesNotContain("in progress");
            });
    assertThat(to.resolve("planned-0")).isDirectory();
    List<String> expected = new ArrayList<>();
    for (int i = 0; i < 100; i++) {
      expected.add("v" + i);
    }
    assertThat(readCommitted("planned")).isEqualTo(expected);
  }

  private static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private ApacheKafka.ToolRun reassign(String... args) throws Exception {
    List<String> command =
        new ArrayList<>(
            List.of(
                "org.apache.kafka.tools.reassign.ReassignPartitionsCommand",
                "--bootstrap-server",
                broker.bootstrap()));
    command.addAll(List.of(args));
    return ApacheKafka.tool("", command.toArray(String[]::new));
  }
}
