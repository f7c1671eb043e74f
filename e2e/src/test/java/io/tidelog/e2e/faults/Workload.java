package io.tidelog.e2e.faults;

import io.tidelog.e2e.faults.History.Committed;
import io.tidelog.e2e.faults.History.Read;
import io.tidelog.e2e.faults.History.Reset;
import io.tidelog.e2e.faults.History.Send;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
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
 * Jepsen's Kafka queue workload in its safe mode, with real kafka-clients: producers with {@code
 * acks=all}, idempotence and bounded retries sending unique values round the partitions of a topic
 * with three replicas and {@code min.insync.replicas=2}; consumers that assign every partition and
 * read it from the beginning without committing; and a consumer group whose members subscribe and
 * commit after each poll. Every send, read, assignment and committed offset goes to the {@link
 * History}.
 */
final class Workload implements AutoCloseable {
  static final String TOPIC = "jepsen";
  static final String GROUP = "jepsen-group";
  private static final Logger LOG = LoggerFactory.getLogger(Workload.class);
  private static final long JOIN_TIMEOUT_MS = 30_000;
  private static final Duration IN_SYNC_TIMEOUT = Duration.ofSeconds(90);
  private final WorkloadClients clients;
  private final History history;
  private final int partitions;
  private final Admin admin;
  private final List<Thread> producers = new ArrayList<>();
  private final List<Thread> readers = new ArrayList<>();

  /** The last offset each reader read of each partition: "reader/partition" to offset. */
  private final Map<String, Long> readUpTo = new ConcurrentHashMap<>();

  private final Map<Integer, Long> committed = new ConcurrentHashMap<>();
  private volatile long stopBy = Long.MAX_VALUE;
  private volatile boolean producing = true;
  private volatile boolean reading = true;

  Workload(WorkloadClients clients, History history, int partitions) {
    this.clients = clients;
    this.history = history;
    this.partitions = partitions;
    admin = clients.admin();
  }

  void createTopic() throws Exception {
    WorkloadClients.createTopic(admin, TOPIC, partitions);
  }

  /**
   * Starts {@code producerCount} producers, each sending about {@code rate} records a second, and
   * the readers; all stop when told to, and at the latest after {@code limit}.
   */
  void start(int producerCount, int rate, int assignReaders, int groupReaders, Duration limit) {
    stopBy = System.nanoTime() + limit.toNanos();
    for (int i = 0; i < producerCount; i++) {
      producers.add(thread("producer-" + i, name -> produce(name, rate)));
    }
    for (int i = 0; i < assignReaders; i++) {
      readers.add(thread("reader-" + i, this::readAssigned));
    }
    for (int i = 0; i < groupReaders; i++) {
      readers.add(thread("member-" + i, this::readInGroup));
    }
    readers.add(thread("committed-offsets", name -> observeCommits()));
  }

  private Thread thread(String name, java.util.function.Consumer<String> body) {
    Thread thread = new Thread(() -> body.accept(name), "workload-" + name);
    thread.setDaemon(true);
    thread.start();
    return thread;
  }

  private void produce(String name, int rate) {
    Properties config = clients.producer();
    config.put(ProducerConfig.LINGER_MS_CONFIG, 2);
    try (KafkaProducer<String, String> producer =
        new KafkaProducer<>(config, new StringSerializer(), new StringSerializer())) {
      long pauseNanos = TimeUnit.SECONDS.toNanos(1) / rate;
      long next = System.nanoTime();
      for (long seq = 0; producing && System.nanoTime() < stopBy; seq++) {
        String value = name + "-" + seq;
        int partition = (int) (seq % partitions);
        long invoked = System.nanoTime();
        try {
          producer.send(
              new ProducerRecord<>(TOPIC, partition, null, value),
              (metadata, error) ->
                  history.add(
                      new Send(
                          name,
                          value,
                          partition,
                          invoked,
                          System.nanoTime(),
                          error == null,
                          error == null ? metadata.offset() : -1,
                          error == null ? null : error.toString())));
        } catch (RuntimeException error) {
          history.add(
              new Send(
                  name, value, partition, invoked, System.nanoTime(), false, -1, error.toString()));
        }
        next += pauseNanos;
        long sleep = next - System.nanoTime();
        if (sleep > 0) {
          TimeUnit.NANOSECONDS.sleep(sleep);
        }
      }
      producer.flush();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private List<TopicPartition> topicPartitions() {
    return IntStream.range(0, partitions).mapToObj(p -> new TopicPartition(TOPIC, p)).toList();
  }

  private void readAssigned(String name) {
    try (KafkaConsumer<String, String> consumer =
        new KafkaConsumer<>(
            clients.consumer(), new StringDeserializer(), new StringDeserializer())) {
      consumer.assign(topicPartitions());
      consumer.seekToBeginning(topicPartitions());
      pollUntilStopped(name, consumer, false);
    }
  }

  private void readInGroup(String name) {
    Properties config = clients.consumer();
    config.put(ConsumerConfig.GROUP_ID_CONFIG, GROUP);
    config.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, 10_000);
    config.put(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, 1_000);
    try (KafkaConsumer<String, String> consumer =
        new KafkaConsumer<>(config, new StringDeserializer(), new StringDeserializer())) {
      consumer.subscribe(
          List.of(TOPIC),
          new ConsumerRebalanceListener() {
            @Override
            public void onPartitionsRevoked(Collection<TopicPartition> revoked) {}

            @Override
            public void onPartitionsAssigned(Collection<TopicPartition> assigned) {
              long now = System.nanoTime();
              assigned.forEach(tp -> history.add(new Reset(name, now, tp.partition())));
            }
          });
      pollUntilStopped(name, consumer, true);
    }
  }

  private void pollUntilStopped(
      String name, KafkaConsumer<String, String> consumer, boolean commit) {
    while (reading && System.nanoTime() < stopBy) {
      try {
        var records = consumer.poll(Duration.ofMillis(200));
        long now = System.nanoTime();
        for (ConsumerRecord<String, String> record : records) {
          history.add(new Read(name, now, record.partition(), record.offset(), record.value()));
          readUpTo.put(name + "/" + record.partition(), record.offset());
        }
        if (commit && !records.isEmpty()) {
          consumer.commitSync(Duration.ofSeconds(5));
        }
      } catch (RuntimeException e) {
        LOG.info("{}: {}", name, e.toString());
        WorkloadClients.sleep(100);
      }
    }
  }

  /** Asks the brokers for the group's committed offsets twice a second. */
  private void observeCommits() {
    while (reading && System.nanoTime() < stopBy) {
      try {
        Map<TopicPartition, OffsetAndMetadata> offsets =
            admin
                .listConsumerGroupOffsets(GROUP)
                .partitionsToOffsetAndMetadata()
                .get(10, TimeUnit.SECONDS);
        long now = System.nanoTime();
        offsets.forEach(
            (tp, offset) -> {
              if (offset != null && tp.topic().equals(TOPIC)) {
                history.add(new Committed(GROUP, now, tp.partition(), offset.offset()));
                committed.put(tp.partition(), offset.offset());
              }
            });
      } catch (Exception e) {
        LOG.info("committed offsets: {}", e.toString());
      }
      WorkloadClients.sleep(500);
    }
  }

  void stopProducers() throws InterruptedException {
    producing = false;
    for (Thread producer : producers) {
      producer.join(JOIN_TIMEOUT_MS);
    }
  }

  /**
   * Waits (at most 90 s) until every partition has a leader and all three replicas in sync; how
   * long it took.
   */
  Duration awaitInSync() throws Exception {
    Duration timeout = IN_SYNC_TIMEOUT;
    long start = System.nanoTime();
    long deadline = start + timeout.toNanos();
    String state = "not described";
    while (System.nanoTime() < deadline) {
      try {
        TopicDescription topic =
            admin
                .describeTopics(List.of(TOPIC))
                .allTopicNames()
                .get(10, TimeUnit.SECONDS)
                .get(TOPIC);
        state = topic.partitions().toString();
        if (topic.partitions().stream()
            .allMatch(p -> p.leader() != null && p.isr().size() == p.replicas().size())) {
          return Duration.ofNanos(System.nanoTime() - start);
        }
      } catch (Exception e) {
        state = e.toString();
      }
      WorkloadClients.sleep(250);
    }
    throw new IllegalStateException("partitions not all in sync after " + timeout + ": " + state);
  }

  /** The node id of the consumer group's coordinator, if the brokers say. */
  Optional<Integer> coordinator() {
    try {
      return Optional.of(
          admin
              .describeConsumerGroups(List.of(GROUP))
              .describedGroups()
              .get(GROUP)
              .get(10, TimeUnit.SECONDS)
              .coordinator()
              .id());
    } catch (Exception e) {
      LOG.info("no coordinator for {}: {}", GROUP, e.toString());
      return Optional.empty();
    }
  }

  Map<Integer, Long> endOffsets() throws Exception {
    return admin
        .listOffsets(
            topicPartitions().stream()
                .collect(Collectors.toMap(Function.identity(), tp -> OffsetSpec.latest())))
        .all()
        .get(30, TimeUnit.SECONDS)
        .entrySet()
        .stream()
        .collect(Collectors.toMap(e -> e.getKey().partition(), e -> e.getValue().offset()));
  }

  /**
   * Waits (at most {@code timeout}) until every assigning reader has read each partition to its end
   * and the group has committed it, then stops the readers.
   */
  void drain(Duration timeout, int assignReaders) throws Exception {
    Map<Integer, Long> ends = endOffsets();
    long deadline = System.nanoTime() + timeout.toNanos();
    while (System.nanoTime() < deadline && !caughtUp(ends, assignReaders)) {
      WorkloadClients.sleep(250);
    }
    reading = false;
    for (Thread reader : readers) {
      reader.join(JOIN_TIMEOUT_MS);
    }
  }

  private boolean caughtUp(Map<Integer, Long> ends, int assignReaders) {
    for (var end : ends.entrySet()) {
      for (int i = 0; i < assignReaders; i++) {
        if (readUpTo.getOrDefault("reader-" + i + "/" + end.getKey(), -1L) < end.getValue() - 1) {
          return false;
        }
      }
      if (committed.getOrDefault(end.getKey(), 0L) < end.getValue()) {
        return false;
      }
    }
    return true;
  }

  /** A fresh consumer reads every partition from its start to its end offset. */
  void finalRead(Duration timeout) throws Exception {
    Map<Integer, Long> ends = endOffsets();
    try (KafkaConsumer<String, String> consumer =
        new KafkaConsumer<>(
            clients.consumer(), new StringDeserializer(), new StringDeserializer())) {
      consumer.assign(topicPartitions());
      consumer.seekToBeginning(topicPartitions());
      long deadline = System.nanoTime() + timeout.toNanos();
      while (System.nanoTime() < deadline
          && topicPartitions().stream()
              .anyMatch(tp -> consumer.position(tp) < ends.get(tp.partition()))) {
        long now = System.nanoTime();
        for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(500))) {
          history.add(
              new Read(
                  History.FINAL_READER, now, record.partition(), record.offset(), record.value()));
        }
      }
    }
  }

  @Override
  public void close() throws InterruptedException {
    producing = false;
    reading = false;
    for (Thread thread : producers) {
      thread.join(JOIN_TIMEOUT_MS);
    }
    for (Thread thread : readers) {
      thread.join(JOIN_TIMEOUT_MS);
    }
    admin.close(Duration.ofSeconds(5));
  }
}
