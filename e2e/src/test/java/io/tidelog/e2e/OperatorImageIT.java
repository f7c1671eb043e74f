package io.tidelog.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.github.dockerjava.api.DockerClient;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.tidelog.operator.api.Cluster;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The operator image, built from the repository's Dockerfile, run as the Helm chart's Deployment
 * runs it (its pod template played by {@link DockerKubelet}: the image's entry point, the chart's
 * environment, a read-only root, no capabilities) against the mock API server, which it reaches as
 * a pod reaches its API server; it takes its Lease and reconciles a Cluster, and its health and
 * metrics ports answer from inside the container.
 */
class OperatorImageIT {
  @TempDir Path dir;

  @Test
  void theOperatorImageReconcilesAClusterAndAnswersItsProbesInItsContainer() throws Exception {
    DockerEngine.Connection engine = DockerEngine.connect();
    assumeTrue(engine.client() != null, engine.unavailable());
    DockerClient docker = engine.client();
    String image = DockerEngine.buildImage(docker, "operator");
    System.out.printf(
        "OperatorImageIT: built %s (%d MB)%n", image, DockerEngine.size(docker, image) >> 20);
    Deployment deployment = HelmChart.one(HelmChart.render(Map.of()), Deployment.class);
    int httpPort = LoopbackPorts.free();
    try (MockKubernetes kubernetes = new MockKubernetes(null);
        DockerKubelet kubelet =
            new DockerKubelet(
                docker,
                kubernetes.client,
                HelmChart.NAMESPACE,
                "tidelog-e2e-operator-" + ProcessHandle.current().pid(),
                "172.31.252.0/24",
                dir)) {
      KubernetesClient client = kubernetes.client;
      URI api = URI.create(client.getMasterUrl().toString());
      // Given the operator's pod as the chart makes it, reaching the API server as a pod would
      // (here on the host's network, where the mock listens),
      kubelet.run(
          deployment.getSpec().getTemplate(),
          "tidelog-operator-0",
          null,
          new DockerKubelet.Placement(
              image,
              Map.of(),
              Map.of(
                  "KUBERNETES_MASTER",
                  "http://127.0.0.1:" + api.getPort(),
                  "KUBERNETES_AUTH_TRYKUBECONFIG",
                  "false",
                  "KUBERNETES_AUTH_TRYSERVICEACCOUNT",
                  "false",
                  "TIDELOG_OPERATOR_HTTP_PORT",
                  String.valueOf(httpPort)),
              true));
      try {
        // when a Cluster is created, the operator in the container reconciles it,
        client
            .resource(
                Resources.cluster(
                    "kafka",
                    "dev",
                    "replicas: 1\nstorage: {size: 1Gi}\netcd: {endpoints: ['http://etcd:2379']}"))
            .create();
        await()
            .atMost(Duration.ofMinutes(2))
            .until(
                () ->
                    client.apps().statefulSets().inNamespace("kafka").withName("dev-broker").get()
                        != null);
        await()
            .atMost(Duration.ofMinutes(1))
            .until(
                () -> {
                  Cluster c =
                      client.resources(Cluster.class).inNamespace("kafka").withName("dev").get();
                  return c.getStatus() != null && c.getStatus().bootstrapServers != null;
                });
        // and its probes and metrics answer inside its container.
        assertThat(get(kubelet, httpPort, "/healthz")).startsWith("HTTP/1.1 200");
        await()
            .atMost(Duration.ofMinutes(1))
            .until(() -> get(kubelet, httpPort, "/readyz").startsWith("HTTP/1.1 200"));
        assertThat(get(kubelet, httpPort, "/metrics"))
            .containsPattern("operator_sdk_reconciliations_started_total\\{.*kind=\"Cluster\"");
        assertThat(kubelet.running("tidelog-operator-0")).isTrue();
        assertThat(
                kubelet.exec(
                    "tidelog-operator-0", "sh", "-c", "id -u; tr '\\0' ' ' </proc/1/cmdline"))
            .startsWith("1000\n")
            .contains("java -XX:+ExitOnOutOfMemoryError")
            .contains("io.tidelog.operator.TidelogOperator");
      } catch (Exception | AssertionError e) {
        System.out.println("the operator wrote:\n" + kubelet.logs("tidelog-operator-0"));
        throw e;
      }
    }
  }

  /** An HTTP GET from inside the operator's container, with bash's /dev/tcp. */
  private static String get(DockerKubelet kubelet, int port, String path) throws Exception {
    return kubelet.exec(
        "tidelog-operator-0",
        "bash",
        "-c",
        "exec 3<>/dev/tcp/127.0.0.1/"
            + port
            + " && printf 'GET "
            + path
            + " HTTP/1.0\\r\\n\\r\\n' >&3 && cat <&3");
  }
}
