package io.tidelog.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.tidelog.operator.api.Conditions;
import io.tidelog.operator.api.Topic;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Many Topic resources at once against a real cluster. {@code -Dtidelog.scale.topics=N} changes the
 * count (default 1,000); the time it took is printed.
 */
class TopicScaleIT {
  private static final int TOPICS = Integer.getInteger("tidelog.scale.topics", 1_000);

  @TempDir Path dir;

  @Test
  void aThousandTopicsAllBecomeReady() throws Exception {
    try (DevCluster cluster = new DevCluster(dir);
        MockKubernetes kubernetes = MockKubernetes.topicOperator(Duration.ofSeconds(5))) {
      String bootstrap = cluster.up();
      kubernetes.cluster("kafka", "dev", bootstrap);
      try (Admin admin =
          Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
        TopicFixture topics = new TopicFixture(kubernetes.client, admin, "kafka");
        // Given TOPICS Topic resources created as fast as the API takes them,
        long startNs = System.nanoTime();
        for (int i = 0; i < TOPICS; i++) {
          kubernetes
              .client
              .resource(
                  topics.topic(
                      "kafka", "scale-" + i, "partitions: 1\n  replicas: 1", "kafka", "dev"))
              .create();
        }
        long createdNs = System.nanoTime();

        // then every one becomes Ready, and the cluster holds every topic.
        await()
            .atMost(Duration.ofMinutes(3))
            .pollInterval(Duration.ofMillis(200))
            .until(() -> readyCount(kubernetes) == TOPICS);
        long readyNs = System.nanoTime();
        assertThat(admin.listTopics().names().get(30, TimeUnit.SECONDS))
            .filteredOn(name -> name.startsWith("scale-"))
            .hasSize(TOPICS);
        System.out.printf(
            "TopicScaleIT: %d Topics created in the API in %d ms; all Ready %d ms after the first"
                + " was created%n",
            TOPICS,
            TimeUnit.NANOSECONDS.toMillis(createdNs - startNs),
            TimeUnit.NANOSECONDS.toMillis(readyNs - startNs));
      }
    }
  }

  private static long readyCount(MockKubernetes kubernetes) {
    return kubernetes.client.resources(Topic.class).inNamespace("kafka").list().getItems().stream()
        .filter(t -> t.getStatus() != null)
        .filter(t -> Conditions.isTrue(t.getStatus().conditions, Conditions.READY))
        .count();
  }
}
