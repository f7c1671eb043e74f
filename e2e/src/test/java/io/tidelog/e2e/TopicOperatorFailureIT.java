package io.tidelog.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.tidelog.operator.api.Topic;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The Topic reconciler while its cluster is down: conditions, release, and recovery. */
class TopicOperatorFailureIT {
  private static final Duration RELEASE_AFTER = Duration.ofSeconds(5);

  @TempDir Path dir;

  @Test
  void aDownClusterGivesAConditionReleasesDeletedTopicsAndRecovers() throws Exception {
    try (DevCluster cluster = new DevCluster(dir);
        MockKubernetes kubernetes = MockKubernetes.topicOperator(RELEASE_AFTER)) {
      String bootstrap = cluster.up();
      kubernetes.cluster("kafka", "dev", bootstrap);
      try (Admin admin =
          Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
        TopicFixture topics = new TopicFixture(kubernetes.client, admin, "kafka");
        // Given a Ready topic, and then the cluster's only broker killed,
        Topic before = topics.awaitReady(topics.apply("before", "partitions: 1"));
        cluster.kill();

        // when a new Topic is applied, it says the cluster is unreachable;
        topics.apply("during", "partitions: 2");
        assertThat(topics.awaitCondition("during", "ClusterUnreachable").getMessage())
            .startsWith("spec.clusterRef: ");

        // when a Topic is deleted, it is released after RELEASE_AFTER instead of hanging;
        kubernetes.client.resource(before).delete();
        await().atMost(TopicFixture.READY_WITHIN).until(() -> topics.get("before") == null);

        // when the broker is back, the new Topic's topic is created, and the released one's
        // topic was left in place.
        assertThat(cluster.run("start", "0").exitCode()).isZero();
        topics.awaitReady("during", Duration.ofSeconds(90));
        assertThat(topics.describe("during").partitions()).hasSize(2);
        assertThat(admin.listTopics().names().get()).contains("before");
      }
    }
  }
}
