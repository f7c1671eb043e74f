package io.tidelog.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
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
}
