package io.tidelog.broker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.tidelog.broker.config.BrokerConfig;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.InvalidRequestException;
import org.apache.kafka.common.errors.NotEnoughReplicasException;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.apache.kafka.common.requests.ApiVersionsRequest;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Dynamic broker configs take effect on running brokers, with no restart (issue 20): the cluster
 * default reaches every broker's logs and replication, a broker's own config reaches only it, and
 * both survive a restart, as they live in etcd.
 */
class DynamicBrokerConfigIT {
  private static final Duration PROPAGATION = Duration.ofSeconds(30);

  @TempDir Path dir;
  private EtcdServer etcd;
  private final List<TestBroker> brokers = new ArrayList<>(List.of());

  @BeforeEach
  void start() throws Exception {
    etcd = EtcdServer.start(dir.resolve("etcd"));
    brokers.add(broker(0));
    brokers.add(broker(1));
  }

  private TestBroker broker(int id) throws Exception {
    return TestBroker.start(
        dir.resolve("logs-" + id),
        Map.of("node.id", String.valueOf(id), BrokerConfig.ETCD_ENDPOINTS, etcd.endpoint()));
  }

  @AfterEach
  void stop() throws Exception {
    for (TestBroker broker : brokers) {
      broker.close();
    }
    etcd.close();
  }

  private Admin admin() {
    return Admin.create(
        Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, brokers.get(0).bootstrap()));
  }

  /**
   * Sets broker config {@code key} of {@code broker} ("" for the default) to {@code value}, or
   * deletes it (null).
   */
  static void alter(Admin admin, String broker, String key, String value) throws Exception {
    admin
        .incrementalAlterConfigs(
            Map.of(
                new ConfigResource(ConfigResource.Type.BROKER, broker),
                List.of(
                    new AlterConfigOp(
                        new ConfigEntry(key, value),
                        value == null ? AlterConfigOp.OpType.DELETE : AlterConfigOp.OpType.SET))))
        .all()
        .get();
  }

  private KafkaProducer<byte[], byte[]> producer() {
    return new KafkaProducer<>(
        Map.of(
            ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
            brokers.get(0).bootstrap() + "," + brokers.get(1).bootstrap(),
            ProducerConfig.ACKS_CONFIG,
            "all",
            ProducerConfig.RETRIES_CONFIG,
            "0",
            ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG,
            "30000",
            ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG,
            "20000",
            ProducerConfig.LINGER_MS_CONFIG,
            "0"),
        new ByteArraySerializer(),
        new ByteArraySerializer());
  }

  /** Where the topic's value of {@code key} comes from, on {@code broker}: value and source. */
  private String topicConfig(int broker, String topic, String key) throws Exception {
    try (Admin admin =
        Admin.create(
            Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, brokers.get(broker).bootstrap()))) {
      ConfigResource resource = new ConfigResource(ConfigResource.Type.TOPIC, topic);
      ConfigEntry entry =
          admin
              .describeConfigs(List.of(resource))
              .all()
              .get(10, TimeUnit.SECONDS)
              .get(resource)
              .get(key);
      return entry.value() + " " + entry.source();
    }
  }

  @Test
  void theClusterDefaultReachesEveryBrokersLogsAndReplicationAndOutlivesARestart()
      throws Exception {
    try (Admin admin = admin();
        KafkaProducer<byte[], byte[]> producer = producer()) {
      admin.createTopics(List.of(new NewTopic("inherits", 1, (short) 2))).all().get();
      byte[] twoKib = new byte[2048];
      producer.send(new ProducerRecord<>("inherits", twoKib)).get();

      alter(admin, "", "message.max.bytes", "1000");
      for (int broker = 0; broker < 2; broker++) {
        int b = broker;
        await()
            .atMost(PROPAGATION)
            .untilAsserted(
                () ->
                    assertThat(topicConfig(b, "inherits", "max.message.bytes"))
                        .isEqualTo("1000 DYNAMIC_DEFAULT_BROKER_CONFIG"));
      }
      assertThatThrownBy(() -> producer.send(new ProducerRecord<>("inherits", twoKib)).get())
          .isInstanceOf(ExecutionException.class)
          .hasCauseInstanceOf(RecordTooLargeException.class);

      // The replication factor is 2: a default of 3 in-sync replicas refuses acks=all
      alter(admin, "", "min.insync.replicas", "3");
      await()
          .atMost(PROPAGATION)
          .untilAsserted(
              () ->
                  assertThatThrownBy(
                          () -> producer.send(new ProducerRecord<>("inherits", new byte[10])).get())
                      .hasCauseInstanceOf(NotEnoughReplicasException.class));
      alter(admin, "", "min.insync.replicas", null);
      alter(admin, "", "message.max.bytes", "4096");
      await()
          .atMost(PROPAGATION)
          .untilAsserted(() -> producer.send(new ProducerRecord<>("inherits", twoKib)).get());
    }

    brokers.remove(0).close();
    brokers.add(0, broker(0));
    assertThat(topicConfig(0, "inherits", "max.message.bytes"))
        .isEqualTo("4096 DYNAMIC_DEFAULT_BROKER_CONFIG");
  }

  @Test
  void aDefaultThatTurnsUncleanElectionOnElectsAnOfflinePartitionsLiveReplica() throws Exception {
    try (Admin admin = admin()) {
      admin.createTopics(List.of(new NewTopic("offline", Map.of(0, List.of(0, 1))))).all().get();
    }
    await().atMost(PROPAGATION).until(() -> isr("offline", 0).size() == 2);
    // broker 1 stops and leaves the ISR; then broker 0, the ISR's last member: no leader
    brokers.remove(1).close();
    await().atMost(PROPAGATION).until(() -> isr("offline", 0).equals(List.of(0)));
    brokers.remove(0).close();
    brokers.add(broker(1));
    await().atMost(PROPAGATION).until(() -> leader("offline", 0) == -1);

    try (Admin admin = admin()) {
      alter(admin, "", "unclean.leader.election.enable", "true");
    }
    await().atMost(PROPAGATION).until(() -> leader("offline", 0) == 1);
  }

  private org.apache.kafka.common.TopicPartitionInfo partition(String topic, int broker)
      throws Exception {
    try (Admin admin =
        Admin.create(
            Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, brokers.get(broker).bootstrap()))) {
      return admin
          .describeTopics(List.of(topic))
          .allTopicNames()
          .get(10, TimeUnit.SECONDS)
          .get(topic)
          .partitions()
          .get(0);
    }
  }

  private List<Integer> isr(String topic, int broker) throws Exception {
    return partition(topic, broker).isr().stream().map(org.apache.kafka.common.Node::id).toList();
  }

  /** The leader's id, or -1 when there is none. */
  private int leader(String topic, int broker) throws Exception {
    org.apache.kafka.common.Node leader = partition(topic, broker).leader();
    return leader == null ? -1 : leader.id();
  }

  @Test
  void aBrokersOwnConnectionLimitAppliesToItsNextConnectionsAndToNoOtherBroker() throws Exception {
    try (Admin admin = admin()) {
      alter(admin, "1", BrokerConfig.MAX_CONNECTIONS, "2");
    }
    await()
        .atMost(PROPAGATION)
        .untilAsserted(() -> assertThat(refusedAmong(brokers.get(1), 3)).isEqualTo(1));
    assertThat(refusedAmong(brokers.get(0), 3)).isZero();
    try (Admin admin = admin()) {
      alter(admin, "1", BrokerConfig.MAX_CONNECTIONS, null);
    }
    await()
        .atMost(PROPAGATION)
        .untilAsserted(() -> assertThat(refusedAmong(brokers.get(1), 3)).isZero());
  }

  /**
   * A listener added to one broker is served at once and again after the broker restarts (its
   * listeners live in etcd); removed, it is closed with its connections; the other broker never
   * binds it.
   */
  @Test
  void aListenerAddedToABrokerIsServedAcrossARestartAndClosedWithItsConnectionsWhenRemoved()
      throws Exception {
    int extra = EtcdServer.freePort();
    String own = "PLAINTEXT://127.0.0.1:" + brokers.get(1).port;
    try (Admin admin = admin()) {
      // a TLS listener whose keystore cannot be read cannot be made: refused, nothing bound
      alter(admin, "1", "listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,EXTRA:SSL");
      alter(admin, "1", "listener.name.extra.ssl.keystore.location", "/no/such/keystore.p12");
      assertThatThrownBy(() -> alter(admin, "1", "listeners", own + ",EXTRA://127.0.0.1:" + extra))
          .hasCauseInstanceOf(InvalidRequestException.class)
          .hasMessageContaining("EXTRA");
      assertThat(answers(extra)).isFalse();
      alter(admin, "1", "listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,EXTRA:PLAINTEXT");
      alter(admin, "1", "listeners", own + ",EXTRA://127.0.0.1:" + extra);
    }
    await().atMost(PROPAGATION).until(() -> answers(extra));

    int port = brokers.get(1).port;
    brokers.remove(1).close();
    assertThat(answers(extra)).as("closed with its broker").isFalse();
    brokers.add(
        TestBroker.start(
            dir.resolve("logs-1"),
            port,
            Map.of("node.id", "1", BrokerConfig.ETCD_ENDPOINTS, etcd.endpoint()),
            List.of()));
    assertThat(answers(extra)).as("bound again at the start").isTrue();

    try (RawKafkaClient open = new RawKafkaClient(extra, 10_000);
        Admin admin = admin()) {
      open.send(new ApiVersionsRequest.Builder().build((short) 3));
      alter(admin, "1", "listeners", null);
      await().atMost(PROPAGATION).until(() -> !answers(extra));
      assertThatThrownBy(() -> open.send(new ApiVersionsRequest.Builder().build((short) 3)))
          .as("a connection of the removed listener")
          .isInstanceOf(IOException.class);
    }
    assertThat(answers(brokers.get(1).port)).as("its other listener").isTrue();
  }

  /**
   * {@code num.io.threads}, dynamic in Kafka, is stored at once and taken when the broker starts
   * next: it sizes the storage shards, each one thread named {@code tidelog-shard-<i>}.
   */
  @Test
  void numIoThreadsIsTakenAtTheBrokersNextStart() throws Exception {
    // Both brokers run two shards (TestBroker's num.io.threads)
    assertThat(shardThreadAlive(2)).isFalse();
    try (Admin admin = admin()) {
      alter(admin, "1", BrokerConfig.NUM_IO_THREADS, "3");
    }
    int port = brokers.get(1).port;
    brokers.remove(1).close();
    brokers.add(
        TestBroker.start(
            dir.resolve("logs-1"),
            port,
            Map.of("node.id", "1", BrokerConfig.ETCD_ENDPOINTS, etcd.endpoint()),
            List.of()));
    assertThat(shardThreadAlive(2)).as("a third shard after the restart").isTrue();
  }

  private static boolean shardThreadAlive(int index) {
    return Thread.getAllStackTraces().keySet().stream()
        .anyMatch(t -> t.isAlive() && t.getName().equals("tidelog-shard-" + index));
  }

  /** Whether a Kafka listener on {@code port} answers ApiVersions. */
  private static boolean answers(int port) {
    try (RawKafkaClient client = new RawKafkaClient(port, 5_000)) {
      client.send(new ApiVersionsRequest.Builder().build((short) 3));
      return true;
    } catch (IOException e) {
      return false;
    }
  }

  /** How many of {@code count} connections, opened together, {@code broker} closes at once. */
  private static int refusedAmong(TestBroker broker, int count) throws Exception {
    List<RawKafkaClient> clients = new ArrayList<>();
    try {
      int refused = 0;
      for (int i = 0; i < count; i++) {
        RawKafkaClient client = new RawKafkaClient(broker.port, 5_000);
        clients.add(client);
        try {
          client.send(new ApiVersionsRequest.Builder().build((short) 3));
        } catch (Exception e) {
          refused++;
        }
      }
      return refused;
    } finally {
      for (RawKafkaClient client : clients) {
        client.close();
      }
    }
  }

  @Test
  void theLogCleanerRestartsWithItsNewBackoff() throws Exception {
    // The brokers' static backoff is an hour: nothing is compacted until the dynamic one comes
    for (TestBroker broker : brokers) {
      broker.close();
    }
    brokers.clear();
    for (int id = 0; id < 2; id++) {
      brokers.add(
          TestBroker.start(
              dir.resolve("logs-" + id),
              Map.of(
                  "node.id",
                  String.valueOf(id),
                  BrokerConfig.ETCD_ENDPOINTS,
                  etcd.endpoint(),
                  BrokerConfig.LOG_CLEANER_BACKOFF_MS,
                  "3600000")));
    }
    try (Admin admin = admin();
        KafkaProducer<byte[], byte[]> producer = producer()) {
      admin
          .createTopics(
              List.of(
                  new NewTopic("compacted", 1, (short) 2)
                      .configs(
                          Map.of(
                              "cleanup.policy", "compact",
                              "internal.segment.bytes", "200",
                              "min.cleanable.dirty.ratio", "0.01"))))
          .all()
          .get();
      for (int i = 0; i < 30; i++) {
        producer.send(new ProducerRecord<>("compacted", "key".getBytes(), new byte[50])).get();
      }
      alter(admin, "", BrokerConfig.LOG_CLEANER_BACKOFF_MS, "200");
      await()
          .atMost(PROPAGATION)
          .untilAsserted(() -> assertThat(records("compacted")).isLessThan(30));
    }
  }

  /** How many records a consumer reads from the start of partition 0 of {@code topic}. */
  private int records(String topic) {
    try (var consumer =
        new org.apache.kafka.clients.consumer.KafkaConsumer<byte[], byte[]>(
            Map.of(
                "bootstrap.servers",
                brokers.get(0).bootstrap(),
                "key.deserializer",
                "org.apache.kafka.common.serialization.ByteArrayDeserializer",
                "value.deserializer",
                "org.apache.kafka.common.serialization.ByteArrayDeserializer"))) {
      var tp = new org.apache.kafka.common.TopicPartition(topic, 0);
      consumer.assign(List.of(tp));
      consumer.seekToBeginning(List.of(tp));
      long end = consumer.endOffsets(List.of(tp)).get(tp);
      int count = 0;
      long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
      while (consumer.position(tp) < end && System.nanoTime() < deadline) {
        count += consumer.poll(Duration.ofMillis(200)).count();
      }
      return count;
    }
  }
}
