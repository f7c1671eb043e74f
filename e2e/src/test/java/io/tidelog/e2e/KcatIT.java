package io.tidelog.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.record.CompressionType;
import org.apache.kafka.common.record.FileRecords;
import org.apache.kafka.common.record.RecordBatch;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** kcat (librdkafka, Debian's package) against a broker started by {@code bin/tidelog dev up}. */
class KcatIT {
  @TempDir static Path dir;
  static DevCluster cluster;
  static String bootstrap;

  @BeforeAll
  static void start() throws Exception {
    cluster = new DevCluster(dir.resolve("cluster"));
    bootstrap = cluster.up();
  }

  @AfterAll
  static void stop() throws Exception {
    cluster.close();
  }

  private static DevCluster.Result kcat(Path stdin, String... args) throws Exception {
    List<String> command = new ArrayList<>(List.of("kcat", "-b", bootstrap));
    command.addAll(List.of(args));
    return DevCluster.exec(command, stdin);
  }

  private static DevCluster.Result kcat(String... args) throws Exception {
    return kcat(Path.of("/dev/null"), args);
  }

  @Test
  void listsTheBrokerAndTopics() throws Exception {
    DevCluster.Result result = kcat("-L");

    assertThat(result.exitCode()).isZero();
    assertThat(result.output()).contains("1 brokers:").contains("broker 0 at " + bootstrap);
  }

  @Test
  void balancedConsumerReadsEveryPartitionOnceAndResumesFromItsGroupsCommit() throws Exception {
    // Given 60 keyed lines over the 3 partitions of a topic
    try (Admin admin =
        Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
      admin.createTopics(List.of(new NewTopic("kcat-group", 3, (short) 1))).all().get();
    }
    List<String> lines = new ArrayList<>();
    for (int i = 0; i < 60; i++) {
      lines.add("key-" + i + ":value-" + i);
    }
    Path input = Files.write(dir.resolve("keyed.txt"), lines);
    assertThat(kcat(input, "-P", "-t", "kcat-group", "-K:").exitCode()).isZero();
    String[] balanced = {
      "-G",
      "kcat-readers",
      "-X",
      "auto.offset.reset=earliest",
      "kcat-group",
      "-e",
      "-q",
      "-f",
      "%p %s\n"
    };

    // When a balanced consumer of a new group reads to the end, it gets all 3 partitions' lines
    DevCluster.Result first = kcat(balanced);
    assertThat(first.exitCode()).as(first.errors()).isZero();
    List<String> read = first.output().lines().toList();
    assertThat(read.stream().map(l -> l.substring(l.indexOf(' ') + 1)))
        .containsExactlyInAnyOrderElementsOf(
            lines.stream().map(l -> l.substring(l.indexOf(':') + 1)).toList());
    assertThat(read.stream().map(l -> l.substring(0, l.indexOf(' '))).distinct())
        .containsExactlyInAnyOrder("0", "1", "2");

    // Then the group committed on exit: the next run reads nothing, and then only what is new
    assertThat(kcat(balanced).output()).isEmpty();
    Path more = Files.write(dir.resolve("more.txt"), List.of("late-1:new-1", "late-2:new-2"));
    assertThat(kcat(more, "-P", "-t", "kcat-group", "-K:").exitCode()).isZero();
    assertThat(kcat(balanced).output().lines().map(l -> l.substring(l.indexOf(' ') + 1)))
        .containsExactlyInAnyOrder("new-1", "new-2");
  }

  @Test
  void producesSnappyBatchesAndConsumesFromTheBeginningAndTheTail() throws Exception {
    // Given 100 compressible lines produced with snappy to an auto-created topic (librdkafka
    // sends a batch uncompressed when compression would not make it smaller)
    List<String> lines = new ArrayList<>();
    for (int i = 0; i < 100; i++) {
      lines.add("line-" + i + "-" + "tide".repeat(50));
    }
    Path input = Files.write(dir.resolve("input.txt"), lines);
    DevCluster.Result produced =
        kcat(input, "-P", "-t", "kcat-snappy", "-z", "snappy", "-X", "linger.ms=50");
    assertThat(produced.exitCode()).as("kcat: %s", produced.errors()).isZero();

    // Then the batches on disk really are snappy-compressed
    Path segment = cluster.dataDir().resolve("kcat-snappy-0/00000000000000000000.log");
    List<CompressionType> codecs = new ArrayList<>();
    try (FileRecords records = FileRecords.open(segment.toFile(), false)) {
      for (RecordBatch batch : records.batches()) {
        codecs.add(batch.compressionType());
      }
    }
    assertThat(codecs).isNotEmpty().containsOnly(CompressionType.SNAPPY);

    // and consumers read them back from the beginning, and the last 10
    DevCluster.Result all = kcat("-C", "-t", "kcat-snappy", "-o", "beginning", "-e", "-q");
    assertThat(all.exitCode()).isZero();
    assertThat(all.output().lines().toList()).isEqualTo(lines);
    DevCluster.Result tail = kcat("-C", "-t", "kcat-snappy", "-o", "-10", "-e", "-q");
    assertThat(tail.output().lines().toList()).isEqualTo(lines.subList(90, 100));
  }

  @Test
  void transactionalProducerCommitsAndAKilledOnesTransactionIsAbortedAtItsTimeout()
      throws Exception {
    try (Admin admin =
        Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
      admin.createTopics(List.of(new NewTopic("kcat-txn", 1, (short) 1))).all().get();
    }
    String[] readCommitted = {
      "-C", "-t", "kcat-txn", "-o", "beginning", "-e", "-q", "-X", "isolation.level=read_committed"
    };
    // Given 50 lines that kcat produced in one transaction, committed when its input ended
    List<String> committed = new ArrayList<>();
    for (int i = 0; i < 50; i++) {
      committed.add("committed-" + i);
    }
    DevCluster.Result produced =
        kcat(
            Files.write(dir.resolve("committed.txt"), committed),
            "-P",
            "-t",
            "kcat-txn",
            "-X",
            "transactional.id=kcat-committer");
    assertThat(produced.exitCode()).as("kcat: %s", produced.errors()).isZero();
    assertThat(kcat(readCommitted).output().lines().toList()).isEqualTo(committed);

    // When another kcat, whose input has not ended, has sent 1,000 lines in its transaction (it
    // sends what it has read once it holds more than a line) and is killed with SIGKILL
    List<String> command =
        List.of(
            "kcat",
            "-b",
            bootstrap,
            "-P",
            "-t",
            "kcat-txn",
            "-X",
            "transactional.id=kcat-killed",
            "-X",
            "transaction.timeout.ms=5000",
            "-X",
            "message.timeout.ms=5000");
    Process open = new ProcessBuilder(command).redirectErrorStream(true).start();
    try {
      byte[] line = ("open-" + "x".repeat(1_000) + "\n").getBytes(StandardCharsets.US_ASCII);
      for (int i = 0; i < 2_000; i++) {
        open.getOutputStream().write(line);
      }
      open.getOutputStream().flush();
      String[] readUncommitted = readCommitted.clone();
      readUncommitted[readUncommitted.length - 1] = "isolation.level=read_uncommitted";
      await()
          .atMost(Duration.ofSeconds(60))
          .until(() -> kcat(readUncommitted).output().lines().count() >= 1_050);
    } finally {
      open.destroyForcibly();
      assertThat(open.waitFor(60, TimeUnit.SECONDS)).as("kcat killed").isTrue();
    }

    // Then read_committed consumers see none of them, before the coordinator aborts the
    // transaction at its timeout (5 s) and after, when what was committed later shows
    assertThat(kcat(readCommitted).output().lines().toList()).isEqualTo(committed);
    DevCluster.Result later =
        kcat(
            Files.write(dir.resolve("later.txt"), List.of("later")),
            "-P",
            "-t",
            "kcat-txn",
            "-X",
            "transactional.id=kcat-committer");
    assertThat(later.exitCode()).as("kcat: %s", later.errors()).isZero();
    List<String> expected = new ArrayList<>(committed);
    expected.add("later");
    await()
        .atMost(Duration.ofSeconds(90))
        .until(() -> kcat(readCommitted).output().lines().toList(), expected::equals);
  }
}
