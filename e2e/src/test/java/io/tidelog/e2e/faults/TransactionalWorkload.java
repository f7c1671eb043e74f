package io.tidelog.e2e.faults;

import io.tidelog.e2e.faults.History.Committed;
import io.tidelog.e2e.faults.History.Read;
import io.tidelog.e2e.faults.History.Reset;
import io.tidelog.e2e.faults.History.Transaction;
import io.tidelog.e2e.faults.History.Transaction.Outcome;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Jepsen's transactional Kafka workload, with real kafka-clients, as an exactly-once application
 * runs: each transactor is a transactional producer beside a {@code read_committed} consumer that
 * has every partition of the topic assigned. A transaction polls once (what it read is its read
 * set), sends the consumer's positions to the transaction for the transactor's own group ({@code
 * sendOffsetsToTransaction}), sends one to three unique values to random partitions, and commits,
 * or, one time in five, aborts. After anything but a commit the consumer moves back to the group's
 * committed offsets, so that what an aborted transaction read is read again. The outcome of each
 * transaction goes to the {@link History}: committed when {@code commitTransaction} returned,
 * aborted when no commit was asked for or an abort succeeded, unknown when a commit was asked for
 * and failed.
 *
 * <p>Reads within transactions make cycles of write-read dependencies possible to observe, which
 * {@code read_committed} forbids, and the offsets committed with them make each value read by
 * exactly one committed transaction of each transactor ({@link TransactionChecker}).
 */
final class TransactionalWorkload implements AutoCloseable {
  static final String TOPIC = "jepsen-txn";
  private static final Logger LOG = LoggerFactory.getLogger(TransactionalWorkload.class);
  private static final long JOIN_TIMEOUT_MS = 60_000;
  private static final int TRANSACTION_TIMEOUT_MS = 10_000;
  private static final int ATTEMPTS = 100;
  private final WorkloadClients clients;
  private final History history;
  private final int partitions;
  private final Admin admin;
  private final List<Thread> transactors = new ArrayList<>();
  private final List<String> names = new ArrayList<>();
  private volatile long stopBy = Long.MAX_VALUE;
  private volatile boolean running = true;

  TransactionalWorkload(WorkloadClients clients, History history, int partitions) {
    this.clients = clients;
    this.history = history;
    this.partitions = partitions;
    admin = clients.admin();
  }

  void createTopic() throws Exception {
    WorkloadClients.createTopic(admin, TOPIC, partitions);
  }

  /** Starts {@code count} transactors, which stop when told to, and at the latest after limit. */
  void start(int count, long seed, Duration limit) {
    stopBy = System.nanoTime() + limit.toNanos();
    for (int i = 0; i < count; i++) {
      String name = "transactor-" + i;
      names.add(name);
      Random random = new Random(seed + i);
      Thread thread = new Thread(() -> transact(name, random), "workload-" + name);
      thread.setDaemon(true);
      thread.start();
      transactors.add(thread);
    }
  }

  private boolean running() {
    return running && System.nanoTime() < stopBy;
  }

  private Properties consumerConfig() {
    Properties config = clients.consumer();
    config.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    return config;
  }

  private KafkaProducer<String, String> producer(String name) {
    Properties config = clients.producer();
    config.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, TOPIC + "-" + name);
    config.put(ProducerConfig.TRANSACTION_TIMEOUT_CONFIG, TRANSACTION_TIMEOUT_MS);
    config.put(ProducerConfig.LINGER_MS_CONFIG, 0);
    return new KafkaProducer<>(config, new StringSerializer(), new StringSerializer());
  }

  private List<TopicPartition> topicPartitions() {
    return IntStream.range(0, partitions).mapToObj(p -> new TopicPartition(TOPIC, p)).toList();
  }

  /** The consumer group whose offsets a transactor commits in its transactions. */
  static String group(String client) {
    return TOPIC + "-" + client;
  }

  /** A consumer of the group's offsets: assigned, never a member. */
  private KafkaConsumer<String, String> consumer(String client) {
    Properties config = consumerConfig();
    config.put(ConsumerConfig.GROUP_ID_CONFIG, group(client));
    KafkaConsumer<String, String> consumer =
        new KafkaConsumer<>(config, new StringDeserializer(), new StringDeserializer());
    consumer.assign(topicPartitions());
    return consumer;
  }

  private void transact(String name, Random random) {
    try (KafkaConsumer<String, String> consumer = consumer(name)) {
      KafkaProducer<String, String> producer = null;
      boolean rewind = true;
      try {
        for (long txn = 0; running(); txn++) {
          if (producer == null) {
            producer = initialized(name);
            rewind = true;
          }
          if (producer == null || rewind && !rewound(name, consumer)) {
            return;
          }
          Ended ended = transaction(name, txn, random, producer, consumer);
          // what an aborted transaction read is read again, from the offsets it did not commit
          rewind = ended.outcome() != Outcome.COMMITTED;
          if (!ended.producerUsable()) {
            // a new producer's initTransactions fences what is left of this one
            producer.close(Duration.ofSeconds(5));
            producer = null;
          }
        }
      } finally {
        if (producer != null) {
          producer.close(Duration.ofSeconds(5));
        }
      }
    }
  }

  /** A producer whose {@code initTransactions} succeeded, or null once the run ends. */
  private KafkaProducer<String, String> initialized(String name) {
    for (int attempt = 0; attempt < ATTEMPTS && running(); attempt++) {
      KafkaProducer<String, String> producer = producer(name);
      try {
        producer.initTransactions();
        return producer;
      } catch (RuntimeException e) {
        LOG.info("{}: initTransactions: {}", name, e.toString());
        producer.close(Duration.ofSeconds(5));
        WorkloadClients.sleep(500);
      }
    }
    return null;
  }

  /**
   * Moves the consumer to the group's committed offsets (stable ones: no transaction pending on
   * them), or to the start of a partition without one, as an exactly-once application does when it
   * starts; false if the brokers did not say by the end of the run.
   */
  private boolean rewound(String name, KafkaConsumer<String, String> consumer) {
    for (int attempt = 0; attempt < ATTEMPTS && running(); attempt++) {
      try {
        Map<TopicPartition, Long> committed = committedOffsets(consumer);
        long now = System.nanoTime();
        for (TopicPartition tp : topicPartitions()) {
          Long offset = committed.get(tp);
          if (offset == null) {
            consumer.seekToBeginning(List.of(tp));
          } else {
            consumer.seek(tp, offset);
          }
          history.add(new Reset(name, now, tp.partition()));
        }
        return true;
      } catch (Exception e) {
        LOG.info("{}: committed offsets: {}", name, e.toString());
        WorkloadClients.sleep(500);
      }
    }
    return false;
  }

  /**
   * The group's committed offsets, as its consumer fetches them: with {@code read_committed} it
   * asks for stable ones and retries while a transaction's offsets are pending (the admin client
   * would leave such a partition out).
   */
  private static Map<TopicPartition, Long> committedOffsets(
      KafkaConsumer<String, String> consumer) {
    Map<TopicPartition, Long> offsets = new HashMap<>();
    consumer
        .committed(consumer.assignment(), Duration.ofSeconds(15))
        .forEach(
            (tp, offset) -> {
              if (offset != null) {
                offsets.put(tp, offset.offset());
              }
            });
    return offsets;
  }

  /** How a transaction ended, and whether its producer can go on. */
  private record Ended(Outcome outcome, boolean producerUsable) {}

  /**
   * One transaction, recorded with its outcome: a poll, its positions committed for the group, and
   * the sends. The producer cannot go on after a failed commit or a failed abort.
   */
  private Ended transaction(
      String name,
      long txn,
      Random random,
      KafkaProducer<String, String> producer,
      KafkaConsumer<String, String> consumer) {
    String id = name + "-" + txn;
    long invoked = System.nanoTime();
    List<String> reads = new ArrayList<>();
    Map<String, Integer> writes = new LinkedHashMap<>();
    Map<Integer, Long> offsets = new TreeMap<>();
    boolean commitAsked = false;
    boolean abort = random.nextInt(5) == 0;
    try {
      producer.beginTransaction();
      long now = System.nanoTime();
      for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(50))) {
        history.add(new Read(name, now, record.partition(), record.offset(), record.value()));
        reads.add(record.value());
      }
      Map<TopicPartition, OffsetAndMetadata> positions = new HashMap<>();
      for (TopicPartition tp : topicPartitions()) {
        long position = consumer.position(tp);
        positions.put(tp, new OffsetAndMetadata(position));
        offsets.put(tp.partition(), position);
      }
      producer.sendOffsetsToTransaction(positions, new ConsumerGroupMetadata(group(name)));
      int sends = 1 + random.nextInt(3);
      for (int i = 0; i < sends; i++) {
        String value = id + "-" + i;
        int partition = random.nextInt(partitions);
        writes.put(value, partition);
        producer.send(new ProducerRecord<>(TOPIC, partition, null, value));
      }
      if (abort) {
        producer.abortTransaction();
        return record(name, id, invoked, Outcome.ABORTED, writes, reads, offsets, null, true);
      }
      commitAsked = true;
      producer.commitTransaction();
      return record(name, id, invoked, Outcome.COMMITTED, writes, reads, offsets, null, true);
    } catch (RuntimeException e) {
      try {
        // The client refuses to abort after a commit it may have sent; the coordinator refuses
        // to abort a transaction it prepared to commit. An abort that succeeds is an abort.
        producer.abortTransaction();
        return record(
            name, id, invoked, Outcome.ABORTED, writes, reads, offsets, e.toString(), true);
      } catch (RuntimeException abortFailed) {
        // Never asked to commit, the coordinator can only abort it (or its timeout will).
        Outcome outcome = commitAsked ? Outcome.UNKNOWN : Outcome.ABORTED;
        String error = e + "; abort: " + abortFailed;
        return record(name, id, invoked, outcome, writes, reads, offsets, error, false);
      }
    }
  }

  private Ended record(
      String name,
      String id,
      long invoked,
      Outcome outcome,
      Map<String, Integer> writes,
      List<String> reads,
      Map<Integer, Long> offsets,
      String error,
      boolean producerUsable) {
    history.add(
        new Transaction(
            name,
            id,
            invoked,
            System.nanoTime(),
            outcome,
            Map.copyOf(writes),
            List.copyOf(reads),
            Map.copyOf(offsets),
            error));
    return new Ended(outcome, producerUsable);
  }

  /** Stops the transactors; each ends its transaction first. */
  void stop() throws InterruptedException {
    running = false;
    for (Thread thread : transactors) {
      thread.join(JOIN_TIMEOUT_MS);
    }
  }

  /** Records each transactor's group's committed offsets, once no transaction is pending. */
  void readCommittedOffsets() throws Exception {
    for (String client : names) {
      try (KafkaConsumer<String, String> consumer = consumer(client)) {
        Map<TopicPartition, Long> offsets = committedOffsets(consumer);
        long now = System.nanoTime();
        offsets.forEach(
            (tp, offset) -> history.add(new Committed(group(client), now, tp.partition(), offset)));
      }
    }
  }

  /**
   * A fresh {@code read_committed} consumer reads every partition from its start until its position
   * reaches the high watermark (at most {@code timeout}): every transaction has ended by then,
   * committed or aborted (by its producer, or by the coordinator on its timeout). Whether it got
   * there.
   */
  boolean finalRead(Duration timeout) throws Exception {
    Map<TopicPartition, Long> ends =
        admin
            .listOffsets(
                topicPartitions().stream()
                    .collect(Collectors.toMap(Function.identity(), tp -> OffsetSpec.latest())))
            .all()
            .get(30, TimeUnit.SECONDS)
            .entrySet()
            .stream()
            .collect(Collectors.toMap(Map.Entry::getKey, e -> e.getValue().offset()));
    try (KafkaConsumer<String, String> consumer =
        new KafkaConsumer<>(consumerConfig(), new StringDeserializer(), new StringDeserializer())) {
      consumer.assign(topicPartitions());
      consumer.seekToBeginning(topicPartitions());
      long deadline = System.nanoTime() + timeout.toNanos();
      while (System.nanoTime() < deadline) {
        if (topicPartitions().stream().allMatch(tp -> consumer.position(tp) >= ends.get(tp))) {
          return true;
        }
        long now = System.nanoTime();
        for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(500))) {
          history.add(
              new Read(
                  History.FINAL_READER, now, record.partition(), record.offset(), record.value()));
        }
      }
      LOG.warn("final read of {} not at {} after {}", TOPIC, ends, timeout);
      return false;
    }
  }

  @Override
  public void close() throws InterruptedException {
    stop();
    admin.close(Duration.ofSeconds(5));
  }
}
