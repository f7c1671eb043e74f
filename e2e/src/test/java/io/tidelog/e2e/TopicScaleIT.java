package io.tidelog.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.tidelog.operator.api.Conditions;
import io.tidelog.operator.api.Topic;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
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
        MockKubernetes kubernetes = new MockKubernetes(null)) {
      String bootstrap = cluster.up();
      kubernetes.cluster("kafka", "dev", bootstrap);
      try (Admin admin =
          Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
        TopicFixture topics = new TopicFixture(kubernetes.client, admin, "kafka");
        // Given TOPICS Topic resources, created (8 writers) while no operator runs,
        long startNs = System.nanoTime();
        ExecutorService writers = Executors.newFixedThreadPool(8);
        try {
          List<Future<?>> created = new ArrayList<>();
          for (int i = 0; i < TOPICS; i++) {
            Topic topic =
                Resources.topic(
                    "kafka", "scale-" + i, "partitions: 1\nreplicas: 1", "kafka", "dev");
            created.add(writers.submit(() -> kubernetes.client.resource(topic).create()));
          }
          for (Future<?> done : created) {
            done.get(60, TimeUnit.SECONDS);
          }
        } finally {
          writers.shutdownNow();
        }
        long createdNs = System.nanoTime();

        // when the operator starts,
        kubernetes.startOperator(MockKubernetes.topicSettings(Duration.ofSeconds(5)));

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
            "TopicScaleIT: %d Topics created in the API in %d ms; all Ready %d ms after the"
                + " operator started%n",
            TOPICS,
            TimeUnit.NANOSECONDS.toMillis(createdNs - startNs),
            TimeUnit.NANOSECONDS.toMillis(readyNs - createdNs));
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
