package io.tidelog.e2e;

import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.tidelog.operator.api.Cluster;
import io.tidelog.operator.api.Conditions;
import java.time.Duration;
import java.util.function.UnaryOperator;

/** The Cluster resource "dev" in namespace "kafka" of the mock API, over a {@link DevCluster}. */
final class DevClusterResource {
  static final String NS = "kafka";
  static final String NAME = "dev";

  private DevClusterResource() {}

  static Cluster get(KubernetesClient client) {
    return client.resources(Cluster.class).inNamespace(NS).withName(NAME).get();
  }

  /** Changes the Cluster, retrying past conflicts with the operator's concurrent writes. */
  static void edit(KubernetesClient client, UnaryOperator<Cluster> change) {
    Resources.edit(client.resources(Cluster.class).inNamespace(NS).withName(NAME), change);
  }

  /** Waits until the Cluster is Ready for its current generation. */
  static void awaitReady(KubernetesClient client, Duration within) {
    await()
        .atMost(within)
        .pollInterval(Duration.ofMillis(250))
        .until(
            () -> {
              Cluster c = get(client);
              return c.getStatus() != null
                  && c.getMetadata().getGeneration().equals(c.getStatus().observedGeneration)
                  && Conditions.isTrue(c.getStatus().conditions, Conditions.READY);
            });
  }
}
