package io.tidelog.e2e;

import static io.tidelog.e2e.DevClusterResource.awaitReady;
import static io.tidelog.e2e.DevClusterResource.edit;
import static io.tidelog.e2e.DevClusterResource.get;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.tidelog.e2e.faults.CheckedWorkload;
import io.tidelog.operator.OperatorSettings.Controller;
import io.tidelog.operator.api.Cluster;
import io.tidelog.operator.api.Conditions;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.ListTopicsOptions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.config.ConfigResource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A Cluster scaled down from five brokers to three by the Cluster reconciler (fabric8's mock API
 * server; {@link BrokerPods} plays the StatefulSet controller over real brokers): it moves every
 * replica off brokers 3 and 4, throttled by the Cluster's {@code spec.config}, before the
 * StatefulSet shrinks, while the fault suite's clients produce with acks=all and read; the checker
 * then finds nothing lost or duplicated.
 */
class ClusterScaleDownIT {
  private static final String NS = "kafka";
  private static final String TOPIC = CheckedWorkload.TOPIC;
  private static final int PARTITIONS = 6;
  private static final String THROTTLE_KEY = "follower.replication.throttled.rate";

  @TempDir Path dir;

  @Test
  void fiveBrokersBecomeThreeOnceTheTwoRemovedHoldNothingLosingNothing() throws Exception {
    try (DevCluster cluster = new DevCluster(dir, 5)) {
      String bootstrap = cluster.up();
      try (Admin admin =
              Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap));
          MockKubernetes kubernetes =
              new MockKubernetes(
                  Set.of(Controller.CLUSTER), Duration.ofSeconds(5), c -> bootstrap)) {
        KubernetesClient client = kubernetes.client;
        admin
            .createTopics(
                List.of(
                    new NewTopic(TOPIC, PARTITIONS, (short) 3)
                        .configs(Map.of("min.insync.replicas", "2"))))
            .all()
            .get(30, TimeUnit.SECONDS);
        assertThat(brokersHolding(admin)).contains(3, 4);
        CheckedWorkload.fill(bootstrap, PARTITIONS);

        // Given a Cluster of the five brokers, Ready, whose follower throttle is 1 kB/s,
        client
            .resource(
                Resources.cluster(
                    NS,
                    "dev",
                    "replicas: 5\nstorage: {size: 1Gi}\netcd: {endpoints: ['http://127.0.0.1:2379']}"
                        + "\nconfig: {%s: '1000'}".formatted(THROTTLE_KEY)))
            .create();
        try (BrokerPods pods = new BrokerPods(client, NS, "dev-broker", cluster);
            CheckedWorkload workload =
                CheckedWorkload.start(bootstrap, PARTITIONS, Duration.ofMinutes(8))) {
          awaitReady(client, Duration.ofSeconds(90));
          await().atMost(Duration.ofSeconds(60)).until(() -> workload.acknowledged() > 200);

          // when it is scaled down to three,
          edit(
              client,
              c -> {
                c.getSpec().replicas = 3;
                return c;
              });

          // then the operator moves the replicas off brokers 3 and 4 under the throttle, and says
          // so, while the StatefulSet keeps them: the throttle holds the moves back,
          await()
              .atMost(Duration.ofSeconds(60))
              .until(() -> reconciling(client).equals("ScaleDown"));
          await()
              .atMost(Duration.ofSeconds(30))
              .ignoreExceptions()
              .untilAsserted(
                  () ->
                      assertThat(ownConfigs(admin, TOPIC))
                          .containsKeys(
                              "leader.replication.throttled.replicas",
                              "follower.replication.throttled.replicas"));
          Thread.sleep(3_000);
          assertThat(reconciling(client)).isEqualTo("ScaleDown");
          assertThat(statefulSetReplicas(client)).isEqualTo(5);
          assertThat(pods.removed()).isEmpty();
          assertThat(get(client).getStatus().throttledTopics).contains(TOPIC);

          // and once the throttle is lifted, the moves complete, the StatefulSet shrinks, the
          // highest broker first, and the Cluster is Ready with nothing left on the two.
          edit(
              client,
              c -> {
                c.getSpec().config = null;
                return c;
              });
          awaitReady(client, Duration.ofMinutes(3));
          assertThat(statefulSetReplicas(client)).isEqualTo(3);
          assertThat(pods.removed()).containsExactly(4, 3);
          assertThat(pods.restarts()).isEmpty();
          assertThat(brokersHolding(admin)).doesNotContain(3, 4);
          assertThat(get(client).getStatus().throttledTopics).isNull();
          assertThat(ownConfigs(admin, TOPIC))
              .doesNotContainKeys(
                  "leader.replication.throttled.replicas",
                  "follower.replication.throttled.replicas");
          assertThat(events(client))
              .anyMatch(e -> e.startsWith("ScaleDownMoving: Moving "))
              .contains("ScaleDown: Removing brokers [3, 4]: they hold no partition replica");

          // Every acknowledged write is read, once and in order.
          CheckedWorkload.Verdict verdict = workload.finish();
          assertThat(verdict.acknowledged()).isGreaterThan(200);
          assertThat(verdict.anomalies()).as("anomalies:%n%s", verdict.summary()).isZero();
        }
      }
    }
  }

  /** The brokers holding a replica of any partition, internal topics too. */
  private static Set<Integer> brokersHolding(Admin admin) throws Exception {
    Set<String> names =
        admin
            .listTopics(new ListTopicsOptions().listInternal(true))
            .names()
            .get(30, TimeUnit.SECONDS);
    Collection<TopicDescription> topics =
        admin.describeTopics(names).allTopicNames().get(30, TimeUnit.SECONDS).values();
    return new java.util.TreeSet<>(
        topics.stream()
            .flatMap(t -> t.partitions().stream())
            .flatMap(p -> p.replicas().stream())
            .map(Node::id)
            .toList());
  }

  private static Map<String, String> ownConfigs(Admin admin, String topic) throws Exception {
    ConfigResource resource = new ConfigResource(ConfigResource.Type.TOPIC, topic);
    return admin
        .describeConfigs(List.of(resource))
        .all()
        .get(30, TimeUnit.SECONDS)
        .get(resource)
        .entries()
        .stream()
        .filter(e -> e.source() == ConfigEntry.ConfigSource.DYNAMIC_TOPIC_CONFIG)
        .collect(java.util.stream.Collectors.toMap(ConfigEntry::name, ConfigEntry::value));
  }

  private static String reconciling(KubernetesClient client) {
    Cluster c = get(client);
    return c.getStatus() == null
        ? ""
        : Conditions.find(c.getStatus().conditions, Conditions.RECONCILING)
            .map(r -> r.getReason())
            .orElse("");
  }

  private static int statefulSetReplicas(KubernetesClient client) {
    return client
        .apps()
        .statefulSets()
        .inNamespace(NS)
        .withName("dev-broker")
        .get()
        .getSpec()
        .getReplicas();
  }

  private static List<String> events(KubernetesClient client) {
    return client.v1().events().inNamespace(NS).list().getItems().stream()
        .map((Event e) -> e.getReason() + ": " + e.getMessage())
        .toList();
  }
}
