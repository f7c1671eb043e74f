package io.tidelog.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Flink's exactly-once Kafka sink, unmodified: a Flink 2.2 job with Flink's Kafka connector
 * (e2e/flink-job, run in a process of its own on Flink's local MiniCluster) copies {@value #LINES}
 * lines from one topic to another with {@code DeliveryGuarantee.EXACTLY_ONCE}: each of its two
 * writers writes in a transaction that Flink commits when a checkpoint completes. One copying task
 * fails once mid-stream, after a checkpoint; Flink restarts the job from that checkpoint, aborts
 * the transactions the failed attempt left open and commits those the checkpoint holds. Read with
 * {@code read_committed}, the output must hold every line once. The same job with {@code
 * AT_LEAST_ONCE} shows that the failure does replay lines: duplicates.
 */
class FlinkExactlyOnceIT {
  private static final int LINES = 40_000;
  private static final int FAIL_AFTER = 10_000;

  @TempDir Path dir;

  @Test
  void aFailedAndRestartedJobCommitsEveryLineOnceAndAtLeastOnceDuplicates() throws Exception {
    boolean passed = false;
    try (DevCluster cluster = new DevCluster(dir)) {
      String bootstrap = cluster.up();
      try (Admin admin =
          Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
        admin
            .createTopics(
                List.of(
                    new NewTopic("lines", 2, (short) 1),
                    new NewTopic("exactly-once", 2, (short) 1),
                    new NewTopic("at-least-once", 2, (short) 1)))
            .all()
            .get(30, TimeUnit.SECONDS);
      }
      produceLines(bootstrap);
      String classpath = buildJob();

      run(classpath, bootstrap, "exactly-once", "EXACTLY_ONCE");
      List<String> exactlyOnce = readCommitted(bootstrap, "exactly-once");
      assertThat(exactlyOnce)
          .as("the lines, read_committed")
          .containsExactlyInAnyOrderElementsOf(
              IntStream.range(0, LINES).mapToObj(String::valueOf).toList());

      run(classpath, bootstrap, "at-least-once", "AT_LEAST_ONCE");
      List<String> atLeastOnce = readCommitted(bootstrap, "at-least-once");
      assertThat(atLeastOnce)
          .as("lines copied at least once: the failure replayed some")
          .hasSizeGreaterThan(LINES)
          .containsAll(IntStream.range(0, LINES).mapToObj(String::valueOf).toList());
      System.out.printf(
          "Flink copies of %d lines, failing once: exactly-once %d, at-least-once %d%n",
          LINES, exactlyOnce.size(), atLeastOnce.size());
      passed = true;
    } finally {
      if (!passed) {
        LogTails.print(dir);
      }
    }
  }

  private static void produceLines(String bootstrap) throws Exception {
    try (KafkaProducer<String, String> producer =
        new KafkaProducer<>(
            Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
                bootstrap,
                ProducerConfig.ACKS_CONFIG,
                "all"),
            new StringSerializer(),
            new StringSerializer())) {
      for (int i = 0; i < LINES; i++) {
        producer.send(new ProducerRecord<>("lines", String.valueOf(i)));
      }
      producer.flush();
    }
  }

  /** Builds the job (Maven resolves Flink on the first run) and returns its classpath. */
  private String buildJob() throws Exception {
    Path project = DevCluster.REPO.resolve("e2e/flink-job");
    Process build =
        new ProcessBuilder(
                "mvn",
                "-B",
                "-q",
                "-f",
                project.resolve("pom.xml").toString(),
                "package",
                "dependency:build-classpath",
                "-Dmdep.outputFile=target/classpath.txt")
            .directory(DevCluster.REPO.toFile())
            .redirectErrorStream(true)
            .redirectOutput(dir.resolve("flink-job-build.log").toFile())
            .start();
    assertThat(build.waitFor(10, TimeUnit.MINUTES)).as("the job's build finished").isTrue();
    assertThat(build.exitValue()).as("the job's build (flink-job-build.log)").isZero();
    return Files.readString(project.resolve("target/classpath.txt"))
        + ":"
        + project.resolve("target/tidelog-e2e-flink-job-0.1.0-SNAPSHOT.jar");
  }

  /** Runs the job from "lines" to {@code output}; requires that it failed once and finished. */
  private void run(String classpath, String bootstrap, String output, String guarantee)
      throws Exception {
    Path log = dir.resolve("flink-" + output + ".log");
    Process job =
        new ProcessBuilder(
                "java",
                "-Xmx1g",
                "-Dlog4j2.configurationFile="
                    + DevCluster.REPO.resolve("bench/apache-kafka/log4j2.properties"),
                "-cp",
                classpath,
                "io.tidelog.flink.CopyJob",
                bootstrap,
                "lines",
                output,
                guarantee,
                String.valueOf(FAIL_AFTER))
            .redirectErrorStream(true)
            .redirectOutput(log.toFile())
            .start();
    try {
      assertThat(job.waitFor(5, TimeUnit.MINUTES)).as("the %s job finished", output).isTrue();
    } finally {
      job.destroyForcibly();
    }
    assertThat(job.exitValue()).as("the %s job's exit status (%s)", output, log).isZero();
    assertThat(Files.readString(log))
        .as("the %s job failed once and was restarted", output)
        .contains("failing once, after");
  }

  /** Every record of {@code topic} that is committed, read from the start to its end. */
  private static List<String> readCommitted(String bootstrap, String topic) throws IOException {
    Properties config = new Properties();
    config.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    config.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    config.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
    List<String> seen = new ArrayList<>();
    try (KafkaConsumer<String, String> consumer =
        new KafkaConsumer<>(config, new StringDeserializer(), new StringDeserializer())) {
      List<TopicPartition> partitions =
          List.of(new TopicPartition(topic, 0), new TopicPartition(topic, 1));
      consumer.assign(partitions);
      consumer.seekToBeginning(partitions);
      Map<TopicPartition, Long> ends = consumer.endOffsets(partitions);
      await()
          .atMost(Duration.ofMinutes(2))
          .until(
              () -> {
                consumer.poll(Duration.ofMillis(200)).forEach(r -> seen.add(r.value()));
                return partitions.stream().allMatch(p -> consumer.position(p) >= ends.get(p));
              });
    }
    return seen;
  }
}
