package io.tidelog.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
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
import java.util.HashMap;
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
      // Given the objects of a Cluster spread over zones, whose etcd is the dev cluster's,
      Cluster resource =
          Resources.cluster(
              "kafka",
              "dev",
              """
              replicas: 2
              storage: {size: 1Gi}
              jvm: {heap: 256m}
              config: {num.partitions: '3'}
              rack: {topologyKey: topology.kubernetes.io/zone}
              etcd: {endpoints: ['http://127.0.0.1:%d']}
              """
                  .formatted(cluster.port + 2000));
      resource.getMetadata().setUid("8d2f");
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
      Path podinfo = Files.createDirectories(dir.resolve("podinfo"));
      Files.writeString(
          etc.resolve("server.properties"), config.getData().get("server.properties"));
      List<String> command =
          container.getCommand().stream()
              .map(
                  part ->
                      part.replace("/etc/tidelog", etc.toString())
                          .replace("/etc/podinfo", podinfo.toString())
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
        // then it waits for its rack, which the operator writes on the pod once it is scheduled
        // (the downward API's file of the pod's annotations),
        await()
            .pollDelay(Duration.ofSeconds(2))
            .atMost(Duration.ofSeconds(3))
            .until(broker::isAlive);
        assertThat(nodes(admin)).doesNotContainKey(1);
        Files.writeString(
            podinfo.resolve("annotations"),
            "kubectl.kubernetes.io/default-container=\"broker\"\n"
                + ClusterModel.RACK_ANNOTATION
                + "=\"east\"\n");

        // and then broker 1 joins the cluster in rack "east", and its readiness probe answers.
        await().atMost(Duration.ofSeconds(60)).until(() -> nodes(admin).containsKey(1));
        assertThat(nodes(admin).get(1).rack()).isEqualTo("east");
        String probe = container.getReadinessProbe().getHttpGet().getPath();
        URI readiness = URI.create("http://127.0.0.1:" + httpPort + probe);
        await()
            .atMost(Duration.ofSeconds(30))
            .ignoreExceptions()
            .until(
                () ->
                    HttpClient.newHttpClient()
                            .send(
                                HttpRequest.newBuilder(readiness).build(),
                                HttpResponse.BodyHandlers.ofString())
                            .statusCode()
                        == 200);
      } finally {
        broker.destroy();
        broker.waitFor(60, TimeUnit.SECONDS);
      }
    }
  }

  private static Map<Integer, Node> nodes(Admin admin) throws Exception {
    Map<Integer, Node> nodes = new HashMap<>();
    admin.describeCluster().nodes().get(10, TimeUnit.SECONDS).forEach(n -> nodes.put(n.id(), n));
    return nodes;
  }

  private static int freePort() throws Exception {
    try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return socket.getLocalPort();
    }
  }
}
