package io.tidelog.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.github.dockerjava.api.DockerClient;
import com.marcnuri.helm.Helm;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.tidelog.operator.api.Cluster;
import io.tidelog.operator.api.Conditions;
import io.tidelog.operator.api.Topic;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.testcontainers.DockerClientFactory;
import org.testcontainers.junit.jupiter.Container;
import org.testcontainers.junit.jupiter.Testcontainers;
import org.testcontainers.k3s.K3sContainer;
import org.testcontainers.utility.DockerImageName;
import org.testcontainers.utility.MountableFile;

/**
 * The whole path on a real Kubernetes, k3s in Docker: the images built from the Dockerfile, the
 * operator installed with the Helm chart (so its RBAC is the chart's, enforced), a Cluster with a
 * managed etcd, a Topic, and kcat producing and consuming through the bootstrap Service. Skipped,
 * and reported as skipped, where no Docker engine runs on its default socket; it pulls {@code
 * rancher/k3s} and the images' public base, which no registry here serves, so it has not run here
 * ({@code ContainerClusterIT} and {@code OperatorImageIT} run the images without a registry).
 */
@Testcontainers(disabledWithoutDocker = true)
class K3sIT {
  private static final String NS = "default";
  private static final String TAG = "0.1.0-e2e";

  @Container
  static final K3sContainer K3S =
      new K3sContainer(DockerImageName.parse("rancher/k3s:v1.31.4-k3s1"));

  @TempDir Path dir;

  @Test
  void aClusterAndATopicServeKafkaClientsThroughTheBootstrapService() throws Exception {
    importImage("broker");
    importImage("operator");
    try (KubernetesClient client =
        new KubernetesClientBuilder()
            .withConfig(Config.fromKubeconfig(K3S.getKubeConfigYaml()))
            .build()) {
      // Given the operator installed with the Helm chart (its CRDs, its least-privilege RBAC, its
      // restricted Deployment), waiting until the Deployment is ready,
      new Helm(HelmChart.DIR)
          .install()
          .withName(HelmChart.RELEASE)
          .withNamespace(HelmChart.NAMESPACE)
          .createNamespace()
          .withKubeConfigContents(K3S.getKubeConfigYaml())
          .set("image.tag", TAG)
          .set("image.pullPolicy", "Never")
          .waitReady()
          .withTimeout(300)
          .call();

      // when a Cluster of one broker with a managed etcd, and a Topic, are applied,
      client
          .resource(
              Resources.cluster(
                  NS,
                  "dev",
                  """
                  replicas: 1
                  version: %s
                  storage: {size: 1Gi}
                  jvm: {heap: 256m}
                  etcd: {replicas: 1}
                  """
                      .formatted(TAG)))
          .create();
      await()
          .atMost(Duration.ofMinutes(5))
          .pollInterval(Duration.ofSeconds(2))
          .until(
              () -> {
                Cluster c = client.resources(Cluster.class).inNamespace(NS).withName("dev").get();
                return c.getStatus() != null
                    && Conditions.isTrue(c.getStatus().conditions, Conditions.READY);
              });
      client
          .resource(Resources.topic(NS, "orders", "partitions: 3\nreplicas: 1", NS, "dev"))
          .create();
      await()
          .atMost(Duration.ofMinutes(2))
          .pollInterval(Duration.ofSeconds(1))
          .until(
              () -> {
                Topic t = client.resources(Topic.class).inNamespace(NS).withName("orders").get();
                return t.getStatus() != null
                    && Conditions.isTrue(t.getStatus().conditions, Conditions.READY);
              });

      // then kcat, in a pod, produces to the topic and reads the record back through the bootstrap
      // Service.
      String bootstrap = "dev-bootstrap." + NS + ".svc:9092";
      Pod kcat =
          client
              .resource(
                  new PodBuilder()
                      .withNewMetadata()
                      .withName("kcat")
                      .withNamespace(NS)
                      .endMetadata()
                      .withNewSpec()
                      .withRestartPolicy("Never")
                      .addNewContainer()
                      .withName("kcat")
                      .withImage("edenhill/kcat:1.7.1")
                      .withCommand(
                          "sh",
                          "-c",
                          "echo hello-tidelog | kcat -b %s -t orders -P && kcat -b %s -t orders -C -c 1 -e -q"
                              .formatted(bootstrap, bootstrap))
                      .endContainer()
                      .endSpec()
                      .build())
              .create();
      await()
          .atMost(Duration.ofMinutes(3))
          .pollInterval(Duration.ofSeconds(1))
          .until(
              () -> {
                String phase = client.resource(kcat).get().getStatus().getPhase();
                return "Succeeded".equals(phase) || "Failed".equals(phase);
              });
      assertThat(client.resource(kcat).get().getStatus().getPhase()).isEqualTo("Succeeded");
      assertThat(client.pods().inNamespace(NS).withName("kcat").getLog()).contains("hello-tidelog");

      // When the Cluster is deleted, Kubernetes' garbage collector removes what it owned.
      client.resources(Cluster.class).inNamespace(NS).withName("dev").delete();
      await()
          .atMost(Duration.ofMinutes(2))
          .pollInterval(Duration.ofSeconds(1))
          .until(
              () ->
                  client.apps().statefulSets().inNamespace(NS).withName("dev-broker").get() == null
                      && client.apps().statefulSets().inNamespace(NS).withName("dev-etcd").get()
                          == null
                      && client.services().inNamespace(NS).withName("dev-bootstrap").get() == null);
    }
  }

  /** Builds tidelog/NAME from the Dockerfile and loads it into k3s's containerd. */
  private void importImage(String name) throws Exception {
    DockerClient docker = DockerClientFactory.instance().client();
    String image = "tidelog/" + name + ":" + TAG;
    docker
        .buildImageCmd()
        .withBaseDirectory(DevCluster.REPO.toFile())
        .withDockerfile(DevCluster.REPO.resolve("Dockerfile").toFile())
        .withBuildArg("MODULE", name)
        .withTags(Set.of(image))
        .start()
        .awaitImageId();
    Path tar = dir.resolve(name + ".tar");
    try (InputStream saved = docker.saveImageCmd(image).exec()) {
      Files.copy(saved, tar, StandardCopyOption.REPLACE_EXISTING);
    }
    K3S.copyFileToContainer(MountableFile.forHostPath(tar), "/tmp/" + name + ".tar");
    var imported =
        K3S.execInContainer("ctr", "-n", "k8s.io", "images", "import", "/tmp/" + name + ".tar");
    assertThat(imported.getExitCode()).as(imported.getStderr()).isZero();
  }
}
