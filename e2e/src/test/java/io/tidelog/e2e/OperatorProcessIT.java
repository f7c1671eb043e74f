package io.tidelog.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.tidelog.operator.OperatorSettings;
import io.tidelog.operator.OperatorSettings.Controller;
import io.tidelog.operator.TidelogOperator;
import io.tidelog.operator.api.Cluster;
import io.tidelog.operator.brokers.BrokerAccess;
import io.tidelog.operator.cluster.ClusterModel;
import io.tidelog.operator.cluster.ClusterReconciler;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The operator process: two replicas with Lease-based leader election, of which only the leader
 * reconciles and the other takes over when it goes; probes; Prometheus metrics.
 */
class OperatorProcessIT {
  private static final String NS = "tidelog-system";
  private static final HttpClient HTTP = HttpClient.newHttpClient();

  @Test
  void onlyTheLeaderReconcilesAndTheOtherTakesOverWhenItStops() throws Exception {
    try (MockKubernetes kubernetes = new MockKubernetes(settings("first"))) {
      KubernetesClient client = kubernetes.client;
      // Given two operators with leader election, the first of which leads,
      await().atMost(Duration.ofSeconds(30)).until(() -> "first".equals(holder(client)));
      TidelogOperator second = kubernetes.startOperator(settings("second"), "second");

      // when a Cluster is created, the leader reconciles it, and both answer their probes;
      create(client, "one");
      await().atMost(Duration.ofSeconds(30)).until(() -> hasStatus(client, "one"));
      assertThat(get(kubernetes.operator.httpPort(), "/healthz").statusCode()).isEqualTo(200);
      assertThat(get(kubernetes.operator.httpPort(), "/readyz").statusCode()).isEqualTo(200);
      assertThat(get(second.httpPort(), "/healthz").statusCode()).isEqualTo(200);
      assertThat("second").isNotEqualTo(holder(client));
      // the other wrote nothing but its bids for the Lease, and counts no reconciliation
      assertThat(kubernetes.writesBy("second"))
          .allMatch(write -> write.contains("/apis/coordination.k8s.io/v1/"));
      assertThat(get(second.httpPort(), "/metrics").body())
          .doesNotContainPattern(
              "operator_sdk_reconciliations_started_total\\{[^}]*kind=\"Cluster\"[^}]*\\} [1-9]");

      // and its metrics count the reconciliations of Clusters;
      String metrics = get(kubernetes.operator.httpPort(), "/metrics").body();
      assertThat(metrics)
          .containsPattern("operator_sdk_reconciliations_started_total\\{.*kind=\"Cluster\"");
      assertThat(metrics)
          .containsPattern(
              "operator_sdk_controllers_execution_reconcile_seconds_count\\{.*controller=\"cluster\"");

      // when the leader stops, the second takes the Lease and reconciles the next Cluster.
      kubernetes.operator.close();
      await().atMost(Duration.ofSeconds(60)).until(() -> "second".equals(holder(client)));
      create(client, "two");
      await().atMost(Duration.ofSeconds(30)).until(() -> hasStatus(client, "two"));
      // (the check above sees its writes once it leads: its status of the Cluster, say)
      assertThat(kubernetes.writesBy("second"))
          .anyMatch(write -> write.contains("/clusters/two/status"));
      assertThat(get(second.httpPort(), "/metrics").body())
          .containsPattern(
              "operator_sdk_reconciliations_started_total\\{[^}]*kind=\"Cluster\"[^}]*\\} [1-9]");
    }
  }

  @Test
  void countsResourcesPerReadyStatusAndTheStuckOnes() throws Exception {
    Duration stuckAfter = Duration.ofSeconds(5);
    try (MockKubernetes kubernetes =
        new MockKubernetes(
            new OperatorSettings(
                Set.of(Controller.CLUSTER),
                null,
                "test",
                false,
                0,
                Duration.ofSeconds(5),
                stuckAfter,
                (c, k) -> BrokerAccess.plaintext(ClusterModel.bootstrapServers(c)),
                Set.of(),
                Duration.ofSeconds(3)))) {
      KubernetesClient client = kubernetes.client;
      int port = kubernetes.operator.httpPort();
      // Given a Cluster whose brokers never become Ready (the mock runs no pods), and a paused one,
      create(client, "waiting");
      Cluster paused =
          Resources.cluster(
              "kafka",
              "paused",
              "replicas: 1\nstorage: {size: 1Gi}\netcd: {endpoints: ['http://etcd:2379']}");
      paused
          .getMetadata()
          .setAnnotations(java.util.Map.of(ClusterReconciler.PAUSE_ANNOTATION, "true"));
      client.resource(paused).create();
      long createdNanos = System.nanoTime();
      await().atMost(Duration.ofSeconds(30)).until(() -> hasStatus(client, "waiting"));

      // both count as not Ready, and neither is stuck yet;
      await()
          .atMost(Duration.ofSeconds(30))
          .untilAsserted(
              () -> {
                String metrics = get(port, "/metrics").body();
                assertThat(
                        gauge(
                                metrics,
                                "tidelog_operator_resources",
                                "kind=\"Cluster\",ready=\"false\"")
                            + gauge(
                                metrics,
                                "tidelog_operator_resources",
                                "kind=\"Cluster\",ready=\"unknown\""))
                    .isEqualTo(2);
                assertThat(
                        gauge(
                            metrics,
                            "tidelog_operator_resources",
                            "kind=\"Cluster\",ready=\"true\""))
                    .isZero();
              });
      if (System.nanoTime() - createdNanos < stuckAfter.toNanos() - 1_000_000_000L) {
        assertThat(
                gauge(
                    get(port, "/metrics").body(),
                    "tidelog_operator_stuck_resources",
                    "kind=\"Cluster\""))
            .isZero();
      }
      // once it has been so for longer than stuckAfter, the unpaused one is stuck.
      await()
          .atMost(Duration.ofSeconds(30))
          .untilAsserted(
              () ->
                  assertThat(
                          gauge(
                              get(port, "/metrics").body(),
                              "tidelog_operator_stuck_resources",
                              "kind=\"Cluster\""))
                      .isEqualTo(1));
    }
  }

  /** The value of {@code name{labels}} in a scrape, where {@code labels} begins the label set. */
  private static double gauge(String metrics, String name, String labels) {
    java.util.regex.Matcher m =
        java.util.regex.Pattern.compile(
                "^" + java.util.regex.Pattern.quote(name + "{" + labels) + "[^}]*\\} (\\S+)$",
                java.util.regex.Pattern.MULTILINE)
            .matcher(metrics);
    assertThat(m.find()).as(name + "{" + labels + "} in\n" + metrics).isTrue();
    return Double.parseDouble(m.group(1));
  }

  private static OperatorSettings settings(String identity) {
    return new OperatorSettings(
        Set.of(Controller.CLUSTER),
        NS,
        identity,
        false, // in-process: stopping the leader must not exit the test's JVM
        0,
        Duration.ofSeconds(5),
        Duration.ofMinutes(10),
        (c, k) -> BrokerAccess.plaintext(ClusterModel.bootstrapServers(c)),
        Set.of(),
        Duration.ofSeconds(3));
  }

  private static String holder(KubernetesClient client) {
    Lease lease = client.leases().inNamespace(NS).withName("tidelog-operator").get();
    return lease == null ? null : lease.getSpec().getHolderIdentity();
  }

  private static void create(KubernetesClient client, String name) {
    client
        .resource(
            Resources.cluster(
                "kafka",
                name,
                "replicas: 1\nstorage: {size: 1Gi}\netcd: {endpoints: ['http://etcd:2379']}"))
        .create();
  }

  private static boolean hasStatus(KubernetesClient client, String name) {
    Cluster cluster = client.resources(Cluster.class).inNamespace("kafka").withName(name).get();
    return cluster.getStatus() != null && cluster.getStatus().bootstrapServers != null;
  }

  private static HttpResponse<String> get(int port, String path) throws Exception {
    return HTTP.send(
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).build(),
        HttpResponse.BodyHandlers.ofString());
  }
}
