package io.tidelog.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.marcnuri.helm.Helm;
import com.marcnuri.helm.LintResult;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceAccount;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.rbac.ClusterRole;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBinding;
import io.fabric8.kubernetes.api.model.rbac.PolicyRule;
import io.fabric8.kubernetes.api.model.rbac.Role;
import io.fabric8.kubernetes.api.model.rbac.RoleBinding;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The Helm chart, linted and rendered by the real Helm engine and checked as Kubernetes objects:
 * the CRDs are the generated ones, the operator runs under Pod Security's "restricted" profile, its
 * RBAC grants what the reconcilers do and nothing more, the optional monitoring objects appear when
 * asked for, and {@code values.schema.json} refuses bad values.
 */
class HelmChartTest {
  private static final ObjectMapper JSON = new ObjectMapper();

  @Test
  void lintsWithoutFindingsInStrictMode() {
    LintResult lint = new Helm(HelmChart.DIR).lint().strict().call();
    assertThat(lint.isFailed()).as(String.join("\n", lint.getMessages())).isFalse();
    assertThat(lint.getMessages()).noneMatch(m -> m.contains("[WARNING]") || m.contains("[ERROR]"));
  }

  @Test
  void packagesTheGeneratedCrds(@TempDir Path dir) throws Exception {
    // What a chart repository serves: the packaged chart, with crds/ resolved from the link
    new Helm(HelmChart.DIR).packageIt().withDestination(dir).call();
    Process untar =
        new ProcessBuilder("tar", "-xzf", "tidelog-operator-0.1.0.tgz")
            .directory(dir.toFile())
            .inheritIO()
            .start();
    assertThat(untar.waitFor(60, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
    assertThat(untar.exitValue()).isZero();
    Path shipped = dir.resolve("tidelog-operator/crds");
    List<String> generated;
    try (Stream<Path> files = Files.list(DevCluster.REPO.resolve("crds"))) {
      generated = files.map(f -> f.getFileName().toString()).sorted().toList();
    }
    assertThat(generated)
        .containsExactly(
            "clusters.tidelog.io-v1.yml", "topics.tidelog.io-v1.yml", "users.tidelog.io-v1.yml");
    try (Stream<Path> files = Files.list(shipped)) {
      assertThat(files.map(f -> f.getFileName().toString()).sorted()).isEqualTo(generated);
    }
    for (String crd : generated) {
      assertThat(Files.mismatch(shipped.resolve(crd), DevCluster.REPO.resolve("crds").resolve(crd)))
          .as(crd)
          .isEqualTo(-1);
    }
  }

  @Test
  void runsTheOperatorUnderTheRestrictedPodSecurityProfile() {
    Deployment deployment = HelmChart.one(HelmChart.render(Map.of()), Deployment.class);
    PodSpec pod = deployment.getSpec().getTemplate().getSpec();
    assertThat(pod.getSecurityContext().getRunAsNonRoot()).isTrue();
    assertThat(pod.getSecurityContext().getSeccompProfile().getType()).isEqualTo("RuntimeDefault");
    assertThat(pod.getHostNetwork()).isNotEqualTo(Boolean.TRUE);
    assertThat(pod.getHostPID()).isNotEqualTo(Boolean.TRUE);
    assertThat(pod.getVolumes()).allSatisfy(v -> assertThat(v.getHostPath()).isNull());
    Container operator = pod.getContainers().get(0);
    assertThat(operator.getSecurityContext().getAllowPrivilegeEscalation()).isFalse();
    assertThat(operator.getSecurityContext().getReadOnlyRootFilesystem()).isTrue();
    assertThat(operator.getSecurityContext().getPrivileged()).isFalse();
    assertThat(operator.getSecurityContext().getCapabilities().getDrop()).containsExactly("ALL");
    assertThat(operator.getSecurityContext().getCapabilities().getAdd()).isNullOrEmpty();
    assertThat(operator.getReadinessProbe().getHttpGet().getPath()).isEqualTo("/readyz");
    assertThat(operator.getLivenessProbe().getHttpGet().getPath()).isEqualTo("/healthz");
    assertThat(operator.getResources().getRequests()).containsKeys("cpu", "memory");
    assertThat(operator.getResources().getLimits()).containsKey("memory");
    assertThat(operator.getImage()).isEqualTo("tidelog/operator:0.1.0");
    assertThat(operator.getEnv())
        .anySatisfy(
            e -> {
              assertThat(e.getName()).isEqualTo("TIDELOG_OPERATOR_NAMESPACE");
              assertThat(e.getValueFrom().getFieldRef().getFieldPath())
                  .isEqualTo("metadata.namespace");
            });
    assertThat(deployment.getMetadata().getNamespace()).isEqualTo(HelmChart.NAMESPACE);
  }

  @Test
  void grantsWhatTheReconcilersDoAndNothingMore() {
    List<HasMetadata> objects = HelmChart.render(Map.of());
    ServiceAccount account = HelmChart.one(objects, ServiceAccount.class);
    ClusterRole role = HelmChart.one(objects, ClusterRole.class);
    assertThat(rules(role.getRules()))
        .containsExactlyInAnyOrder(
            "tidelog.io/clusters: get list patch update watch",
            "tidelog.io/topics: get list patch update watch",
            "tidelog.io/users: get list patch update watch",
            "tidelog.io/clusters/status: get patch update",
            "tidelog.io/topics/status: get patch update",
            "tidelog.io/users/status: get patch update",
            "tidelog.io/topics/finalizers: update",
            "tidelog.io/users/finalizers: update",
            "apps/statefulsets: create get list update watch",
            "/services: create get list update watch",
            "/configmaps: create get list update watch",
            "policy/poddisruptionbudgets: create get list update watch",
            "/pods: delete get list patch watch",
            "/persistentvolumeclaims: get list patch",
            "/events: create",
            "/secrets: create get update",
            "networking.k8s.io/networkpolicies: create get update",
            "/nodes: get");
    Role leases = HelmChart.one(objects, Role.class);
    assertThat(leases.getMetadata().getNamespace()).isEqualTo(HelmChart.NAMESPACE);
    assertThat(rules(leases.getRules()))
        .containsExactly("coordination.k8s.io/leases: create get patch update");
    ClusterRoleBinding binding = HelmChart.one(objects, ClusterRoleBinding.class);
    assertThat(binding.getRoleRef().getName()).isEqualTo(role.getMetadata().getName());
    assertThat(binding.getSubjects())
        .singleElement()
        .satisfies(
            s -> {
              assertThat(s.getName()).isEqualTo(account.getMetadata().getName());
              assertThat(s.getNamespace()).isEqualTo(HelmChart.NAMESPACE);
            });
    assertThat(HelmChart.one(objects, RoleBinding.class).getRoleRef().getName())
        .isEqualTo(leases.getMetadata().getName());
    assertThat(
            HelmChart.one(objects, Deployment.class)
                .getSpec()
                .getTemplate()
                .getSpec()
                .getServiceAccountName())
        .isEqualTo(account.getMetadata().getName());
  }

  @Test
  void aNamespacedInstallGrantsTheSameInItsNamespacesAndOnlyNodesClusterWide() {
    // Given watchNamespaces [a, b], then each gets a Role with the reconcilers' namespaced rules,
    // bound to the operator's account,
    List<HasMetadata> objects =
        HelmChart.render(Map.of("watchNamespaces[0]", "a", "watchNamespaces[1]", "b"));
    ServiceAccount account = HelmChart.one(objects, ServiceAccount.class);
    Map<String, Role> roles =
        HelmChart.all(objects, Role.class).stream()
            .filter(r -> !r.getMetadata().getName().endsWith("-leader-election"))
            .collect(Collectors.toMap(r -> r.getMetadata().getNamespace(), r -> r));
    assertThat(roles).containsOnlyKeys("a", "b");
    List<String> clusterWide =
        rules(HelmChart.one(HelmChart.render(Map.of()), ClusterRole.class).getRules());
    for (Role role : roles.values()) {
      assertThat(rules(role.getRules()))
          .containsExactlyInAnyOrderElementsOf(
              clusterWide.stream().filter(r -> !r.equals("/nodes: get")).toList());
    }
    assertThat(HelmChart.all(objects, RoleBinding.class))
        .filteredOn(b -> roles.containsKey(b.getMetadata().getNamespace()))
        .hasSize(2)
        .allSatisfy(
            b -> {
              assertThat(b.getRoleRef().getKind()).isEqualTo("Role");
              assertThat(b.getSubjects().get(0).getName())
                  .isEqualTo(account.getMetadata().getName());
              assertThat(b.getSubjects().get(0).getNamespace()).isEqualTo(HelmChart.NAMESPACE);
            });
    // the one ClusterRole reads nodes only, and without rbac.readNodes there is none,
    assertThat(rules(HelmChart.one(objects, ClusterRole.class).getRules()))
        .containsExactly("/nodes: get");
    List<HasMetadata> noNodes =
        HelmChart.render(Map.of("watchNamespaces[0]", "a", "rbac.readNodes", "false"));
    assertThat(HelmChart.all(noNodes, ClusterRole.class)).isEmpty();
    assertThat(HelmChart.all(noNodes, ClusterRoleBinding.class)).isEmpty();
    // and the operator is told to watch those namespaces.
    Container operator =
        HelmChart.one(objects, Deployment.class)
            .getSpec()
            .getTemplate()
            .getSpec()
            .getContainers()
            .get(0);
    assertThat(operator.getEnv())
        .anySatisfy(
            e -> {
              assertThat(e.getName()).isEqualTo("TIDELOG_OPERATOR_WATCH_NAMESPACES");
              assertThat(e.getValue()).isEqualTo("a,b");
            });
    ChartRbac rbac = ChartRbac.ofChart(Map.of("watchNamespaces[0]", "a"));
    assertThat(rbac.allows(request("GET", "/api/v1/namespaces/a/pods/p-0"))).isTrue();
    assertThat(rbac.allows(request("GET", "/api/v1/namespaces/b/pods/p-0"))).isFalse();
    assertThat(rbac.allows(request("GET", "/apis/tidelog.io/v1alpha1/clusters"))).isFalse();
  }

  /**
   * The authorizer that MockKubernetes applies to every operator request in the e2e tests: it must
   * refuse what the chart does not grant, or those checks could not fail.
   */
  @Test
  void theRbacCheckOfTheMockTestsRefusesWhatTheChartDoesNotGrant() {
    ChartRbac rbac = ChartRbac.ofChart();
    assertThat(rbac.allows(request("GET", "/apis/tidelog.io/v1alpha1/topics?watch=true"))).isTrue();
    assertThat(rbac.allows(request("PATCH", "/apis/tidelog.io/v1alpha1/namespaces/a/topics/t")))
        .isTrue();
    assertThat(rbac.allows(request("DELETE", "/api/v1/namespaces/a/pods/p-0"))).isTrue();
    assertThat(
            rbac.allows(
                request(
                    "PUT",
                    "/apis/coordination.k8s.io/v1/namespaces/"
                        + HelmChart.NAMESPACE
                        + "/leases/tidelog-operator")))
        .isTrue();
    assertThat(rbac.allows(request("GET", "/api/v1/namespaces/a/secrets"))).isFalse();
    assertThat(rbac.allows(request("DELETE", "/apis/apps/v1/namespaces/a/statefulsets/s")))
        .isFalse();
    assertThat(rbac.allows(request("DELETE", "/api/v1/namespaces/a/pods"))).isFalse();
    assertThat(rbac.allows(request("PUT", "/api/v1/namespaces/a/pods/p-0/status"))).isFalse();
    assertThat(rbac.allows(request("GET", "/api/v1/nodes"))).isFalse();
    assertThat(
            rbac.allows(
                request(
                    "PUT", "/apis/coordination.k8s.io/v1/namespaces/apps/leases/tidelog-operator")))
        .isFalse();
  }

  private static ChartRbac.Request request(String method, String path) {
    return new ChartRbac.Request(method, path);
  }

  /** Each rule as {@code group/resource: verbs}, one per resource, verbs sorted. */
  private static List<String> rules(List<PolicyRule> rules) {
    return rules.stream()
        .flatMap(
            r -> {
              assertThat(r.getApiGroups()).hasSize(1).doesNotContain("*");
              assertThat(r.getResourceNames()).isNullOrEmpty();
              assertThat(r.getVerbs()).doesNotContain("*");
              String verbs = r.getVerbs().stream().sorted().collect(Collectors.joining(" "));
              return r.getResources().stream()
                  .map(res -> r.getApiGroups().get(0) + "/" + res + ": " + verbs);
            })
        .toList();
  }

  @Test
  void shipsTheDashboardsForTheGrafanaSidecarAndNoMonitorsByDefault() throws Exception {
    List<HasMetadata> objects = HelmChart.render(Map.of());
    List<ConfigMap> dashboards = HelmChart.all(objects, ConfigMap.class);
    assertThat(dashboards).hasSize(4);
    for (ConfigMap dashboard : dashboards) {
      assertThat(dashboard.getMetadata().getLabels()).containsEntry("grafana_dashboard", "1");
      assertThat(dashboard.getData()).hasSize(1);
      JsonNode json = JSON.readTree(dashboard.getData().values().iterator().next());
      assertThat(json.path("uid").asText()).startsWith("tidelog-");
      assertThat(json.path("panels")).isNotEmpty();
    }
    assertThat(dashboards.stream().map(d -> d.getData().keySet().iterator().next()))
        .containsExactlyInAnyOrder(
            "cluster-overview.json", "topics.json", "consumer-groups.json", "operator.json");
    assertThat(HelmChart.one(objects, Service.class).getSpec().getPorts().get(0).getPort())
        .isEqualTo(8080);
    assertThat(HelmChart.generic(objects, "ServiceMonitor")).isEmpty();
    assertThat(HelmChart.generic(objects, "PodMonitor")).isEmpty();
    assertThat(HelmChart.generic(objects, "PrometheusRule")).isEmpty();
  }

  @Test
  void rendersTheMonitoringObjectsWhenAskedFor() {
    List<HasMetadata> objects =
        HelmChart.render(
            Map.of(
                "metrics.serviceMonitor.enabled",
                true,
                "metrics.serviceMonitor.labels.release",
                "kube-prometheus",
                "metrics.podMonitor.enabled",
                true,
                "metrics.podMonitor.namespaces[0]",
                "kafka",
                "metrics.prometheusRule.enabled",
                true,
                "metrics.prometheusRule.consumerLagThreshold",
                500,
                "grafana.dashboards.namespace",
                "monitoring",
                "replicaCount",
                2,
                "controllers[0]",
                "topic"));
    GenericKubernetesResource serviceMonitor =
        HelmChart.generic(objects, "ServiceMonitor").orElseThrow();
    assertThat(serviceMonitor.getMetadata().getLabels())
        .containsEntry("release", "kube-prometheus");
    GenericKubernetesResource podMonitor = HelmChart.generic(objects, "PodMonitor").orElseThrow();
    assertThat(podMonitor.<List<String>>get("spec", "namespaceSelector", "matchNames"))
        .containsExactly("kafka");
    assertThat(podMonitor.<Map<String, String>>get("spec", "selector", "matchLabels"))
        .containsEntry("app.kubernetes.io/component", "broker");
    assertThat(PrometheusRules.expressions(objects))
        .anyMatch(e -> e.contains("tidelog_consumer_group_topic_lag) > 500"));
    assertThat(HelmChart.all(objects, ConfigMap.class))
        .allSatisfy(c -> assertThat(c.getMetadata().getNamespace()).isEqualTo("monitoring"));
    Deployment deployment = HelmChart.one(objects, Deployment.class);
    assertThat(deployment.getSpec().getReplicas()).isEqualTo(2);
    assertThat(deployment.getSpec().getTemplate().getSpec().getContainers().get(0).getEnv())
        .anySatisfy(
            e -> {
              assertThat(e.getName()).isEqualTo("TIDELOG_OPERATOR_CONTROLLERS");
              assertThat(e.getValue()).isEqualTo("topic");
            });
  }

  @Test
  void alertRulesPassPromtool(@TempDir Path dir) throws Exception {
    List<HasMetadata> objects = HelmChart.render(Map.of("metrics.prometheusRule.enabled", true));
    Path rules = PrometheusRules.writeRuleFile(objects, dir.resolve("tidelog.rules.yml"));
    Set<String> alerts = PrometheusRules.alertNames(objects);
    assertThat(alerts)
        .contains(
            "TidelogBrokerDown",
            "TidelogUnderReplicatedPartitions",
            "TidelogOfflinePartitions",
            "TidelogNoActiveController",
            "TidelogMultipleActiveControllers",
            "TidelogUnderMinIsr",
            "TidelogConsumerLagHigh",
            "TidelogDiskAlmostFull",
            "TidelogTopicNotReady",
            "TidelogClusterNotReady",
            "TidelogReconcileErrors",
            "TidelogStuckReconciliations");
    Promtool.Result result = Promtool.run("check", "rules", rules.toString());
    assertThat(result.exitCode()).as(result.output()).isZero();
    assertThat(result.output()).contains("SUCCESS: " + alerts.size() + " rules found");
  }

  @Test
  void alertsFireAsTheirUnitTestsExpect(@TempDir Path dir) throws Exception {
    PrometheusRules.writeRuleFile(
        HelmChart.render(Map.of("metrics.prometheusRule.enabled", true)),
        dir.resolve("tidelog.rules.yml"));
    Path tests = dir.resolve("tidelog-alerts.test.yml");
    try (InputStream in = HelmChartTest.class.getResourceAsStream("/tidelog-alerts.test.yml")) {
      Files.copy(in, tests);
    }
    Promtool.Result result = Promtool.run("test", "rules", tests.toString());
    assertThat(result.exitCode()).as(result.output()).isZero();
    assertThat(result.output()).contains("SUCCESS");
  }

  @ParameterizedTest(name = "{0}={1}")
  @CsvSource({
    "replicaCount, -1",
    "replicaCount, two",
    "controllers[0], brokers",
    "image.pullPolicy, Sometimes",
    "metrics.prometheusRule.diskFreeRatio, 1.5",
    "metrics.serviceMonitor.interval, soon",
    "resources.limits.memory, lots",
    "replicas, 3",
  })
  void valuesSchemaRefusesBadValues(String key, String value) {
    assertThatThrownBy(() -> HelmChart.template(Map.of(key, value)))
        .hasMessageContaining("values don't meet the specifications of the schema");
  }
}
