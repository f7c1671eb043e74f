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

  /** Runs a script of {@code e2e/src/test/python} against a new dev cluster; returns its output. */
  private String runAgainstDevCluster(String script) throws Exception {
    try (DevCluster cluster = new DevCluster(dir)) {
      String bootstrap = cluster.up();
      Path path = DevCluster.REPO.resolve("e2e/src/test/python/" + script);

      DevCluster.Result result =
          DevCluster.exec(List.of("/usr/bin/python3", path.toString(), bootstrap));

      assertThat(result.exitCode()).as(result.errors()).isZero();
      return result.output();
    }
  }

  @Test
  void kafkaPythonCreatesProducesAndConsumes() throws Exception {
    assertThat(runAgainstDevCluster("kafka_python_roundtrip.py")).contains("ok 100");
  }

  @Test
  void kafkaPythonConsumersShareATopicInAGroupAndResumeFromItsCommit() throws Exception {
    assertThat(runAgainstDevCluster("kafka_python_group.py")).contains("ok group 100 8");
  }
}
