package io.tidelog.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.tidelog.operator.api.Cluster;
import io.tidelog.operator.cluster.ClusterModel;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.common.Node;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The broker container that the operator describes (its command, its environment, the
 * server.properties of its ConfigMap, and the image's entry point {@code broker/docker/broker})
 * runs a real broker here, with only its network addresses and data directory moved to loopback and
 * a temporary directory.
 */
class BrokerPodCommandIT {
  @TempDir Path dir;

  @Test
  void thePodCommandStartsABrokerWhoseIdIsThePodOrdinalAndWhichJoinsTheCluster() throws Exception {
    try (DevCluster cluster = new DevCluster(dir.resolve("cluster"))) {
      String bootstrap = cluster.up();
      // Given the objects of a Cluster whose etcd is the dev cluster's,
      Cluster resource =
          Serialization.unmarshal(
              """
          apiVersion: tidelog.io/v1alpha1
          kind: Cluster
          metadata: {name: dev, namespace: kafka, uid: 8d2f}
          spec:
            replicas: 2
            storage: {size: 1Gi}
            jvm: {heap: 256m}
            config: {num.partitions: '3'}
            etcd: {endpoints: ['http://127.0.0.1:%d']}
          """
                  .formatted(cluster.port + 2000),
              Cluster.class);
      var objects = ClusterModel.desired(resource);
      ConfigMap config =
          objects.stream()
              .filter(ConfigMap.class::isInstance)
              .map(ConfigMap.class::cast)
              .findFirst()
              .orElseThrow();
      StatefulSet brokers =
          objects.stream()
              .filter(StatefulSet.class::isInstance)
              .map(StatefulSet.class::cast)
              .findFirst()
              .orElseThrow();
      Container container = brokers.getSpec().getTemplate().getSpec().getContainers().get(0);

      // when its container command runs as pod dev-broker-1,
      Path etc = Files.createDirectories(dir.resolve("etc"));
      Files.writeString(
          etc.resolve("server.properties"), config.getData().get("server.properties"));
      List<String> command =
          container.getCommand().stream()
              .map(
                  part ->
                      part.replace("/etc/tidelog", etc.toString())
                          .replace(
                              "/opt/tidelog/bin/broker",
                              DevCluster.REPO.resolve("broker/docker/broker").toString()))
              .toList();
      int kafkaPort = freePort();
      int httpPort = freePort();
      ProcessBuilder pod =
          new ProcessBuilder(command)
              .redirectErrorStream(true)
              .redirectOutput(dir.resolve("broker-1.log").toFile());
      Map<String, String> env = pod.environment();
      for (EnvVar var : container.getEnv()) {
        if (var.getValue() != null) {
          env.put(var.getName(), var.getValue());
        }
      }
      env.put("POD_NAME", "dev-broker-1"); // the downward API
      env.put(
          "CLASSPATH",
          DevCluster.REPO.resolve("broker/target/classes")
              + ":"
              + Files.readString(DevCluster.REPO.resolve("broker/target/runtime-classpath.txt"))
                  .strip());
      env.put("TIDELOG_LISTENERS", "PLAINTEXT://127.0.0.1:" + kafkaPort);
      env.put("TIDELOG_ADVERTISED_LISTENERS", "PLAINTEXT://127.0.0.1:" + kafkaPort);
      env.put("TIDELOG_TIDELOG_HTTP_PORT", String.valueOf(httpPort));
      env.put("TIDELOG_LOG_DIRS", dir.resolve("data").toString());
      assertThat(env.get("JAVA_OPTS")).isEqualTo("-Xms256m -Xmx256m");
      Process broker = pod.start();
      try (Admin admin =
          Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
        // then broker 1 joins the cluster, and its readiness probe answers.
        await()
            .atMost(Duration.ofSeconds(60))
            .until(
                () ->
                    admin.describeCluster().nodes().get(10, TimeUnit.SECONDS).stream()
                        .map(Node::id)
                        .toList()
                        .contains(1));
        String probe = container.getReadinessProbe().getHttpGet().getPath();
        HttpResponse<String> ready =
            HttpClient.newHttpClient()
                .send(
                    HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + httpPort + probe))
                        .build(),
                    HttpResponse.BodyHandlers.ofString());
        assertThat(ready.statusCode()).isEqualTo(200);
      } finally {
        broker.destroy();
        broker.waitFor(60, TimeUnit.SECONDS);
      }
    }
  }

  private static int freePort() throws Exception {
    try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return socket.getLocalPort();
    }
  }
}
