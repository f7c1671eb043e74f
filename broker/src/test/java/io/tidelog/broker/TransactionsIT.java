package io.tidelog.broker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ListConsumerGroupOffsetsOptions;
import org.apache.kafka.clients.admin.ListConsumerGroupOffsetsSpec;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TransactionDescription;
import org.apache.kafka.clients.admin.TransactionListing;
import org.apache.kafka.clients.admin.TransactionState;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.ProducerFencedException;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Transactions on one broker, judged by kafka-clients' transactional producer, a read_committed
 * consumer and Admin's transaction APIs.
 */
class TransactionsIT {
  @TempDir static Path logDir;
  static TestBroker broker;
  static Admin admin;

  @BeforeAll
  static void start() throws Exception {
    broker =
        TestBroker.start(
            logDir,
            Map.of(
                "auto.create.topics.enable",
                "false",
                "transaction.state.log.num.partitions",
                "3",
                "transaction.abort.timed.out.transaction.cleanup.interval.ms",
                "200"));
    admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrap()));
  }

  @AfterAll
  static void stop() throws Exception {
    admin.close();
    broker.close();
  }

  private static void createTopic(String name, int partitions) throws Exception {
    admin
        .createTopics(List.of(new NewTopic(name, partitions, (short) 1)))
        .all()
        .get(30, TimeUnit.SECONDS);
  }

  private static KafkaProducer<String, String> producer(String transactionalId, int timeoutMs) {
    Properties p = new Properties();
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrap());
    p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, transactionalId);
    p.put(ProducerConfig.TRANSACTION_TIMEOUT_CONFIG, timeoutMs);
    p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, 60_000);
    return new KafkaProducer<>(p, new StringSerializer(), new StringSerializer());
  }

  private static List<String> readAll(String topic, String isolation, int partitions) {
    Properties p = new Properties();
    p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrap());
    p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, isolation);
    try (KafkaConsumer<String, String> consumer =
        new KafkaConsumer<>(p, new StringDeserializer(), new StringDeserializer())) {
      List<TopicPartition> tps = new ArrayList<>();
      for (int i = 0; i < partitions; i++) {
        tps.add(new TopicPartition(topic, i));
      }
      consumer.assign(tps);
      consumer.seekToBeginning(tps);
      Map<TopicPartition, Long> ends = consumer.endOffsets(tps);
      List<String> values = new ArrayList<>();
      await()
          .atMost(Duration.ofSeconds(60))
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

  @Test
  void aReadCommittedConsumerSeesCommittedTransactionsOnlyAndAReadUncommittedOneSeesAll()
      throws Exception {
    createTopic("txn-basic", 3);
    try (KafkaProducer<String, String> producer = producer("basic", 60_000)) {
      producer.initTransactions();
      producer.beginTransaction();
      for (int i = 0; i < 6; i++) {
        producer.send(new ProducerRecord<>("txn-basic", i % 3, null, "committed-" + i));
      }
      producer.commitTransaction();
      producer.beginTransaction();
      for (int i = 0; i < 6; i++) {
        producer.send(new ProducerRecord<>("txn-basic", i % 3, null, "aborted-" + i));
      }
      producer.flush();
      producer.abortTransaction();
      producer.beginTransaction();
      producer.send(new ProducerRecord<>("txn-basic", 0, null, "committed-last"));
      producer.commitTransaction();
    }
    assertThat(readAll("txn-basic", "read_committed", 3))
        .containsExactlyInAnyOrder(
            "committed-0",
            "committed-1",
            "committed-2",
            "committed-3",
            "committed-4",
            "committed-5",
            "committed-last");
    assertThat(readAll("txn-basic", "read_uncommitted", 3))
        .hasSize(13)
        .contains("aborted-0", "aborted-5");
    TransactionDescription described =
        admin.describeTransactions(List.of("basic")).description("basic").get(30, TimeUnit.SECONDS);
    assertThat(described.state()).isEqualTo(TransactionState.COMPLETE_COMMIT);
    assertThat(described.topicPartitions()).isEmpty();
    assertThat(admin.listTransactions().all().get(30, TimeUnit.SECONDS))
        .extracting(TransactionListing::transactionalId)
        .contains("basic");
    Scrape scrape = Scrape.of(broker.httpPort);
    assertThat(scrape.value("tidelog_transactions_completed_total", "result", "commit"))
        .isGreaterThanOrEqualTo(2);
    assertThat(scrape.value("tidelog_transactions", "state", "CompleteCommit"))
        .isGreaterThanOrEqualTo(1);
  }

  /**
   * Many small batches in flight (five requests a connection), a commit every 200 records: each
   * record is written once, in the order sent, whatever path each request takes through the
   * broker's verification (a broker that lets one request's append overtake another's answers
   * OUT_OF_ORDER_SEQUENCE_NUMBER).
   */
  @Test
  void aProducerWithRequestsInFlightCommittingOftenWritesEachRecordOnceInOrder() throws Exception {
    createTopic("txn-pipelined", 2);
    Properties p = new Properties();
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrap());
    p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "pipelined");
    p.put(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, 5);
    p.put(ProducerConfig.LINGER_MS_CONFIG, 0);
    p.put(ProducerConfig.BATCH_SIZE_CONFIG, 256);
    p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, 60_000);
    List<String> sent = new ArrayList<>();
    try (KafkaProducer<String, String> producer =
        new KafkaProducer<>(p, new StringSerializer(), new StringSerializer())) {
      producer.initTransactions();
      for (int txn = 0; txn < 20; txn++) {
        producer.beginTransaction();
        for (int i = 0; i < 200; i++) {
          String value = String.format("%02d-%03d-%s", txn, i, "x".repeat(60));
          producer.send(new ProducerRecord<>("txn-pipelined", i % 2, null, value));
          sent.add(value);
        }
        producer.commitTransaction();
      }
    }
    List<String> read = readAll("txn-pipelined", "read_committed", 2);
    assertThat(read).hasSameSizeAs(sent).containsExactlyInAnyOrderElementsOf(sent);
    for (int partition = 0; partition < 2; partition++) {
      int of = partition;
      List<String> inPartition =
          sent.stream().filter(v -> Integer.parseInt(v.substring(3, 6)) % 2 == of).toList();
      assertThat(read.stream().filter(inPartition::contains).toList())
          .as("partition %d in the order sent", partition)
          .isEqualTo(inPartition);
    }
  }

  @Test
  void aNewProducerOfTheSameTransactionalIdFencesTheOldOneAndAbortsItsOpenTransaction()
      throws Exception {
    createTopic("txn-fence", 1);
    try (KafkaProducer<String, String> zombie = producer("fenced", 60_000);
        KafkaProducer<String, String> successor = producer("fenced", 60_000)) {
      zombie.initTransactions();
      zombie.beginTransaction();
      zombie.send(new ProducerRecord<>("txn-fence", "from-the-zombie")).get(30, TimeUnit.SECONDS);
      // its open transaction holds read_committed consumers back by the one record
      Scrape open = Scrape.of(broker.httpPort);
      assertThat(
              open.value("tidelog_last_stable_offset_lag", "topic", "txn-fence", "partition", "0"))
          .isEqualTo(1.0);
      assertThat(open.value("tidelog_transactions", "state", "Ongoing")).isGreaterThanOrEqualTo(1);

      successor.initTransactions();
      successor.beginTransaction();
      successor.send(new ProducerRecord<>("txn-fence", "from-the-successor"));
      successor.commitTransaction();

      assertThrows(ProducerFencedException.class, zombie::commitTransaction);
    }
    assertThat(readAll("txn-fence", "read_committed", 1)).containsExactly("from-the-successor");
  }

  @Test
  void theCoordinatorAbortsATransactionPastItsTimeoutSoThatReadCommittedConsumersMoveOn()
      throws Exception {
    createTopic("txn-timeout", 1);
    double timedOutBefore =
        Scrape.of(broker.httpPort).value("tidelog_transactions_timed_out_total");
    try (KafkaProducer<String, String> abandoned = producer("abandoned", 1_000);
        KafkaProducer<String, String> other = producer("other", 60_000)) {
      abandoned.initTransactions();
      abandoned.beginTransaction();
      abandoned.send(new ProducerRecord<>("txn-timeout", "left-open")).get(30, TimeUnit.SECONDS);
      other.initTransactions();
      other.beginTransaction();
      other.send(new ProducerRecord<>("txn-timeout", "after-it"));
      other.commitTransaction();

      await()
          .atMost(Duration.ofSeconds(60))
          .until(
              () ->
                  admin
                      .describeTransactions(List.of("abandoned"))
                      .description("abandoned")
                      .get(30, TimeUnit.SECONDS)
                      .state(),
              state -> state == TransactionState.COMPLETE_ABORT);
      assertThat(readAll("txn-timeout", "read_committed", 1)).containsExactly("after-it");
      assertThrows(ProducerFencedException.class, abandoned::commitTransaction);
      Scrape after = Scrape.of(broker.httpPort);
      assertThat(after.value("tidelog_transactions_timed_out_total")).isGreaterThan(timedOutBefore);
      assertThat(after.value("tidelog_transactions_completed_total", "result", "abort"))
          .isGreaterThanOrEqualTo(1);
      assertThat(
              after.value(
                  "tidelog_last_stable_offset_lag", "topic", "txn-timeout", "partition", "0"))
          .isZero();
    }
  }

  @Test
  void offsetsSentToATransactionAppearAtItsCommitAndNotAtItsAbort() throws Exception {
    createTopic("txn-offsets", 1);
    TopicPartition tp = new TopicPartition("txn-offsets", 0);
    ConsumerGroupMetadata group = new ConsumerGroupMetadata("txn-offsets-group");
    try (KafkaProducer<String, String> producer = producer("offsets", 60_000)) {
      producer.initTransactions();
      producer.beginTransaction();
      producer.send(new ProducerRecord<>("txn-offsets", "a"));
      producer.sendOffsetsToTransaction(Map.of(tp, new OffsetAndMetadata(5, "five")), group);
      // before the commit, the offset is pending: a consumer asking for stable offsets waits
      assertThat(committed("txn-offsets-group", tp, false)).isNull();
      producer.commitTransaction();
      // the markers are written after the commit is answered; until then the offset is unstable,
      // which Admin answers as no offset
      assertThat(stablyCommitted("txn-offsets-group", tp).offset()).isEqualTo(5);

      producer.beginTransaction();
      producer.sendOffsetsToTransaction(Map.of(tp, new OffsetAndMetadata(9)), group);
      producer.abortTransaction();
    }
    assertThat(stablyCommitted("txn-offsets-group", tp))
        .extracting(OffsetAndMetadata::offset, OffsetAndMetadata::metadata)
        .containsExactly(5L, "five");
  }

  /** The group's committed offset once no transaction holds one pending. */
  private static OffsetAndMetadata stablyCommitted(String groupId, TopicPartition tp) {
    return await()
        .atMost(Duration.ofSeconds(60))
        .until(() -> committed(groupId, tp, true), Objects::nonNull);
  }

  /** The group's committed offset, as Admin reads it, asking for stable offsets or not. */
  private static OffsetAndMetadata committed(String groupId, TopicPartition tp, boolean stable)
      throws Exception {
    return admin
        .listConsumerGroupOffsets(
            Map.of(groupId, new ListConsumerGroupOffsetsSpec().topicPartitions(List.of(tp))),
            new ListConsumerGroupOffsetsOptions().requireStable(stable))
        .partitionsToOffsetAndMetadata(groupId)
        .get(30, TimeUnit.SECONDS)
        .get(tp);
  }
}
