package io.tidelog.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.IntStream;
import java.util.stream.LongStream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.LongDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A Kafka Streams application with {@code processing.guarantee=exactly_once_v2} ({@link
 * StreamsCountApp}, a process of its own) counts records per key while they are produced, and is
 * killed with SIGKILL twice mid-stream; each time a new instance takes over from the same state
 * directory, as a restarted pod with its volume would. Exactly once means that every key's counts
 * in the output, read with {@code read_committed}, are 1, 2, … n, each once and in order, where n
 * is how many records of that key were produced: a count missing would be a lost update, a count
 * twice a duplicate one.
 */
class KafkaStreamsIT {
  private static final String INPUT = "streams-input";
  private static final String OUTPUT = "streams-output";
  private static final int PARTITIONS = 3;
  private static final int KEYS = 20;
  private static final int RECORDS = 20_000;
  private static final int RECORDS_PER_MS = 2;

  @TempDir Path dir;

  @Test
  void exactlyOnceCountsAreExactAfterTheApplicationIsKilledTwice() throws Exception {
    boolean passed = false;
    try (DevCluster cluster = new DevCluster(dir)) {
      String bootstrap = cluster.up();
      try (Admin admin =
          Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
        admin
            .createTopics(
                List.of(
                    new NewTopic(INPUT, PARTITIONS, (short) 1),
                    new NewTopic(OUTPUT, PARTITIONS, (short) 1)))
            .all()
            .get(30, TimeUnit.SECONDS);
      }
      AtomicReference<Exception> producerFailed = new AtomicReference<>();
      Thread producer = new Thread(() -> produce(bootstrap, producerFailed), "input-producer");
      producer.start();
      Map<String, List<Long>> counts = new TreeMap<>();
      try (KafkaConsumer<String, Long> output = outputConsumer(bootstrap)) {
        Process app = start(bootstrap, 1);
        try {
          awaitCounts(output, counts, RECORDS / 5);
          app = killAndStart(app, counts, bootstrap, 2);
          awaitCounts(output, counts, RECORDS / 2);
          app = killAndStart(app, counts, bootstrap, 3);
          producer.join(TimeUnit.MINUTES.toMillis(3));
          assertThat(producerFailed.get()).as("the input producer's failure").isNull();
          awaitCounts(output, counts, RECORDS);
          // anything past the expected records, written late, would show as a duplicate count
          output.poll(Duration.ofSeconds(2)).forEach(r -> add(counts, r));
        } finally {
          app.destroyForcibly();
          app.onExit().get(30, TimeUnit.SECONDS);
        }
      }

      assertThat(counts).hasSize(KEYS);
      counts.forEach(
          (key, seen) ->
              assertThat(seen)
                  .as("the counts of %s", key)
                  .containsExactlyElementsOf(
                      LongStream.rangeClosed(1, RECORDS / KEYS).boxed().toList()));
      passed = true;
    } finally {
      if (!passed) {
        LogTails.print(dir);
      }
    }
  }

  /** Produces the input, {@link #RECORDS} records round the keys, about 2,000 a second. */
  private static void produce(String bootstrap, AtomicReference<Exception> failed) {
    Properties config = new Properties();
    config.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    config.put(ProducerConfig.ACKS_CONFIG, "all");
    config.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
    try (KafkaProducer<String, String> producer =
        new KafkaProducer<>(config, new StringSerializer(), new StringSerializer())) {
      for (int i = 0; i < RECORDS; i++) {
        producer.send(new ProducerRecord<>(INPUT, "k" + i % KEYS, String.valueOf(i)));
        if (i % RECORDS_PER_MS == 0) {
          Thread.sleep(1);
        }
      }
      producer.flush();
    } catch (Exception e) {
      failed.set(e);
    }
  }

  private static KafkaConsumer<String, Long> outputConsumer(String bootstrap) {
    Properties config = new Properties();
    config.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    config.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    config.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
    KafkaConsumer<String, Long> consumer =
        new KafkaConsumer<>(config, new StringDeserializer(), new LongDeserializer());
    List<TopicPartition> partitions =
        IntStream.range(0, PARTITIONS).mapToObj(p -> new TopicPartition(OUTPUT, p)).toList();
    consumer.assign(partitions);
    consumer.seekToBeginning(partitions);
    return consumer;
  }

  /** Reads committed output into {@code counts} until it holds at least {@code records}. */
  private static void awaitCounts(
      KafkaConsumer<String, Long> output, Map<String, List<Long>> counts, int records) {
    await()
        .atMost(Duration.ofMinutes(3))
        .pollInterval(Duration.ofMillis(10))
        .until(
            () -> {
              output.poll(Duration.ofMillis(200)).forEach(r -> add(counts, r));
              return counts.values().stream().mapToInt(List::size).sum() >= records;
            });
  }

  private static void add(Map<String, List<Long>> counts, ConsumerRecord<String, Long> record) {
    counts.computeIfAbsent(record.key(), k -> new ArrayList<>()).add(record.value());
  }

  /** Starts instance {@code n} of the application, in the state directory all instances share. */
  private Process start(String bootstrap, int n) throws IOException {
    List<String> command =
        List.of(
            Path.of(System.getProperty("java.home"), "bin", "java").toString(),
            "-Xmx256m",
            "-cp",
            System.getProperty("java.class.path"),
            StreamsCountApp.class.getName(),
            bootstrap,
            "counts",
            INPUT,
            OUTPUT,
            dir.resolve("streams-state").toString());
    return new ProcessBuilder(command)
        .redirectErrorStream(true)
        .redirectOutput(dir.resolve("streams-" + n + ".log").toFile())
        .start();
  }

  /** Kills {@code app} with SIGKILL mid-stream, waits until it is gone, and starts instance n. */
  private Process killAndStart(Process app, Map<String, List<Long>> counts, String bootstrap, int n)
      throws Exception {
    assertThat(app.isAlive()).as("instance %d still running when killed", n - 1).isTrue();
    assertThat(counts.values().stream().mapToInt(List::size).sum())
        .as("counts when instance %d is killed: mid-stream", n - 1)
        .isLessThan(RECORDS);
    app.destroyForcibly();
    app.onExit().get(30, TimeUnit.SECONDS);
    return start(bootstrap, n);
  }
}
