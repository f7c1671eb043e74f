package io.tidelog.broker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewPartitions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.InvalidConfigurationException;
import org.apache.kafka.common.errors.InvalidPartitionsException;
import org.apache.kafka.common.errors.InvalidReplicationFactorException;
import org.apache.kafka.common.errors.InvalidTopicException;
import org.apache.kafka.common.errors.PolicyViolationException;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** A single broker judged by the real kafka-clients producer, consumer and Admin. */
class KafkaClientsIT {
  @TempDir static Path logDir;
  static TestBroker broker;
  static Admin admin;

  @BeforeAll
  static void start() throws Exception {
    broker =
        TestBroker.start(
            logDir, Map.of("auto.create.topics.enable", "false", "log.cleaner.backoff.ms", "200"));
    admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrap()));
  }

  @AfterAll
  static void stop() throws Exception {
    admin.close();
    broker.close();
  }

  private static KafkaProducer<byte[], byte[]> producer(String acks, String compression) {
    Properties p = new Properties();
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrap());
    p.put(ProducerConfig.ACKS_CONFIG, acks);
    p.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, compression);
    p.put(
        ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG,
        String.valueOf(!acks.equals("0") && !acks.equals("1")));
    p.put(ProducerConfig.MAX_REQUEST_SIZE_CONFIG, String.valueOf(2 * 1024 * 1024));
    return new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer());
  }

  private static KafkaConsumer<byte[], byte[]> consumer() {
    return consumer("read_uncommitted");
  }

  private static KafkaConsumer<byte[], byte[]> consumer(String isolationLevel) {
    Properties p = new Properties();
    p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrap());
    p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
    p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, isolationLevel);
    return new KafkaConsumer<>(p, new ByteArrayDeserializer(), new ByteArrayDeserializer());
  }

  private static List<ConsumerRecord<byte[], byte[]>> readAll(TopicPartition tp, int expected) {
    List<ConsumerRecord<byte[], byte[]>> records = new ArrayList<>();
    try (KafkaConsumer<byte[], byte[]> consumer = consumer()) {
      consumer.assign(List.of(tp));
      consumer.seekToBeginning(List.of(tp));
      long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
      while (records.size() < expected && System.nanoTime() < deadline) {
        consumer.poll(Duration.ofMillis(200)).forEach(records::add);
      }
    }
    return records;
  }

  /**
   * A topic of compression.type=zstd stores what an uncompressed idempotent producer sends in zstd
   * (its segment file says so), and a consumer reads every record back as sent.
   */
  @Test
  void aTopicsCompressionTypeRecompressesWhatProducersSend() throws Exception {
    admin
        .createTopics(
            List.of(
                new NewTopic("zstd-topic", 1, (short) 1)
                    .configs(Map.of("compression.type", "zstd"))))
        .all()
        .get();
    try (KafkaProducer<byte[], byte[]> producer = producer("all", "none")) {
      for (int i = 0; i < 100; i++) {
        ProducerRecord<byte[], byte[]> record =
            new ProducerRecord<>(
                "zstd-topic",
                ("k" + i).getBytes(StandardCharsets.UTF_8),
                ("value " + i).repeat(20).getBytes(StandardCharsets.UTF_8));
        record.headers().add("i", String.valueOf(i).getBytes(StandardCharsets.UTF_8));
        producer.send(record);
      }
      producer.flush();
    }
    List<ConsumerRecord<byte[], byte[]>> read = readAll(new TopicPartition("zstd-topic", 0), 100);
    assertThat(read).hasSize(100);
    for (int i = 0; i < 100; i++) {
      assertThat(new String(read.get(i).value(), StandardCharsets.UTF_8))
          .isEqualTo(("value " + i).repeat(20));
      assertThat(new String(read.get(i).headers().lastHeader("i").value(), StandardCharsets.UTF_8))
          .isEqualTo(String.valueOf(i));
    }
    try (org.apache.kafka.common.record.FileRecords segment =
        org.apache.kafka.common.record.FileRecords.open(
            logDir.resolve("zstd-topic-0/00000000000000000000.log").toFile(), false)) {
      assertThat(segment.batches())
          .isNotEmpty()
          .allSatisfy(
              b ->
                  assertThat(b.compressionType())
                      .isEqualTo(org.apache.kafka.common.record.CompressionType.ZSTD));
    }
  }

  /** Every record from the log start to the end offset, stepping over compaction's gaps. */
  private static List<ConsumerRecord<byte[], byte[]>> readToEnd(TopicPartition tp) {
    List<ConsumerRecord<byte[], byte[]>> records = new ArrayList<>();
    try (KafkaConsumer<byte[], byte[]> consumer = consumer()) {
      consumer.assign(List.of(tp));
      consumer.seekToBeginning(List.of(tp));
      long end = consumer.endOffsets(List.of(tp)).get(tp);
      long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
      while (consumer.position(tp) < end && System.nanoTime() < deadline) {
        consumer.poll(Duration.ofMillis(200)).forEach(records::add);
      }
    }
    return records;
  }

  private static void createTopic(String name, int partitions) throws Exception {
    admin.createTopics(List.of(new NewTopic(name, partitions, (short) 1))).all().get();
  }

  @ParameterizedTest(name = "acks={0} compression={1}")
  @CsvSource({"all,none", "1,gzip", "all,snappy", "all,lz4", "-1,zstd", "0,none"})
  void whatIsProducedIsConsumedInOrder(String acks, String compression) throws Exception {
    // Given a topic; when 500 records with keys, headers and null values are produced
    String topic = "orders-" + compression + "-" + acks.replace("-", "m");
    createTopic(topic, 1);
    TopicPartition tp = new TopicPartition(topic, 0);
    try (KafkaProducer<byte[], byte[]> producer = producer(acks, compression)) {
      for (int i = 0; i < 500; i++) {
        byte[] value = i % 50 == 7 ? null : ("value-" + i).getBytes(StandardCharsets.UTF_8);
        ProducerRecord<byte[], byte[]> record =
            new ProducerRecord<>(topic, 0, ("key-" + i).getBytes(StandardCharsets.UTF_8), value);
        record.headers().add("h", new byte[] {(byte) i});
        producer.send(record);
      }
      producer.flush();
    }

    // Then a consumer reads all of them back, in order, intact
    List<ConsumerRecord<byte[], byte[]>> records = readAll(tp, 500);
    assertThat(records).hasSize(500);
    for (int i = 0; i < 500; i++) {
      ConsumerRecord<byte[], byte[]> record = records.get(i);
      assertThat(record.offset()).isEqualTo(i);
      assertThat(new String(record.key(), StandardCharsets.UTF_8)).isEqualTo("key-" + i);
      if (i % 50 == 7) {
        assertThat(record.value()).isNull();
      } else {
        assertThat(new String(record.value(), StandardCharsets.UTF_8)).isEqualTo("value-" + i);
      }
      assertThat(record.headers().lastHeader("h").value()).containsExactly((byte) i);
    }
  }

  @Test
  void manyTopicsInOneRequestAreCreatedTogetherAndTooLargeATopicForEtcdIsAPolicyViolation()
      throws Exception {
    // Given one CreateTopics request of 300 topics (several etcd transactions) and one of a topic
    // whose 200 partitions need more operations than the test's etcd allows in a transaction
    // (its default --max-txn-ops, 128),
    List<NewTopic> many = new ArrayList<>();
    for (int i = 0; i < 300; i++) {
      many.add(new NewTopic("many-" + i, 1, (short) 1));
    }
    admin.createTopics(many).all().get();

    ExecutionException tooLarge =
        assertThrows(
            ExecutionException.class,
            () -> admin.createTopics(List.of(new NewTopic("wide", 200, (short) 1))).all().get());

    // then every one of the 300 exists, and the large one is refused by name of the etcd setting,
    // and not created.
    assertThat(admin.listTopics().names().get())
        .containsAll(many.stream().map(NewTopic::name).toList());
    assertThat(tooLarge.getCause())
        .isInstanceOf(PolicyViolationException.class)
        .hasMessageContaining("--max-txn-ops");
    assertThat(admin.listTopics().names().get()).doesNotContain("wide");
  }

  @Test
  void aCompactedTopicKeepsTheLatestValueOfEachLiveKeyAtItsOffset() throws Exception {
    // Given a compacted topic with small segments, cleaned as soon as anything is dirty
    admin
        .createTopics(
            List.of(
                new NewTopic("prices", 1, (short) 1)
                    .configs(
                        Map.of(
                            "cleanup.policy", "compact",
                            "internal.segment.bytes", "1024",
                            "segment.ms", "1000",
                            "min.cleanable.dirty.ratio", "0.01",
                            "delete.retention.ms", "0"))))
        .all()
        .get();
    TopicPartition tp = new TopicPartition("prices", 0);
    Map<String, String> latest = new TreeMap<>();
    Map<String, Long> latestOffset = new HashMap<>();

    // When 20 keys are written 10 times each and 5 of them are deleted
    try (KafkaProducer<byte[], byte[]> producer = producer("all", "none")) {
      for (int round = 0; round < 10; round++) {
        for (int k = 0; k < 20; k++) {
          String key = "item-" + k;
          RecordMetadata sent = producer.send(record("prices", key, "price-" + round)).get();
          latest.put(key, "price-" + round);
          latestOffset.put(key, sent.offset());
        }
      }
      for (int k = 0; k < 5; k++) {
        producer.send(record("prices", "item-" + k, null)).get();
        latest.remove("item-" + k);
      }

      // Then a record without a key is refused, as Kafka refuses it on a compacted topic
      ExecutionException keyless =
          assertThrows(
              ExecutionException.class,
              () -> producer.send(new ProducerRecord<>("prices", 0, null, new byte[1])).get());
      assertThat(keyless.getCause())
          .isInstanceOf(org.apache.kafka.common.InvalidRecordException.class);

      // And while writes to another key go on (the active segment, never cleaned, rolls after
      // segment.ms), a consumer from the beginning comes to see each live key once, with its
      // latest value at its original offset, and no deleted key (tombstones go after a second
      // pass)
      await()
          .atMost(Duration.ofSeconds(60))
          .pollInterval(Duration.ofMillis(250))
          .untilAsserted(
              () -> {
                producer.send(record("prices", "filler", "f")).get();
                Map<String, List<ConsumerRecord<byte[], byte[]>>> byKey = new TreeMap<>();
                for (ConsumerRecord<byte[], byte[]> r : readToEnd(tp)) {
                  String key = new String(r.key(), StandardCharsets.UTF_8);
                  if (!key.equals("filler")) {
                    byKey.computeIfAbsent(key, k -> new ArrayList<>()).add(r);
                  }
                }
                assertThat(byKey.keySet()).isEqualTo(latest.keySet());
                byKey.forEach(
                    (key, records) -> {
                      assertThat(records).hasSize(1);
                      assertThat(new String(records.get(0).value(), StandardCharsets.UTF_8))
                          .isEqualTo(latest.get(key));
                      assertThat(records.get(0).offset()).isEqualTo(latestOffset.get(key));
                    });
              });
    }
  }

  private static ProducerRecord<byte[], byte[]> record(String topic, String key, String value) {
    return new ProducerRecord<>(
        topic,
        0,
        key.getBytes(StandardCharsets.UTF_8),
        value == null ? null : value.getBytes(StandardCharsets.UTF_8));
  }

  @Test
  void oneMibRecordsRoundTrip() throws Exception {
    createTopic("big", 1);
    byte[] big = new byte[1024 * 1024 - 512];
    big[12345] = 42;
    try (KafkaProducer<byte[], byte[]> producer = producer("all", "none")) {
      RecordMetadata first = producer.send(new ProducerRecord<>("big", big)).get();
      RecordMetadata second = producer.send(new ProducerRecord<>("big", big)).get();
      assertThat(second.offset()).isEqualTo(first.offset() + 1);
    }
    List<ConsumerRecord<byte[], byte[]>> records = readAll(new TopicPartition("big", 0), 2);
    assertThat(records).hasSize(2);
    assertThat(records.get(1).value()).isEqualTo(big);
  }

  @Test
  void seekAndOffsetsForTimesAndListOffsets() throws Exception {
    createTopic("times", 3);
    TopicPartition tp = new TopicPartition("times", 2);
    long t0 = 1_700_000_000_000L;
    try (KafkaProducer<byte[], byte[]> producer = producer("all", "none")) {
      for (int i = 0; i < 100; i++) {
        producer.send(
            new ProducerRecord<>(
                "times", 2, t0 + i * 1000L, null, ("v" + i).getBytes(StandardCharsets.UTF_8)));
      }
      producer.flush();
    }

    try (KafkaConsumer<byte[], byte[]> consumer = consumer()) {
      consumer.assign(List.of(tp));
      var found = consumer.offsetsForTimes(Map.of(tp, t0 + 41_500L)).get(tp);
      assertThat(found.offset()).isEqualTo(42);
      assertThat(found.timestamp()).isEqualTo(t0 + 42_000L);
      assertThat(consumer.endOffsets(List.of(tp))).containsEntry(tp, 100L);
      assertThat(consumer.beginningOffsets(List.of(tp))).containsEntry(tp, 0L);
      consumer.seek(tp, 90);
      List<ConsumerRecord<byte[], byte[]>> tail = new ArrayList<>();
      long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
      while (tail.size() < 10 && System.nanoTime() < deadline) {
        consumer.poll(Duration.ofMillis(200)).forEach(tail::add);
      }
      assertThat(tail)
          .extracting(ConsumerRecord::offset)
          .containsExactly(90L, 91L, 92L, 93L, 94L, 95L, 96L, 97L, 98L, 99L);
      consumer.seekToEnd(List.of(tp));
      assertThat(consumer.position(tp)).isEqualTo(100);
    }
    // With no transaction in it, a read_committed consumer sees the same: the last stable offset
    // is the high watermark, and what it fetches comes with no aborted transactions
    try (KafkaConsumer<byte[], byte[]> committed = consumer("read_committed")) {
      committed.assign(List.of(tp));
      assertThat(committed.endOffsets(List.of(tp))).containsEntry(tp, 100L);
      assertThat(committed.offsetsForTimes(Map.of(tp, t0 + 41_500L)).get(tp).offset())
          .isEqualTo(42);
      committed.seek(tp, 95);
      List<ConsumerRecord<byte[], byte[]>> tail = new ArrayList<>();
      long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
      while (tail.size() < 5 && System.nanoTime() < deadline) {
        committed.poll(Duration.ofMillis(200)).forEach(tail::add);
      }
      assertThat(tail).extracting(ConsumerRecord::offset).containsExactly(95L, 96L, 97L, 98L, 99L);
    }
    var latest = admin.listOffsets(Map.of(tp, OffsetSpec.latest())).all().get().get(tp);
    var earliest = admin.listOffsets(Map.of(tp, OffsetSpec.earliest())).all().get().get(tp);
    var newest = admin.listOffsets(Map.of(tp, OffsetSpec.maxTimestamp())).all().get().get(tp);
    assertThat(latest.offset()).isEqualTo(100);
    assertThat(earliest.offset()).isZero();
    assertThat(newest.offset()).isEqualTo(99);
    assertThat(newest.timestamp()).isEqualTo(t0 + 99_000L);
  }

  @Test
  void adminCreatesDescribesAndDeletesTopics() throws Exception {
    createTopic("admin-topic", 4);

    var description =
        admin.describeTopics(List.of("admin-topic")).allTopicNames().get().get("admin-topic");
    assertThat(description.partitions()).hasSize(4);
    assertThat(description.topicId()).isNotNull();
    assertThat(admin.listTopics().names().get()).contains("admin-topic");

    ExecutionException exists =
        assertThrows(ExecutionException.class, () -> createTopic("admin-topic", 1));
    assertThat(exists).hasCauseInstanceOf(TopicExistsException.class);
    ExecutionException badName =
        assertThrows(ExecutionException.class, () -> createTopic("bad/name", 1));
    assertThat(badName).hasCauseInstanceOf(InvalidTopicException.class);
    ExecutionException badRf =
        assertThrows(
            ExecutionException.class,
            () -> admin.createTopics(List.of(new NewTopic("rf3", 1, (short) 3))).all().get());
    assertThat(badRf).hasCauseInstanceOf(InvalidReplicationFactorException.class);
    ExecutionException badConfig =
        assertThrows(
            ExecutionException.class,
            () ->
                admin
                    .createTopics(
                        List.of(
                            new NewTopic("cfg", 1, (short) 1)
                                .configs(Map.of("retention.ms", "-7"))))
                    .all()
                    .get());
    assertThat(badConfig).hasCauseInstanceOf(InvalidConfigurationException.class);

    admin.deleteTopics(List.of("admin-topic")).all().get();
    assertThat(admin.listTopics().names().get()).doesNotContain("admin-topic");
    // As in Kafka, brokers delete the logs after the deletion is committed, not before
    await()
        .atMost(Duration.ofSeconds(10))
        .untilAsserted(() -> assertThat(logDir.resolve("admin-topic-0")).doesNotExist());
  }

  @Test
  void aTopicDeletedAndCreatedAgainStartsEmpty() throws Exception {
    createTopic("reborn", 1);
    try (KafkaProducer<byte[], byte[]> producer = producer("all", "none")) {
      for (int i = 0; i < 10; i++) {
        producer.send(new ProducerRecord<>("reborn", ("old" + i).getBytes(StandardCharsets.UTF_8)));
      }
      producer.flush();
    }

    // Deleted and created at once: the brokers may see both in one metadata update
    admin.deleteTopics(List.of("reborn")).all().get();
    createTopic("reborn", 1);

    try (KafkaProducer<byte[], byte[]> producer = producer("all", "none")) {
      RecordMetadata first =
          producer
              .send(new ProducerRecord<>("reborn", "new".getBytes(StandardCharsets.UTF_8)))
              .get();
      assertThat(first.offset()).isZero();
    }
    List<ConsumerRecord<byte[], byte[]>> records = readAll(new TopicPartition("reborn", 0), 1);
    assertThat(records)
        .extracting(r -> new String(r.value(), StandardCharsets.UTF_8))
        .containsExactly("new");
  }

  @Test
  void adminGrowsPartitionsAndDescribesAndAltersConfigs() throws Exception {
    createTopic("configs", 2);

    admin.createPartitions(Map.of("configs", NewPartitions.increaseTo(4))).all().get();
    assertThat(
            admin
                .describeTopics(List.of("configs"))
                .allTopicNames()
                .get()
                .get("configs")
                .partitions())
        .hasSize(4);
    ExecutionException shrink =
        assertThrows(
            ExecutionException.class,
            () ->
                admin.createPartitions(Map.of("configs", NewPartitions.increaseTo(3))).all().get());
    assertThat(shrink).hasCauseInstanceOf(InvalidPartitionsException.class);

    ConfigResource topic = new ConfigResource(ConfigResource.Type.TOPIC, "configs");
    ConfigEntry retention =
        admin.describeConfigs(List.of(topic)).all().get().get(topic).get("retention.ms");
    assertThat(retention.value()).isEqualTo("604800000");
    assertThat(retention.source()).isEqualTo(ConfigEntry.ConfigSource.DEFAULT_CONFIG);

    admin
        .incrementalAlterConfigs(
            Map.of(
                topic,
                List.of(
                    new AlterConfigOp(
                        new ConfigEntry("retention.ms", "3600000"), AlterConfigOp.OpType.SET))))
        .all()
        .get();
    ConfigEntry altered =
        admin.describeConfigs(List.of(topic)).all().get().get(topic).get("retention.ms");
    assertThat(altered.value()).isEqualTo("3600000");
    assertThat(altered.source()).isEqualTo(ConfigEntry.ConfigSource.DYNAMIC_TOPIC_CONFIG);
    ExecutionException invalid =
        assertThrows(
            ExecutionException.class,
            () ->
                admin
                    .incrementalAlterConfigs(
                        Map.of(
                            topic,
                            List.of(
                                new AlterConfigOp(
                                    new ConfigEntry("retention.ms", "-5"),
                                    AlterConfigOp.OpType.SET))))
                    .all()
                    .get());
    assertThat(invalid).hasCauseInstanceOf(InvalidConfigurationException.class);

    ConfigResource brokerResource = new ConfigResource(ConfigResource.Type.BROKER, "0");
    assertThat(
            admin
                .describeConfigs(List.of(brokerResource))
                .all()
                .get()
                .get(brokerResource)
                .get("num.partitions")
                .value())
        .isEqualTo("1");
  }

  @Test
  void adminDescribesTheClusterAndDeletesRecords() throws Exception {
    var cluster = admin.describeCluster();
    assertThat(cluster.clusterId().get()).isEqualTo("tidelog");
    assertThat(cluster.nodes().get())
        .extracting(org.apache.kafka.common.Node::port)
        .containsExactly(broker.port);
    assertThat(cluster.controller().get().id()).isZero();

    createTopic("trim", 1);
    TopicPartition tp = new TopicPartition("trim", 0);
    try (KafkaProducer<byte[], byte[]> producer = producer("all", "none")) {
      for (int i = 0; i < 10; i++) {
        producer.send(
            new ProducerRecord<>("trim", 0, null, ("v" + i).getBytes(StandardCharsets.UTF_8)));
      }
      producer.flush();
    }
    var deleted = admin.deleteRecords(Map.of(tp, RecordsToDelete.beforeOffset(4))).all().get();
    assertThat(deleted).isNull();
    assertThat(admin.listOffsets(Map.of(tp, OffsetSpec.earliest())).all().get().get(tp).offset())
        .isEqualTo(4);
    assertThat(readAll(tp, 6))
        .extracting(ConsumerRecord::offset)
        .containsExactly(4L, 5L, 6L, 7L, 8L, 9L);
  }

  @Test
  void healthAndReadinessAnswerOverHttp() throws Exception {
    java.net.http.HttpClient http = java.net.http.HttpClient.newHttpClient();
    for (String path : List.of("/healthz", "/readyz", "/nothing-here")) {
      java.net.http.HttpResponse<String> response =
          http.send(
              java.net.http.HttpRequest.newBuilder(
                      java.net.URI.create("http://127.0.0.1:" + broker.httpPort + path))
                  .build(),
              java.net.http.HttpResponse.BodyHandlers.ofString());
      assertThat(response.statusCode())
          .as(path)
          .isEqualTo(path.equals("/nothing-here") ? 404 : 200);
    }
  }
}
