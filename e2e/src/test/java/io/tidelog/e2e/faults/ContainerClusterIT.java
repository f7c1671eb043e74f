package io.tidelog.e2e.faults;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.github.dockerjava.api.DockerClient;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.tidelog.e2e.DockerEngine;
import io.tidelog.e2e.DockerKubelet;
import io.tidelog.e2e.MockKubernetes;
import io.tidelog.e2e.Resources;
import io.tidelog.e2e.faults.History.Fault;
import io.tidelog.e2e.faults.History.Send;
import io.tidelog.operator.OperatorSettings;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A Cluster of three brokers and its managed etcd, run as Docker containers of the images built
 * from the repository's Dockerfile, exactly as the operator made them for the mock API: each pod's
 * command, environment, ConfigMap and Secrets (played by {@link DockerKubelet}), on a Docker
 * network where each is reached by the DNS name its StatefulSet gives it. kafka-clients on the host
 * reach the brokers' advertised names through published ports: this JVM resolves those names from
 * {@code src/test/resources/pod-dns-hosts} ({@code -Djdk.net.hosts.file}, set by the pom), broker
 * {@code i} at 127.0.1.1{@code i}. Under the fault suite's workload (acks=all, three replicas,
 * {@code min.insync.replicas=2}), one broker container is killed with SIGKILL and started again,
 * and the fault suite's checker finds nothing lost.
 */
class ContainerClusterIT {
  private static final String NS = "kafka";
  private static final int BROKERS = 3;
  private static final int PARTITIONS = 6;

  @TempDir Path dir;

  @Test
  void aKilledBrokerContainerLosesNoAcknowledgedRecord() throws Exception {
    assumeTrue(
        System.getProperty("jdk.net.hosts.file") != null,
        "runs in the e2e module's containers execution, which resolves the pods' names");
    DockerEngine.Connection engine = DockerEngine.connect();
    assumeTrue(engine.client() != null, engine.unavailable());
    DockerClient docker = engine.client();
    long buildStart = System.nanoTime();
    String brokerImage = DockerEngine.buildImage(docker, "broker");
    String etcdImage = DockerEngine.buildEtcdImage(docker, dir);
    System.out.printf(
        "ContainerClusterIT: built %s (%d MB) and %s in %.1f s%n",
        brokerImage,
        DockerEngine.size(docker, brokerImage) >> 20,
        etcdImage,
        (System.nanoTime() - buildStart) / 1e9);

    History history = new History();
    String bootstrap =
        IntStream.range(0, BROKERS)
            .mapToObj(i -> "dev-broker-" + i + ".dev-brokers." + NS + ".svc:9092")
            .collect(Collectors.joining(","));
    try (MockKubernetes kubernetes =
        new MockKubernetes(
            MockKubernetes.settings(
                Set.of(OperatorSettings.Controller.CLUSTER),
                Duration.ofMinutes(5),
                c -> bootstrap))) {
      KubernetesClient client = kubernetes.client;
      // Given the operator's objects for a Cluster of three brokers and a managed etcd,
      client
          .resource(
              Resources.cluster(
                  NS,
                  "dev",
                  """
                  replicas: %d
                  storage: {size: 1Gi}
                  jvm: {heap: 256m}
                  listeners:
                    - {name: plain, port: 9092}
                  etcd: {replicas: 1}
                  """
                      .formatted(BROKERS)))
          .create();
      StatefulSet brokers = statefulSet(client, "dev-broker");
      StatefulSet etcd = statefulSet(client, "dev-etcd");
      await()
          .atMost(Duration.ofSeconds(60))
          .until(
              () ->
                  client.configMaps().inNamespace(NS).withName("dev-config").get() != null
                      && client.secrets().inNamespace(NS).withName("dev-broker-certs").get() != null
                      && client.secrets().inNamespace(NS).withName("dev-etcd-certs").get() != null);
      // when their pods run as containers on a network of their own,
      try (DockerKubelet kubelet =
          new DockerKubelet(
              docker,
              client,
              NS,
              "tidelog-e2e-" + ProcessHandle.current().pid(),
              "172.31.251.0/24",
              dir)) {
        try {
          kubelet.run(
              etcd.getSpec().getTemplate(),
              "dev-etcd-0",
              etcd.getSpec().getServiceName(),
              new DockerKubelet.Placement(etcdImage, Map.of(), Map.of(), false));
          for (int i = 0; i < BROKERS; i++) {
            kubelet.run(
                brokers.getSpec().getTemplate(),
                "dev-broker-" + i,
                brokers.getSpec().getServiceName(),
                new DockerKubelet.Placement(
                    brokerImage, Map.of("127.0.1.1" + i + ":9092", 9092), Map.of(), false));
          }
          // then clients on the host see the three brokers at their pods' names,
          List<String> log = new ArrayList<>();
          try (Admin admin =
              Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
            await()
                .atMost(Duration.ofMinutes(3))
                .ignoreExceptions()
                .until(() -> admin.describeCluster().nodes().get().size() == BROKERS);
            assertThat(admin.describeCluster().nodes().get())
                .extracting(org.apache.kafka.common.Node::host)
                .allMatch(host -> host.endsWith(".dev-brokers." + NS + ".svc"));
            // each broker is the image's entry point, as user 1000, exiting on OutOfMemoryError,
            // in an image of the runtime and the jars alone,
            assertThat(
                    kubelet.exec(
                        "dev-broker-0", "sh", "-c", "id -u; tr '\\0' ' ' </proc/1/cmdline"))
                .startsWith("1000\n")
                .contains("java -XX:+ExitOnOutOfMemoryError")
                .contains("io.tidelog.broker.Broker --config /etc/tidelog/server.properties");
            assertThat(kubelet.exec("dev-broker-0", "sh", "-c", "ls /opt/tidelog; command -v mvn"))
                .isEqualTo("bin\nlib\n");
            // and a broker killed with SIGKILL under acks=all, and started again, loses nothing.
            try (Workload workload =
                new Workload(new WorkloadClients(bootstrap, Map.of()), history, PARTITIONS)) {
              workload.createTopic();
              workload.awaitInSync();
              workload.start(2, 50, 1, 1, Duration.ofMinutes(10));
              Thread.sleep(5_000);
              for (int round = 0; round < 2; round++) {
                String victim = "dev-broker-" + (round + 1);
                long start = System.nanoTime();
                kubelet.kill(victim);
                // down until the cluster sees it gone (its registration's lease expired), so that
                // its partitions' leadership and ISRs move without it
                await()
                    .atMost(Duration.ofMinutes(1))
                    .ignoreExceptions()
                    .until(() -> admin.describeCluster().nodes().get().size() == BROKERS - 1);
                kubelet.start(victim);
                history.add(new Fault("container-kill", victim, start, System.nanoTime()));
                Duration recovery = workload.awaitInSync();
                log.add(
                    "killed and started "
                        + victim
                        + ", in sync "
                        + recovery.toMillis() / 1e3
                        + " s after");
                Thread.sleep(3_000);
              }
              workload.stopProducers();
              workload.awaitInSync();
              workload.drain(Duration.ofSeconds(60), 1);
              workload.finalRead(Duration.ofSeconds(60));
            } catch (Exception | AssertionError e) {
              for (int i = 0; i < BROKERS; i++) {
                System.out.println(
                    "dev-broker-" + i + " wrote:\n" + kubelet.logs("dev-broker-" + i));
              }
              throw e;
            }
          }
          Checker.Result result = Checker.check(history);
          List<Send> sends = history.all(Send.class);
          System.out.printf(
              "ContainerClusterIT: %d sends, %d acknowledged; %s; anomalies: %d%n%s%n",
              sends.size(),
              sends.stream().filter(Send::acked).count(),
              String.join("; ", log),
              result.count(),
              result.summary());
          if (result.count() > 0) {
            // the evidence outlives the run's temporary directory, as the fault suite's does
            Path kept =
                Files.createDirectories(Path.of("target", "faults"))
                    .resolve("container-" + System.currentTimeMillis() + "-history.json");
            history.write(kept);
            System.out.println("ContainerClusterIT: the history is in " + kept.toAbsolutePath());
          }
          assertThat(sends.stream().filter(Send::acked).count()).isPositive();
          assertThat(result.count()).as("anomalies:%n%s", result.summary()).isZero();
        } catch (Exception | AssertionError e) {
          System.out.println("dev-etcd-0 wrote:\n" + kubelet.logs("dev-etcd-0"));
          throw e;
        }
      }
    }
  }

  private static StatefulSet statefulSet(KubernetesClient client, String name) {
    return await()
        .atMost(Duration.ofSeconds(60))
        .until(
            () -> client.apps().statefulSets().inNamespace(NS).withName(name).get(),
            s -> s != null);
  }
}
