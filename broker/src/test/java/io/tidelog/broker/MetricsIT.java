package io.tidelog.broker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.tidelog.broker.config.BrokerConfig;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.NotEnoughReplicasException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The broker's {@code /metrics} against traffic of known size from kafka-clients: the counters and
 * the lag gauge move to the values the traffic implies, not merely exist.
 */
class MetricsIT {
  private static final int RECORDS = 100;
  private static final int VALUE_BYTES = 200;
  private static final Duration WAIT = Duration.ofSeconds(30);

  @TempDir static Path dir;
  static EtcdServer etcd;
  static TestBroker broker;
  static Admin admin;

  @BeforeAll
  static void start() throws Exception {
    etcd = EtcdServer.start(Files.createDirectory(dir.resolve("etcd")));
    broker = startBroker("0", "logs", Map.of());
    admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrap()));
  }

  private static TestBroker startBroker(String id, String logs, Map<String, String> more)
      throws Exception {
    Map<String, String> config =
        new java.util.HashMap<>(
            Map.of(
                BrokerConfig.ETCD_ENDPOINTS,
                etcd.endpoint(),
                "node.id",
                id,
                "offsets.topic.num.partitions",
                "1",
                "offsets.topic.replication.factor",
                "1",
                "group.initial.rebalance.delay.ms",
                "0"));
    config.putAll(more);
    return TestBroker.start(dir.resolve(logs), config);
  }

  @AfterAll
  static void stop() throws Exception {
    admin.close();
    broker.close();
    etcd.close();
  }

  @Test
  void trafficMovesTheCountersAndTheLagGauge() throws Exception {
    admin.createTopics(List.of(new NewTopic("metered", 1, (short) 1))).all().get();
    try (KafkaProducer<byte[], byte[]> producer = producer(Map.of())) {
      for (int i = 0; i < RECORDS; i++) {
        producer.send(new ProducerRecord<>("metered", new byte[VALUE_BYTES])).get();
      }
    }
    Scrape produced = Scrape.of(broker.httpPort);
    assertThat(produced.value("tidelog_topic_messages_in_total", "topic", "metered"))
        .isEqualTo(RECORDS);
    assertThat(produced.value("tidelog_topic_produce_requests_total", "topic", "metered"))
        .isEqualTo(RECORDS); // one record a request: every send waited for the previous one
    assertThat(produced.value("tidelog_topic_produce_requests_failed_total", "topic", "metered"))
        .isZero();
    // Every appended byte is on disk: the log of a single partition is what producers sent
    double bytesIn = produced.value("tidelog_topic_bytes_in_total", "topic", "metered");
    assertThat(bytesIn)
        .isGreaterThan(RECORDS * VALUE_BYTES)
        .isEqualTo(produced.value("tidelog_log_size_bytes", "partition", "0", "topic", "metered"))
        .isEqualTo(produced.value("tidelog_topic_log_size_bytes", "topic", "metered"));
    assertThat(produced.value("tidelog_log_end_offset", "partition", "0", "topic", "metered"))
        .isEqualTo(RECORDS);
    assertThat(produced.value("tidelog_request_duration_seconds_count", "api", "Produce"))
        .isGreaterThanOrEqualTo(RECORDS);

    TopicPartition tp = new TopicPartition("metered", 0);
    try (KafkaConsumer<byte[], byte[]> consumer = consumer("metered-group")) {
      consumer.assign(List.of(tp));
      consumer.seekToBeginning(List.of(tp));
      int read = 0;
      long deadline = System.nanoTime() + WAIT.toNanos();
      while (read < RECORDS && System.nanoTime() < deadline) {
        read += consumer.poll(Duration.ofMillis(200)).count();
      }
      assertThat(read).isEqualTo(RECORDS);
      consumer.commitSync(Map.of(tp, new OffsetAndMetadata(40)));
      Scrape committed = Scrape.of(broker.httpPort);
      assertThat(
              committed.value(
                  "tidelog_consumer_group_lag",
                  "group",
                  "metered-group",
                  "partition",
                  "0",
                  "topic",
                  "metered"))
          .isEqualTo(RECORDS - 40);
      assertThat(
              committed.value(
                  "tidelog_consumer_group_topic_lag", "group", "metered-group", "topic", "metered"))
          .isEqualTo(RECORDS - 40);
      assertThat(committed.value("tidelog_topic_bytes_out_total", "topic", "metered"))
          .isGreaterThanOrEqualTo(bytesIn);

      consumer.commitSync(Map.of(tp, new OffsetAndMetadata(RECORDS)));
      assertThat(
              Scrape.of(broker.httpPort)
                  .value(
                      "tidelog_consumer_group_topic_lag",
                      "group",
                      "metered-group",
                      "topic",
                      "metered"))
          .isZero();
    }
    // Every request of the closed clients was answered
    await()
        .atMost(WAIT)
        .untilAsserted(
            () ->
                assertThat(Scrape.of(broker.httpPort).value("tidelog_requests_in_flight"))
                    .isZero());
  }

  @Test
  void longPollsAreCountedInThePurgatoryWhileTheyWait() throws Exception {
    admin.createTopics(List.of(new NewTopic("idle", 1, (short) 1))).all().get();
    AtomicBoolean polling = new AtomicBoolean(true);
    Thread poller =
        new Thread(
            () -> {
              try (KafkaConsumer<byte[], byte[]> consumer = consumer("idle-group")) {
                consumer.assign(List.of(new TopicPartition("idle", 0)));
                // Each poll long-polls the empty partition for fetch.max.wait.ms (500 ms)
                for (int i = 0; i < 600 && polling.get(); i++) {
                  consumer.poll(Duration.ofMillis(100));
                }
              }
            });
    poller.start();
    try {
      await()
          .atMost(WAIT)
          .until(
              () ->
                  Scrape.of(broker.httpPort).value("tidelog_purgatory_size", "operation", "Fetch")
                      >= 1);
    } finally {
      polling.set(false);
      poller.join(WAIT.toMillis());
    }
    await()
        .atMost(WAIT)
        .until(
            () ->
                Scrape.of(broker.httpPort).value("tidelog_purgatory_size", "operation", "Fetch")
                    == 0);
    assertThat(Scrape.of(broker.httpPort).value("tidelog_purgatory_size", "operation", "Produce"))
        .isZero();
  }

  @Test
  void aDeletedTopicsSeriesGo() throws Exception {
    admin.createTopics(List.of(new NewTopic("doomed", 1, (short) 1))).all().get();
    try (KafkaProducer<byte[], byte[]> producer = producer(Map.of())) {
      producer.send(new ProducerRecord<>("doomed", new byte[10])).get();
    }
    assertThat(
            Scrape.of(broker.httpPort).value("tidelog_topic_messages_in_total", "topic", "doomed"))
        .isEqualTo(1);
    admin.deleteTopics(List.of("doomed")).all().get();
    await()
        .atMost(WAIT)
        .untilAsserted(
            () -> assertThat(Scrape.of(broker.httpPort).body()).doesNotContain("topic=\"doomed\""));
  }

  @Test
  void flushesAreTimed() throws Exception {
    admin
        .createTopics(
            List.of(new NewTopic("flushed", 1, (short) 1).configs(Map.of("flush.messages", "1"))))
        .all()
        .get();
    double before = Scrape.of(broker.httpPort).value("tidelog_log_flush_duration_seconds_count");
    try (KafkaProducer<byte[], byte[]> producer = producer(Map.of())) {
      for (int i = 0; i < 5; i++) {
        producer.send(new ProducerRecord<>("flushed", new byte[10])).get();
      }
    }
    // flush.messages=1: every append is fsynced before it is acknowledged
    assertThat(Scrape.of(broker.httpPort).value("tidelog_log_flush_duration_seconds_count"))
        .isGreaterThanOrEqualTo(before + 5);
  }

  @Test
  void refusedProducesCountAsFailures() throws Exception {
    admin
        .createTopics(
            List.of(
                new NewTopic("unsafe", 1, (short) 1).configs(Map.of("min.insync.replicas", "2"))))
        .all()
        .get();
    try (KafkaProducer<byte[], byte[]> producer =
        producer(Map.of(ProducerConfig.RETRIES_CONFIG, "0"))) {
      for (int i = 0; i < 3; i++) {
        int attempt = i;
        assertThatThrownBy(
                () -> producer.send(new ProducerRecord<>("unsafe", new byte[attempt + 1])).get())
            .isInstanceOf(ExecutionException.class)
            .hasCauseInstanceOf(NotEnoughReplicasException.class);
      }
    }
    Scrape scrape = Scrape.of(broker.httpPort);
    assertThat(scrape.value("tidelog_topic_produce_requests_failed_total", "topic", "unsafe"))
        .isEqualTo(3);
    assertThat(scrape.value("tidelog_topic_produce_requests_total", "topic", "unsafe"))
        .isEqualTo(3);
    assertThat(scrape.value("tidelog_topic_messages_in_total", "topic", "unsafe")).isNull();
    assertThat(scrape.value("tidelog_under_min_isr_partitions")).isGreaterThanOrEqualTo(1);
    assertThat(scrape.value("tidelog_controller_active")).isEqualTo(1);
    assertThat(scrape.value("tidelog_offline_partitions")).isZero();
  }

  @Test
  void answersInTheFormatTheScraperAsksFor() throws Exception {
    HttpResponse<String> openMetrics =
        HttpClient.newHttpClient()
            .send(
                HttpRequest.newBuilder(
                        URI.create("http://127.0.0.1:" + broker.httpPort + "/metrics"))
                    .header("Accept", "application/openmetrics-text; version=1.0.0")
                    .build(),
                HttpResponse.BodyHandlers.ofString());
    assertThat(openMetrics.headers().firstValue("content-type").orElseThrow())
        .startsWith("application/openmetrics-text");
    assertThat(openMetrics.body()).endsWith("# EOF\n").contains("jvm_memory_used_bytes");
    // Java's client asks for an h2c upgrade; the port answers in HTTP/1.1, as scrapers expect
    assertThat(openMetrics.version()).isEqualTo(HttpClient.Version.HTTP_1_1);

    Scrape text = Scrape.of(broker.httpPort);
    assertThat(text.body()).doesNotContain("# EOF");
    assertThat(text.value("tidelog_connections")).isGreaterThanOrEqualTo(1);
  }

  @Test
  void perPartitionSeriesCanBeSwitchedOff() throws Exception {
    try (TestBroker quiet =
            TestBroker.start(
                dir.resolve("quiet"),
                Map.of(
                    BrokerConfig.METRICS_PARTITION_ENABLE,
                    "false",
                    "offsets.topic.num.partitions",
                    "1",
                    "offsets.topic.replication.factor",
                    "1"));
        Admin quietAdmin =
            Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, quiet.bootstrap()))) {
      quietAdmin.createTopics(List.of(new NewTopic("spread", 2, (short) 1))).all().get();
      try (KafkaProducer<byte[], byte[]> producer =
          producer(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, quiet.bootstrap()))) {
        producer.send(new ProducerRecord<>("spread", 1, null, new byte[10])).get();
      }
      quietAdmin
          .alterConsumerGroupOffsets(
              "spread-group", Map.of(new TopicPartition("spread", 1), new OffsetAndMetadata(0)))
          .all()
          .get();
      Scrape scrape = Scrape.of(quiet.httpPort);
      assertThat(scrape.value("tidelog_topic_log_size_bytes", "topic", "spread")).isPositive();
      assertThat(
              scrape.value(
                  "tidelog_consumer_group_topic_lag", "group", "spread-group", "topic", "spread"))
          .isEqualTo(1);
      assertThat(scrape.has("tidelog_log_end_offset")).isFalse();
      assertThat(scrape.has("tidelog_log_size_bytes")).isFalse();
      assertThat(scrape.has("tidelog_consumer_group_lag")).isFalse();
      assertThat(Scrape.of(broker.httpPort).has("tidelog_log_end_offset")).isTrue();
    }
  }

  private static KafkaProducer<byte[], byte[]> producer(Map<String, Object> overrides) {
    Map<String, Object> config =
        new java.util.HashMap<>(
            Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
                broker.bootstrap(),
                ProducerConfig.ACKS_CONFIG,
                "all",
                ProducerConfig.LINGER_MS_CONFIG,
                "0"));
    config.putAll(overrides);
    return new KafkaProducer<>(config, new ByteArraySerializer(), new ByteArraySerializer());
  }

  private static KafkaConsumer<byte[], byte[]> consumer(String group) {
    return new KafkaConsumer<>(
        Map.of(
            ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG,
            broker.bootstrap(),
            ConsumerConfig.GROUP_ID_CONFIG,
            group,
            ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG,
            "false"),
        new ByteArrayDeserializer(),
        new ByteArrayDeserializer());
  }
}
