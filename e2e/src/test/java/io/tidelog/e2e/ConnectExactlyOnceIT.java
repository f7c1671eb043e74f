package io.tidelog.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.IntStream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Kafka Connect's exactly-once source support (KIP-618), unmodified: a distributed worker of Apache
 * Kafka 4.1's own jars ({@code bench/kafka-cluster tools ConnectDistributed}) with {@code
 * exactly.once.source.support=enabled} runs Kafka's {@code FileStreamSourceConnector} with {@code
 * exactly.once.support=required}, tailing a file the test appends the lines 0, 1, 2, … to; the
 * connector's offset is its position in the file, committed in the same transaction as the records.
 * The worker is killed with SIGKILL twice mid-stream and a new one takes over from the committed
 * position; read with {@code read_committed}, the topic must hold every line once and in order: a
 * gap would be a lost record, a line twice a duplicate that the killed worker's transaction should
 * have had fenced and aborted.
 */
class ConnectExactlyOnceIT {
  private static final String TOPIC = "connect-eos";
  private static final String CONNECTOR = "file-source";
  private static final int LINES = 40_000;
  private static final int LINES_PER_MS = 1;

  @TempDir Path dir;

  private final HttpClient http = HttpClient.newHttpClient();

  @Test
  void sourceRecordsAreWrittenExactlyOnceThroughTwoWorkerKills() throws Exception {
    boolean passed = false;
    try (DevCluster cluster = new DevCluster(dir)) {
      String bootstrap = cluster.up();
      try (Admin admin =
          Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
        admin
            .createTopics(List.of(new NewTopic(TOPIC, 1, (short) 1)))
            .all()
            .get(30, TimeUnit.SECONDS);
      }
      int restPort = LoopbackPorts.free();
      Path config = workerConfig(bootstrap, restPort);
      Path input = dir.resolve("input.txt");
      Files.createFile(input);
      AtomicReference<Exception> writerFailed = new AtomicReference<>();
      Thread writer = new Thread(() -> write(input, writerFailed), "input-writer");
      List<String> seen = new ArrayList<>();
      try (KafkaConsumer<String, String> output = outputConsumer(bootstrap)) {
        Process worker = start(config, 1);
        try {
          createConnector(restPort, input);
          writer.start();
          awaitRecords(output, seen, 3_000);
          worker = killAndStart(worker, seen, config, 2);
          awaitRecords(output, seen, seen.size() + 8_000);
          worker = killAndStart(worker, seen, config, 3);
          writer.join(TimeUnit.MINUTES.toMillis(3));
          assertThat(writerFailed.get()).as("the input writer's failure").isNull();
          awaitRecords(output, seen, LINES);
          // anything past the lines, written late, would show as a duplicate
          output.poll(Duration.ofSeconds(2)).forEach(r -> seen.add(r.value()));
        } finally {
          kill(worker);
        }
      }
      assertThat(seen)
          .as("the lines, read_committed, in order")
          .containsExactlyElementsOf(IntStream.range(0, LINES).mapToObj(String::valueOf).toList());
      passed = true;
    } finally {
      if (!passed) {
        LogTails.print(dir);
      }
    }
  }

  private Path workerConfig(String bootstrap, int restPort) throws IOException {
    Properties worker = new Properties();
    worker.put("bootstrap.servers", bootstrap);
    worker.put("group.id", "tidelog-connect");
    worker.put("key.converter", "org.apache.kafka.connect.storage.StringConverter");
    worker.put("value.converter", "org.apache.kafka.connect.storage.StringConverter");
    worker.put("config.storage.topic", "connect-configs");
    worker.put("offset.storage.topic", "connect-offsets");
    worker.put("status.storage.topic", "connect-status");
    worker.put("config.storage.replication.factor", "1");
    worker.put("offset.storage.replication.factor", "1");
    worker.put("status.storage.replication.factor", "1");
    worker.put("exactly.once.source.support", "enabled");
    worker.put("listeners", "http://127.0.0.1:" + restPort);
    worker.put("offset.flush.interval.ms", "1000");
    // a worker that takes over gets the killed one's task at once, not after five minutes
    worker.put("scheduled.rebalance.max.delay.ms", "0");
    Path file = dir.resolve("worker.properties");
    try (var out = Files.newBufferedWriter(file)) {
      worker.store(out, "a Kafka Connect worker with exactly-once source support");
    }
    return file;
  }

  /** Starts worker {@code n}: Apache Kafka's ConnectDistributed, from its Maven jars. */
  private Process start(Path config, int n) throws IOException {
    return new ProcessBuilder(
            DevCluster.REPO.resolve("bench/kafka-cluster").toString(),
            "tools",
            "org.apache.kafka.connect.cli.ConnectDistributed",
            config.toString())
        .directory(DevCluster.REPO.toFile())
        .redirectErrorStream(true)
        .redirectOutput(dir.resolve("connect-" + n + ".log").toFile())
        .start();
  }

  /** Appends the lines, about {@link #LINES_PER_MS} a millisecond. */
  private static void write(Path input, AtomicReference<Exception> failed) {
    try (var out = Files.newBufferedWriter(input, StandardOpenOption.APPEND)) {
      for (int i = 0; i < LINES; i++) {
        out.write(i + "\n");
        if (i % (LINES_PER_MS * 10) == 0) {
          out.flush();
          Thread.sleep(10);
        }
      }
    } catch (Exception e) {
      failed.set(e);
    }
  }

  /** Creates the connector once the worker's REST API answers. */
  private void createConnector(int restPort, Path input) {
    String body =
        """
        {"name": "%s", "config": {
          "connector.class": "org.apache.kafka.connect.file.FileStreamSourceConnector",
          "tasks.max": "1",
          "topic": "%s",
          "file": "%s",
          "exactly.once.support": "required",
          "transaction.boundary": "interval",
          "transaction.boundary.interval.ms": "200"}}
        """
            .formatted(CONNECTOR, TOPIC, input);
    HttpRequest create =
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + restPort + "/connectors"))
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(body))
            .timeout(Duration.ofSeconds(30))
            .build();
    await()
        .atMost(Duration.ofMinutes(3))
        .pollInterval(Duration.ofSeconds(1))
        .ignoreExceptions()
        .until(() -> http.send(create, HttpResponse.BodyHandlers.ofString()).statusCode() == 201);
  }

  private static KafkaConsumer<String, String> outputConsumer(String bootstrap) {
    Properties config = new Properties();
    config.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    config.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    config.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
    KafkaConsumer<String, String> consumer =
        new KafkaConsumer<>(config, new StringDeserializer(), new StringDeserializer());
    TopicPartition tp = new TopicPartition(TOPIC, 0);
    consumer.assign(List.of(tp));
    consumer.seekToBeginning(List.of(tp));
    return consumer;
  }

  /** Reads committed records into {@code seen} until it holds at least {@code records}. */
  private static void awaitRecords(
      KafkaConsumer<String, String> output, List<String> seen, int records) {
    await()
        .atMost(Duration.ofMinutes(3))
        .pollInterval(Duration.ofMillis(10))
        .until(
            () -> {
              output.poll(Duration.ofMillis(200)).forEach(r -> seen.add(r.value()));
              return seen.size() >= records;
            });
  }

  /** Kills {@code worker} with SIGKILL mid-stream and starts worker {@code n} in its place. */
  private Process killAndStart(Process worker, List<String> seen, Path config, int n)
      throws Exception {
    assertThat(worker.isAlive()).as("worker %d still running when killed", n - 1).isTrue();
    assertThat(seen).as("lines when worker %d is killed: mid-stream", n - 1).hasSizeLessThan(LINES);
    kill(worker);
    return start(config, n);
  }

  /** SIGKILL to the worker's JVM (a child of the script) and the script, and waits for both. */
  private static void kill(Process worker) throws Exception {
    List<ProcessHandle> all = new ArrayList<>(worker.descendants().toList());
    all.add(worker.toHandle());
    all.forEach(ProcessHandle::destroyForcibly);
    for (ProcessHandle p : all) {
      p.onExit().get(30, TimeUnit.SECONDS);
    }
  }
}
