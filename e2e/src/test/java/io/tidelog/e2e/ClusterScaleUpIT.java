package io.tidelog.e2e;

import static io.tidelog.e2e.DevClusterResource.NS;
import static io.tidelog.e2e.DevClusterResource.awaitReady;
import static io.tidelog.e2e.DevClusterResource.edit;
import static io.tidelog.e2e.DevClusterResource.get;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.tidelog.e2e.faults.CheckedWorkload;
import io.tidelog.operator.OperatorSettings.Controller;
import io.tidelog.operator.api.ClusterSpec;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ListTopicsOptions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.Node;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A Cluster scaled up from three brokers to five by the Cluster reconciler (fabric8's mock API
 * server; {@link BrokerPods} plays the StatefulSet controller and starts the new brokers): with
 * {@code spec.rebalance: manual} a new broker gets nothing; with {@code auto} the replicas spread
 * evenly over all five, by reassignment, while the fault suite's clients produce with acks=all and
 * read; the checker then finds nothing lost or duplicated.
 */
class ClusterScaleUpIT {
  private static final String TOPIC = CheckedWorkload.TOPIC;
  private static final int PARTITIONS = 6;

  @TempDir Path dir;

  @Test
  void newBrokersGetTheirShareOfReplicasUnlessRebalancingIsManual() throws Exception {
    try (DevCluster cluster = new DevCluster(dir, 5)) {
      String bootstrap = cluster.up();
      // brokers 3 and 4 are the scale-up's: stopped before any topic exists
      cluster.stop(3);
      cluster.stop(4);
      try (Admin admin =
              Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap));
          MockKubernetes kubernetes =
              new MockKubernetes(
                  Set.of(Controller.CLUSTER), Duration.ofSeconds(5), c -> bootstrap)) {
        KubernetesClient client = kubernetes.client;
        await()
            .atMost(Duration.ofSeconds(30))
            .until(() -> admin.describeCluster().nodes().get(10, TimeUnit.SECONDS).size() == 3);
        admin
            .createTopics(
                List.of(
                    new NewTopic(TOPIC, PARTITIONS, (short) 3)
                        .configs(Map.of("min.insync.replicas", "2"))))
            .all()
            .get(30, TimeUnit.SECONDS);

        // Given a Ready Cluster of three brokers that balances by hand, under load,
        client
            .resource(
                Resources.cluster(
                    NS,
                    DevClusterResource.NAME,
                    "replicas: 3\nrebalance: manual\nstorage: {size: 1Gi}"
                        + "\netcd: {endpoints: ['http://127.0.0.1:2379']}"))
            .create();
        try (BrokerPods pods = new BrokerPods(client, NS, "dev-broker", cluster);
            CheckedWorkload workload =
                CheckedWorkload.start(bootstrap, PARTITIONS, Duration.ofMinutes(8))) {
          awaitReady(client, Duration.ofSeconds(90));
          await().atMost(Duration.ofSeconds(60)).until(() -> workload.acknowledged() > 200);
          assertThat(loads(admin).keySet()).containsExactly(0, 1, 2);

          // when it grows to four, the new broker joins and gets nothing;
          edit(
              client,
              c -> {
                c.getSpec().replicas = 4;
                return c;
              });
          awaitReady(client, Duration.ofMinutes(2));
          assertThat(admin.describeCluster().nodes().get(10, TimeUnit.SECONDS)).hasSize(4);
          assertThat(loads(admin)).doesNotContainKey(3);

          // when it grows to five and balances itself, the replicas spread over all five: no
          // broker holds more than one replica more than another, and an Event says so.
          edit(
              client,
              c -> {
                c.getSpec().replicas = 5;
                c.getSpec().rebalance = ClusterSpec.Rebalance.AUTO;
                return c;
              });
          awaitReady(client, Duration.ofMinutes(3));
          Map<Integer, Integer> loads = loads(admin);
          assertThat(loads.keySet()).containsExactly(0, 1, 2, 3, 4);
          assertThat(
                  loads.values().stream().mapToInt(Integer::intValue).max().orElseThrow()
                      - loads.values().stream().mapToInt(Integer::intValue).min().orElseThrow())
              .as("replicas per broker: %s", loads)
              .isLessThanOrEqualTo(1);
          assertThat(get(client).getStatus().throttledTopics).isNull();
          assertThat(
                  client.v1().events().inNamespace(NS).list().getItems().stream()
                      .map(e -> e.getReason() + ": " + e.getMessage()))
              .anyMatch(e -> e.startsWith("Rebalance: Moving "));
          assertThat(pods.restarts()).isEmpty();

          // Every acknowledged write is read, once and in order.
          CheckedWorkload.Verdict verdict = workload.finish();
          assertThat(verdict.acknowledged()).isGreaterThan(200);
          assertThat(verdict.anomalies()).as("anomalies:%n%s", verdict.summary()).isZero();
        }
      }
    }
  }

  /** The replicas each broker holds, of every topic, internal ones too. */
  private static Map<Integer, Integer> loads(Admin admin) throws Exception {
    Set<String> names =
        admin
            .listTopics(new ListTopicsOptions().listInternal(true))
            .names()
            .get(30, TimeUnit.SECONDS);
    Collection<TopicDescription> topics =
        admin.describeTopics(names).allTopicNames().get(30, TimeUnit.SECONDS).values();
    Map<Integer, Integer> loads = new TreeMap<>();
    topics.stream()
        .flatMap(t -> t.partitions().stream())
        .flatMap(p -> p.replicas().stream())
        .map(Node::id)
        .forEach(id -> loads.merge(id, 1, Integer::sum));
    return loads;
  }
}
