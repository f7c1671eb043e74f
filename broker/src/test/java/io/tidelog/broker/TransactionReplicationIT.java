package io.tidelog.broker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.CleanupMode;
import org.junit.jupiter.api.io.TempDir;

/**
 * Transactions on three broker processes, where a transaction's partitions, its coordinator and its
 * group's offsets live on different brokers: markers and KIP-890's verification cross the
 * inter-broker listener, and the coordinator's broker is killed in the middle of a transaction.
 */
class TransactionReplicationIT {
  private static final Duration WAIT = Duration.ofSeconds(60);
  private static final String TOPIC = "txn-replicated";
  private static final String GROUP = "txn-replicated-group";

  @TempDir(cleanup = CleanupMode.ON_SUCCESS)
  Path dir;

  private EtcdServer etcd;
  private final Map<Integer, BrokerProcess> brokers = new HashMap<>();
  private Admin admin;

  @AfterEach
  void stop() throws Exception {
    if (admin != null) {
      admin.close(Duration.ofSeconds(5));
    }
    for (BrokerProcess broker : brokers.values()) {
      broker.close();
    }
    if (etcd != null) {
      etcd.close();
    }
  }

  private String bootstrap() {
    return brokers.values().stream().map(BrokerProcess::address).collect(Collectors.joining(","));
  }

  @Test
  void aTransactionAcrossBrokersCommitsWithItsOffsetsAfterItsCoordinatorIsKilled()
      throws Exception {
    // Given three brokers, a topic of three partitions led by different brokers, and the
    // coordinators' topics replicated three times
    etcd = EtcdServer.start(dir.resolve("etcd"));
    Map<String, String> overrides =
        Map.of(
            "broker.session.timeout.ms", "6000",
            "transaction.state.log.num.partitions", "3",
            "offsets.topic.num.partitions", "3");
    for (int id = 0; id < 3; id++) {
      brokers.put(
          id, new BrokerProcess(id, dir.resolve("broker-" + id), etcd.endpoint(), overrides));
    }
    for (BrokerProcess broker : brokers.values()) {
      broker.start();
    }
    Properties adminProps = new Properties();
    adminProps.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap());
    adminProps.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 30_000);
    admin = Admin.create(adminProps);
    await()
        .atMost(WAIT)
        .ignoreExceptions()
        .until(() -> admin.describeCluster().nodes().get().size() == 3);
    admin
        .createTopics(
            List.of(new NewTopic(TOPIC, 3, (short) 3).configs(Map.of("min.insync.replicas", "2"))))
        .all()
        .get(30, TimeUnit.SECONDS);
    await()
        .atMost(WAIT)
        .ignoreExceptions()
        .until(
            () ->
                partitions().stream().allMatch(p -> p.isr().size() == 3)
                    && partitions().stream().map(p -> p.leader().id()).distinct().count() > 1);

    List<String> committed = new ArrayList<>();
    try (KafkaProducer<String, String> producer = producer()) {
      // when a transactional producer commits one transaction over every partition,
      producer.initTransactions();
      producer.beginTransaction();
      for (int i = 0; i < 9; i++) {
        String value = "first-" + i;
        producer.send(new ProducerRecord<>(TOPIC, i % 3, null, value));
        committed.add(value);
      }
      producer.commitTransaction();

      // opens a second one with records and its group's offsets,
      producer.beginTransaction();
      for (int i = 0; i < 9; i++) {
        String value = "second-" + i;
        producer.send(new ProducerRecord<>(TOPIC, i % 3, null, value)).get(30, TimeUnit.SECONDS);
        committed.add(value);
      }
      producer.sendOffsetsToTransaction(
          Map.of(new TopicPartition(TOPIC, 0), new OffsetAndMetadata(7)),
          new ConsumerGroupMetadata(GROUP));
      int coordinator =
          admin
              .describeTransactions(List.of("replicated"))
              .description("replicated")
              .get(30, TimeUnit.SECONDS)
              .coordinatorId();

      // and its coordinator's broker is killed before the commit,
      brokers.get(coordinator).kill();
      producer.commitTransaction();
    }

    // then a read_committed consumer reads both transactions, and the group's offset is 7
    assertThat(readCommitted()).containsExactlyInAnyOrderElementsOf(committed);
    await()
        .atMost(WAIT)
        .ignoreExceptions()
        .until(
            () ->
                admin
                    .listConsumerGroupOffsets(GROUP)
                    .partitionsToOffsetAndMetadata()
                    .get(30, TimeUnit.SECONDS)
                    .get(new TopicPartition(TOPIC, 0))
                    .offset(),
            offset -> offset == 7);
  }

  private List<TopicPartitionInfo> partitions() throws Exception {
    return admin
        .describeTopics(List.of(TOPIC))
        .allTopicNames()
        .get(30, TimeUnit.SECONDS)
        .get(TOPIC)
        .partitions();
  }

  private KafkaProducer<String, String> producer() {
    Properties p = new Properties();
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap());
    p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "replicated");
    p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, 120_000);
    p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 120_000);
    p.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, 10_000);
    return new KafkaProducer<>(p, new StringSerializer(), new StringSerializer());
  }

  private List<String> readCommitted() {
    Properties p = new Properties();
    p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap());
    p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    try (KafkaConsumer<String, String> consumer =
        new KafkaConsumer<>(p, new StringDeserializer(), new StringDeserializer())) {
      List<TopicPartition> tps =
          List.of(
              new TopicPartition(TOPIC, 0),
              new TopicPartition(TOPIC, 1),
              new TopicPartition(TOPIC, 2));
      consumer.assign(tps);
      consumer.seekToBeginning(tps);
      List<String> values = new ArrayList<>();
      await()
          .atMost(WAIT)
          .until(
              () -> {
                for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) {
                  values.add(r.value());
                }
                return values.size() >= 18;
              });
      return values;
    }
  }
}
