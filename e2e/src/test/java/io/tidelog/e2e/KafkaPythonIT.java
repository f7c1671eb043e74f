package io.tidelog.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * kafka-python (Debian's python3-kafka, imported with /usr/bin/python3) against a broker started by
 * {@code bin/tidelog dev up}.
 */
class KafkaPythonIT {
  @TempDir Path dir;

  @Test
  void kafkaPythonCreatesProducesAndConsumes() throws Exception {
    try (DevCluster cluster = new DevCluster(dir)) {
      String bootstrap = cluster.up();
      Path script = DevCluster.REPO.resolve("e2e/src/test/python/kafka_python_roundtrip.py");

      DevCluster.Result result =
          DevCluster.exec(List.of("/usr/bin/python3", script.toString(), bootstrap));

      assertThat(result.exitCode()).as(result.errors()).isZero();
      assertThat(result.output()).contains("ok 100");
    }
  }

  @Test
  void kafkaPythonConsumersShareATopicInAGroupAndResumeFromItsCommit() throws Exception {
    try (DevCluster cluster = new DevCluster(dir)) {
      String bootstrap = cluster.up();
      Path script = DevCluster.REPO.resolve("e2e/src/test/python/kafka_python_group.py");

      DevCluster.Result result =
          DevCluster.exec(List.of("/usr/bin/python3", script.toString(), bootstrap));

      assertThat(result.exitCode()).as(result.errors()).isZero();
      assertThat(result.output()).contains("ok group 100 8");
    }
  }
}
