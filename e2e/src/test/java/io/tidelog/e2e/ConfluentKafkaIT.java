package io.tidelog.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * confluent-kafka-python (Debian's python3-confluent-kafka on librdkafka) against a broker started
 * by {@code bin/tidelog dev up}.
 */
class ConfluentKafkaIT {
  @TempDir Path dir;

  @Test
  void transactionsCommitAbortAndCarryTheConsumersOffsets() throws Exception {
    try (DevCluster cluster = new DevCluster(dir)) {
      String bootstrap = cluster.up();
      DevCluster.Result result =
          DevCluster.exec(
              List.of(
                  "/usr/bin/python3",
                  DevCluster.REPO
                      .resolve("e2e/src/test/python/confluent_kafka_transactions.py")
                      .toString(),
                  bootstrap));
      assertThat(result.exitCode()).as(result.errors()).isZero();
      assertThat(result.output()).contains("ok 10");
    }
  }
}
