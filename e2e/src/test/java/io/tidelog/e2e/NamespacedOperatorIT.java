package io.tidelog.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.tidelog.operator.OperatorSettings.Controller;
import io.tidelog.operator.api.Cluster;
import io.tidelog.operator.api.Topic;
import io.tidelog.operator.cluster.ClusterModel;
import java.time.Duration;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * A namespaced install (the chart's {@code watchNamespaces}): the operator serves the Clusters and
 * Topics of its namespaces, leaves the others alone, and every request it makes passes the Roles
 * the chart renders for that install, with no ClusterRole but the one that reads nodes.
 */
class NamespacedOperatorIT {
  private static final Duration WITHIN = Duration.ofSeconds(30);

  @Test
  void anOperatorWatchingOneNamespaceServesItOnlyWithinItsRoles() throws Exception {
    try (MockKubernetes kubernetes =
        new MockKubernetes(
            MockKubernetes.settings(
                    Set.of(Controller.CLUSTER, Controller.TOPIC),
                    Duration.ofSeconds(5),
                    ClusterModel::bootstrapServers)
                .watching(Set.of("team-a")))) {
      KubernetesClient client = kubernetes.client;
      String spec = "replicas: 1\nstorage: {size: 1Gi}\netcd: {endpoints: ['http://etcd:2379']}";
      // Given a Cluster in a namespace the operator does not watch, then one in the one it does,
      client.resource(Resources.cluster("team-b", "other", spec)).create();
      client.resource(Resources.cluster("team-a", "mine", spec)).create();
      client
          .resource(Resources.topic("team-a", "orders", "partitions: 1", "team-a", "mine"))
          .create();

      // then the watched one gets its brokers and a status, and its Topic a status too,
      await()
          .atMost(WITHIN)
          .until(
              () ->
                  client.apps().statefulSets().inNamespace("team-a").withName("mine-broker").get()
                      != null);
      await()
          .atMost(WITHIN)
          .until(
              () -> client.resources(Cluster.class).inNamespace("team-a").withName("mine").get(),
              c -> c.getStatus() != null && c.getStatus().bootstrapServers != null);
      await()
          .atMost(WITHIN)
          .until(
              () -> client.resources(Topic.class).inNamespace("team-a").withName("orders").get(),
              t -> t.getStatus() != null && !t.getStatus().conditions.isEmpty());

      // and the other is untouched: no objects, no status.
      assertThat(client.apps().statefulSets().inNamespace("team-b").list().getItems()).isEmpty();
      assertThat(client.configMaps().inNamespace("team-b").list().getItems()).isEmpty();
      assertThat(
              client
                  .resources(Cluster.class)
                  .inNamespace("team-b")
                  .withName("other")
                  .get()
                  .getStatus())
          .isNull();
    } // closing checks every operator request against the namespaced chart's Roles
  }
}
