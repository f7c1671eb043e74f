package io.tidelog.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaimBuilder;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.tidelog.operator.OperatorSettings.Controller;
import io.tidelog.operator.api.Cluster;
import io.tidelog.operator.api.Conditions;
import io.tidelog.operator.certificates.Pem;
import io.tidelog.operator.cluster.ClusterModel;
import io.tidelog.operator.cluster.ClusterReconciler;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The Cluster reconciler against fabric8's mock API server in CRUD mode: the objects it makes and
 * the specs it refuses. No pods run here (the mock has no controllers); {@link ClusterRollIT} plays
 * the StatefulSet controller against real brokers.
 */
class ClusterOperatorIT {
  private static final String NS = "tidelog";
  private static final Duration WITHIN = Duration.ofSeconds(30);

  static MockKubernetes kubernetes;
  static KubernetesClient client;

  @BeforeAll
  static void start() throws Exception {
    kubernetes =
        new MockKubernetes(
            Set.of(Controller.CLUSTER), Duration.ofSeconds(5), ClusterModel::bootstrapServers);
    client = kubernetes.client;
  }

  @AfterAll
  static void stop() {
    if (kubernetes != null) {
      kubernetes.close();
    }
  }

  @Test
  void aClusterGetsItsBrokersServicesBudgetAndManagedEtcd() throws Exception {
    // Given a Cluster of 3 brokers with a managed etcd of 3 members, when it is created,
    Cluster cluster =
        create(
            "prod",
            """
        replicas: 3
        version: 0.1.0
        storage: {size: 10Gi, storageClass: fast, deleteClaim: true}
        jvm: {heap: 2g}
        config: {log.retention.hours: '72', num.partitions: '6'}
        etcd: {replicas: 3}
        listeners:
          - {name: plain, port: 9092, networkPolicyPeers: [{podSelector: {matchLabels: {app: orders}}}]}
        """);

    // then every dependent object exists, owned by the Cluster, with the expected spec.
    StatefulSet brokers =
        await().atMost(WITHIN).until(() -> statefulSet("prod-broker"), s -> s != null);
    assertThat(brokers.getSpec().getReplicas()).isEqualTo(3);
    assertThat(brokers.getSpec().getUpdateStrategy().getType()).isEqualTo("OnDelete");
    assertThat(brokers.getSpec().getServiceName()).isEqualTo("prod-brokers");
    assertThat(brokers.getSpec().getPersistentVolumeClaimRetentionPolicy().getWhenDeleted())
        .isEqualTo("Delete");
    var claim = brokers.getSpec().getVolumeClaimTemplates().get(0);
    assertThat(claim.getSpec().getResources().getRequests().get("storage"))
        .isEqualTo(new Quantity("10Gi"));
    assertThat(claim.getSpec().getStorageClassName()).isEqualTo("fast");
    var container = brokers.getSpec().getTemplate().getSpec().getContainers().get(0);
    assertThat(container.getImage()).isEqualTo("tidelog/broker:0.1.0");
    assertThat(container.getEnv())
        .anySatisfy(
            e -> {
              assertThat(e.getName()).isEqualTo("TIDELOG_ADVERTISED_LISTENERS");
              assertThat(e.getValue())
                  .isEqualTo(
                      "REPLICATION://$(POD_NAME).prod-brokers.tidelog.svc:9091,"
                          + "PLAIN://$(POD_NAME).prod-brokers.tidelog.svc:9092");
            });
    assertThat(container.getEnv())
        .anySatisfy(e -> assertThat(e.getValue()).isEqualTo("-Xms2g -Xmx2g"));
    assertThat(container.getReadinessProbe().getHttpGet().getPath()).isEqualTo("/readyz");
    assertRestricted(brokers);
    assertThat(brokers.getSpec().getTemplate().getSpec().getVolumes())
        .filteredOn(v -> v.getSecret() != null)
        .extracting(v -> v.getSecret().getSecretName())
        .containsExactlyInAnyOrder(
            "prod-broker-certs", "prod-cluster-ca-cert", "prod-clients-ca-cert");
    assertThat(container.getVolumeMounts())
        .anySatisfy(m -> assertThat(m.getMountPath()).isEqualTo("/tmp"));

    String properties =
        client
            .configMaps()
            .inNamespace(NS)
            .withName("prod-config")
            .get()
            .getData()
            .get("server.properties");
    assertThat(properties.lines())
        .contains(
            "log.retention.hours=72",
            "num.partitions=6",
            "log.dirs=/var/lib/tidelog/data",
            "auto.create.topics.enable=false",
            "listeners=REPLICATION://0.0.0.0:9091,PLAIN://0.0.0.0:9092",
            "inter.broker.listener.name=REPLICATION",
            "tidelog.etcd.endpoints=https://prod-etcd-client.tidelog.svc:2379",
            "tidelog.etcd.tls.ca.file=/etc/tidelog-tls/cluster-ca/ca.crt");
    // each broker is etcd's client by its own certificate,
    assertThat(container.getEnv())
        .anySatisfy(
            e -> {
              assertThat(e.getName()).isEqualTo("TIDELOG_TIDELOG_ETCD_TLS_CERT_FILE");
              assertThat(e.getValue()).isEqualTo("/etc/tidelog-tls/broker/$(POD_NAME).crt");
            });

    Service headless = client.services().inNamespace(NS).withName("prod-brokers").get();
    assertThat(headless.getSpec().getClusterIP()).isEqualTo("None");
    Service bootstrap = client.services().inNamespace(NS).withName("prod-bootstrap").get();
    assertThat(bootstrap.getSpec().getPorts().get(0).getPort()).isEqualTo(9092);
    PodDisruptionBudget budget =
        client.policy().v1().podDisruptionBudget().inNamespace(NS).withName("prod-broker").get();
    assertThat(budget.getSpec().getMaxUnavailable().getIntVal()).isEqualTo(1);

    // and etcd serves clients and peers only over TLS, only to certificates of the cluster CA
    // (peers only to etcd members'), with each member's certificate naming it.
    StatefulSet etcd = statefulSet("prod-etcd");
    assertThat(etcd.getSpec().getReplicas()).isEqualTo(3);
    var etcdContainer = etcd.getSpec().getTemplate().getSpec().getContainers().get(0);
    assertThat(etcdContainer.getCommand())
        .contains(
            "--initial-cluster=prod-etcd-0=https://prod-etcd-0.prod-etcd.tidelog.svc:2380,"
                + "prod-etcd-1=https://prod-etcd-1.prod-etcd.tidelog.svc:2380,"
                + "prod-etcd-2=https://prod-etcd-2.prod-etcd.tidelog.svc:2380",
            "--listen-client-urls=https://0.0.0.0:2379",
            "--listen-peer-urls=https://0.0.0.0:2380",
            "--client-cert-auth",
            "--trusted-ca-file=/etc/tidelog-tls/cluster-ca/ca.crt",
            "--cert-file=/etc/tidelog-tls/etcd/$(POD_NAME).crt",
            "--peer-client-cert-auth",
            "--peer-trusted-ca-file=/etc/tidelog-tls/cluster-ca/ca.crt",
            "--peer-cert-allowed-cn=prod-etcd");
    assertThat(etcdContainer.getCommand()).noneMatch(arg -> arg.contains("http://0.0.0.0:2379"));
    assertThat(etcdContainer.getReadinessProbe().getHttpGet().getPort().getIntVal())
        .isEqualTo(2381);
    assertThat(etcd.getSpec().getTemplate().getSpec().getVolumes())
        .filteredOn(v -> v.getSecret() != null)
        .extracting(v -> v.getSecret().getSecretName())
        .containsExactlyInAnyOrder("prod-etcd-certs", "prod-cluster-ca-cert");
    await().atMost(WITHIN).until(() -> secretText("prod-etcd-certs", "prod-etcd-2.crt") != null);
    X509Certificate member =
        Pem.certificates(secretText("prod-etcd-certs", "prod-etcd-2.crt")).get(0);
    member.verify(Pem.certificates(secretText("prod-cluster-ca", "ca.crt")).get(0).getPublicKey());
    assertThat(member.getSubjectAlternativeNames().stream().map(n -> (Object) n.get(1)).toList())
        .contains("prod-etcd-2.prod-etcd.tidelog.svc", "prod-etcd-client.tidelog.svc");
    assertThat(client.services().inNamespace(NS).withName("prod-etcd-client").get()).isNotNull();
    assertRestricted(etcd);
    // Who may reach the pods: replication only brokers and the operator, the listener its peers,
    // etcd's clients only brokers and its peers only its members.
    var policies = client.network().v1().networkPolicies().inNamespace(NS);
    Map<Integer, List<String>> brokerIngress = ingress(policies.withName("prod-broker").get());
    assertThat(brokerIngress)
        .containsOnlyKeys(9091, 9092, 8080)
        .containsEntry(9091, List.of("pods component=broker", "pods name=tidelog-operator"))
        .containsEntry(9092, List.of("pods app=orders"))
        .containsEntry(8080, List.of());
    assertThat(ingress(policies.withName("prod-etcd").get()))
        .containsOnlyKeys(2379, 2380)
        .containsEntry(2379, List.of("pods component=broker"))
        .containsEntry(2380, List.of("pods component=etcd"));
    var etcdResources =
        etcd.getSpec().getTemplate().getSpec().getContainers().get(0).getResources();
    assertThat(etcdResources.getRequests()).containsKeys("cpu", "memory");
    assertThat(etcdResources.getLimits()).containsKey("memory");

    List<HasMetadata> owned =
        List.of(
            brokers,
            etcd,
            headless,
            bootstrap,
            budget,
            client.configMaps().inNamespace(NS).withName("prod-config").get());
    for (HasMetadata object : owned) {
      assertThat(object.getMetadata().getOwnerReferences())
          .as(
              "%s is deleted with its Cluster by Kubernetes' garbage collector",
              object.getMetadata().getName())
          .singleElement()
          .satisfies(
              ref -> {
                assertThat(ref.getUid()).isEqualTo(cluster.getMetadata().getUid());
                assertThat(ref.getController()).isTrue();
              });
    }

    // and the status says where to connect and that brokers are awaited.
    Cluster reported =
        await()
            .atMost(WITHIN)
            .until(
                () -> get("prod"),
                c -> c.getStatus() != null && c.getStatus().bootstrapServers != null);
    assertThat(reported.getStatus().bootstrapServers).isEqualTo("prod-bootstrap.tidelog.svc:9092");
    assertThat(reported.getStatus().observedGeneration)
        .isEqualTo(reported.getMetadata().getGeneration());
    assertThat(Conditions.isTrue(reported.getStatus().conditions, Conditions.RECONCILING)).isTrue();
    assertThat(
            Conditions.find(reported.getStatus().conditions, Conditions.READY)
                .orElseThrow()
                .getMessage())
        .startsWith("spec.replicas: 0 of 3 brokers are Ready");
  }

  @Test
  void aKeyTheOperatorOwnsIsRefusedWithAConditionAndNothingIsCreated() {
    // Given a Cluster whose config sets node.id, when it is created,
    create(
        "owned",
        """
        replicas: 1
        storage: {size: 1Gi}
        config: {node.id: '7'}
        etcd: {endpoints: ['http://etcd:2379']}
        """);

    // then it has Error=True with a message naming the field, and no StatefulSet.
    Cluster refused = awaitReason("owned", "InvalidSpec");
    assertThat(
            Conditions.find(refused.getStatus().conditions, Conditions.ERROR)
                .orElseThrow()
                .getMessage())
        .startsWith("spec.config.node.id: set by the operator");
    assertThat(statefulSet("owned-broker")).isNull();

    // When the key is removed, the brokers are created and the Error condition goes; a default
    // of the operator's, such as auto.create.topics.enable=false, gives way to the spec.
    edit(
        "owned",
        c -> {
          c.getSpec().config = Map.of("auto.create.topics.enable", "true");
          return c;
        });
    await().atMost(WITHIN).until(() -> statefulSet("owned-broker") != null);
    assertThat(
            client
                .configMaps()
                .inNamespace(NS)
                .withName("owned-config")
                .get()
                .getData()
                .get("server.properties")
                .lines())
        .contains("auto.create.topics.enable=true")
        .doesNotContain("auto.create.topics.enable=false");
    await()
        .atMost(WITHIN)
        .until(
            () -> Conditions.find(get("owned").getStatus().conditions, Conditions.ERROR).isEmpty());
  }

  @Test
  void aValueThatWouldAddALineToServerPropertiesIsRefused() {
    // Given a Cluster whose config value carries a line break and a listeners line after it,
    create(
        "smuggle",
        """
        replicas: 1
        storage: {size: 1Gi}
        config: {log.retention.ms: "1000\\nlisteners=PLAINTEXT://0.0.0.0:1"}
        etcd: {endpoints: ['http://etcd:2379']}
        """);

    // then it is refused with the field's path, and nothing is created.
    Cluster refused = awaitReason("smuggle", "InvalidSpec");
    assertThat(
            Conditions.find(refused.getStatus().conditions, Conditions.ERROR)
                .orElseThrow()
                .getMessage())
        .startsWith("spec.config.log.retention.ms: a value may not hold a line break");
    assertThat(statefulSet("smuggle-broker")).isNull();
    assertThat(client.configMaps().inNamespace(NS).withName("smuggle-config").get()).isNull();
  }

  @Test
  void aCaRenewalGoesThroughItsStepsAsConditionsAndChangesNoPodTemplate() throws Exception {
    // Given a Cluster with its CAs and broker certificates,
    create(
        "tls",
        """
        replicas: 2
        storage: {size: 1Gi}
        etcd: {endpoints: ['http://etcd:2379']}
        """);
    await().atMost(WITHIN).until(() -> secretText("tls-broker-certs", "tls-broker-1.crt") != null);
    StatefulSet before =
        await().atMost(WITHIN).until(() -> statefulSet("tls-broker"), s -> s != null);
    X509Certificate oldCa = Pem.certificates(secretText("tls-cluster-ca", "ca.crt")).get(0);
    Pem.certificates(secretText("tls-broker-certs", "tls-broker-0.crt"))
        .get(0)
        .verify(oldCa.getPublicKey());

    // when its cluster CA Secret is annotated to renew,
    Resources.edit(
        client.secrets().inNamespace(NS).withName("tls-cluster-ca"),
        s -> {
          s.getMetadata().getAnnotations().put("tidelog.io/force-renew", "true");
          return s;
        });

    // then the renewal shows each step as the ClusterCaRenewal condition,
    for (String step : List.of("TrustingBoth", "Switched")) {
      await()
          .atMost(WITHIN)
          .until(
              () ->
                  Conditions.find(get("tls").getStatus().conditions, "ClusterCaRenewal")
                      .map(c -> step.equals(c.getReason()))
                      .orElse(false));
      assertThat(Pem.certificates(secretText("tls-cluster-ca-cert", "ca.crt"))).hasSize(2);
    }
    await()
        .atMost(WITHIN)
        .until(
            () -> Conditions.find(get("tls").getStatus().conditions, "ClusterCaRenewal").isEmpty());

    // ends trusting only the new CA, whose certificates the brokers have,
    List<X509Certificate> trusted = Pem.certificates(secretText("tls-cluster-ca-cert", "ca.crt"));
    assertThat(trusted).singleElement().isNotEqualTo(oldCa);
    for (int id = 0; id < 2; id++) {
      Pem.certificates(secretText("tls-broker-certs", "tls-broker-" + id + ".crt"))
          .get(0)
          .verify(trusted.get(0).getPublicKey());
    }
    // and no broker pod was to restart for it: the template is as it was.
    assertThat(statefulSet("tls-broker").getSpec().getTemplate())
        .isEqualTo(before.getSpec().getTemplate());
    assertThat(client.v1().events().inNamespace(NS).list().getItems())
        .noneMatch(
            e ->
                "BrokerRestart".equals(e.getReason())
                    && "tls".equals(e.getInvolvedObject().getName()));
  }

  @Test
  void aClusterCaRenewalRollsTheManagedEtcdToTrustBothBeforeItSwitches() throws Exception {
    // Given a Cluster whose managed etcd members run (played here, from the template),
    create(
        "et",
        """
        replicas: 1
        storage: {size: 1Gi}
        etcd: {replicas: 3}
        """);
    await().atMost(WITHIN).until(() -> secretText("et-etcd-certs", "et-etcd-2.crt") != null);
    StatefulSet brokersBefore =
        await().atMost(WITHIN).until(() -> statefulSet("et-broker"), s -> s != null);
    String trustingOld = etcdTrustAnnotation();
    runEtcdMembersFromTemplate();

    // when its cluster CA is renewed,
    Resources.edit(
        client.secrets().inNamespace(NS).withName("et-cluster-ca"),
        s -> {
          s.getMetadata().getAnnotations().put("tidelog.io/force-renew", "true");
          return s;
        });

    // then etcd's template trusts both CAs, and the switch waits for its members to restart so,
    await().atMost(WITHIN).until(() -> !etcdTrustAnnotation().equals(trustingOld));
    await()
        .atMost(WITHIN)
        .until(
            () ->
                Conditions.find(get("et").getStatus().conditions, "ClusterCaRenewal")
                    .map(c -> c.getMessage().contains("once every etcd member restarted"))
                    .orElse(false));
    assertThat(renewalReason("et")).isEqualTo("TrustingBoth");
    X509Certificate oldCa = Pem.certificates(secretText("et-cluster-ca-cert", "ca.crt")).get(1);
    Pem.certificates(secretText("et-etcd-certs", "et-etcd-0.crt"))
        .get(0)
        .verify(oldCa.getPublicKey());
    // which, once they did, lets the new CA issue etcd's certificates,
    runEtcdMembersFromTemplate();
    await().atMost(WITHIN).until(() -> !"TrustingBoth".equals(renewalReason("et")));
    String trustingBoth = etcdTrustAnnotation();
    await()
        .atMost(WITHIN)
        .until(
            () -> Conditions.find(get("et").getStatus().conditions, "ClusterCaRenewal").isEmpty());
    X509Certificate newCa =
        Pem.certificates(secretText("et-cluster-ca-cert", "ca.crt")).stream()
            .filter(ca -> !ca.equals(oldCa))
            .findFirst()
            .orElseThrow();
    Pem.certificates(secretText("et-etcd-certs", "et-etcd-0.crt"))
        .get(0)
        .verify(newCa.getPublicKey());
    // and at the end etcd trusts the new CA alone, while no broker was to restart.
    await().atMost(WITHIN).until(() -> !etcdTrustAnnotation().equals(trustingBoth));
    assertThat(statefulSet("et-broker").getSpec().getTemplate())
        .isEqualTo(brokersBefore.getSpec().getTemplate());
  }

  private static String renewalReason(String cluster) {
    return Conditions.find(get(cluster).getStatus().conditions, "ClusterCaRenewal")
        .map(c -> c.getReason())
        .orElse(null);
  }

  private static String etcdTrustAnnotation() {
    return statefulSet("et-etcd")
        .getSpec()
        .getTemplate()
        .getMetadata()
        .getAnnotations()
        .get(ClusterModel.ETCD_TRUST_ANNOTATION);
  }

  /** Plays the StatefulSet controller: each member's pod anew from the current template, Ready. */
  private static void runEtcdMembersFromTemplate() {
    var template = statefulSet("et-etcd").getSpec().getTemplate();
    for (int id = 0; id < 3; id++) {
      String name = "et-etcd-" + id;
      var pods = client.pods().inNamespace(NS);
      pods.withName(name).delete();
      await().atMost(WITHIN).until(() -> pods.withName(name).get() == null);
      pods.resource(BrokerPods.readyPod(template, name, NS)).create();
    }
  }

  /**
   * A NetworkPolicy's ingress as port to its peers, each peer as "pods <label>=<value>" of the
   * label that tells it (component, name or app), none when anyone may connect.
   */
  private static Map<Integer, List<String>> ingress(
      io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy policy) {
    Map<Integer, List<String>> ingress = new java.util.TreeMap<>();
    for (var rule : policy.getSpec().getIngress()) {
      List<String> peers =
          rule.getFrom().stream()
              .map(
                  peer ->
                      peer.getPodSelector().getMatchLabels().entrySet().stream()
                          .filter(
                              e ->
                                  e.getKey().equals("app.kubernetes.io/component")
                                      || e.getKey().equals("app.kubernetes.io/name")
                                          && e.getValue().equals("tidelog-operator")
                                      || e.getKey().equals("app"))
                          .map(
                              e ->
                                  "pods "
                                      + e.getKey().replace("app.kubernetes.io/", "")
                                      + "="
                                      + e.getValue())
                          .findFirst()
                          .orElse("pods ?"))
              .toList();
      ingress.put(rule.getPorts().get(0).getPort().getIntVal(), peers);
    }
    return ingress;
  }

  private static String secretText(String secret, String key) {
    var found = client.secrets().inNamespace(NS).withName(secret).get();
    if (found == null || found.getData() == null || !found.getData().containsKey(key)) {
      return null;
    }
    return new String(
        java.util.Base64.getDecoder().decode(found.getData().get(key)),
        java.nio.charset.StandardCharsets.UTF_8);
  }

  @Test
  void volumesGrowWithoutARestartAndCannotShrink() {
    // Given a Cluster of 2 brokers whose volume claims exist (the StatefulSet controller's work),
    create(
        "disks",
        """
        replicas: 2
        storage: {size: 1Gi}
        etcd: {endpoints: ['http://etcd:2379']}
        """);
    StatefulSet before =
        await().atMost(WITHIN).until(() -> statefulSet("disks-broker"), s -> s != null);
    for (int id = 0; id < 2; id++) {
      client
          .persistentVolumeClaims()
          .inNamespace(NS)
          .resource(claim("data-disks-broker-" + id, "1Gi"))
          .create();
    }

    // when its storage grows to 2Gi, every claim asks for 2Gi and the pod template is unchanged;
    edit(
        "disks",
        c -> {
          c.getSpec().storage.size = "2Gi";
          return c;
        });
    await()
        .atMost(WITHIN)
        .untilAsserted(
            () -> {
              for (int id = 0; id < 2; id++) {
                assertThat(
                        client
                            .persistentVolumeClaims()
                            .inNamespace(NS)
                            .withName("data-disks-broker-" + id)
                            .get()
                            .getSpec()
                            .getResources()
                            .getRequests()
                            .get("storage"))
                    .isEqualTo(new Quantity("2Gi"));
              }
            });
    assertThat(revision(statefulSet("disks-broker"))).isEqualTo(revision(before));

    // when it shrinks to 1Gi, it is refused by name, and the claims keep 2Gi.
    edit(
        "disks",
        c -> {
          c.getSpec().storage.size = "1Gi";
          return c;
        });
    Cluster refused = awaitReason("disks", "InvalidSpec");
    assertThat(
            Conditions.find(refused.getStatus().conditions, Conditions.ERROR)
                .orElseThrow()
                .getMessage())
        .startsWith("spec.storage.size: cannot shrink volume data-disks-broker-");
  }

  @Test
  void scalingUpAddsBrokersWithoutRestartingAndPauseFreezesTheCluster() {
    // Given a Cluster of 1 broker,
    create(
        "grow",
        """
        replicas: 1
        storage: {size: 1Gi}
        etcd: {endpoints: ['http://etcd:2379']}
        """);
    StatefulSet before =
        await().atMost(WITHIN).until(() -> statefulSet("grow-broker"), s -> s != null);

    // when it scales to 3, the StatefulSet has 3 replicas and the same pod revision;
    edit(
        "grow",
        c -> {
          c.getSpec().replicas = 3;
          return c;
        });
    await().atMost(WITHIN).until(() -> statefulSet("grow-broker").getSpec().getReplicas() == 3);
    assertThat(revision(statefulSet("grow-broker"))).isEqualTo(revision(before));

    // when it is paused, the status says so and a config change is not applied;
    edit(
        "grow",
        c -> {
          c.getMetadata().getAnnotations().put(ClusterReconciler.PAUSE_ANNOTATION, "true");
          return c;
        });
    await()
        .atMost(WITHIN)
        .until(() -> Conditions.isTrue(get("grow").getStatus().conditions, Conditions.PAUSED));
    edit(
        "grow",
        c -> {
          c.getSpec().config = Map.of("log.retention.hours", "1");
          return c;
        });
    await()
        .pollDelay(Duration.ofSeconds(2))
        .atMost(WITHIN)
        .until(
            () ->
                get("grow")
                    .getStatus()
                    .observedGeneration
                    .equals(get("grow").getMetadata().getGeneration()));
    assertThat(revision(statefulSet("grow-broker"))).isEqualTo(revision(before));

    // when it is resumed, the change is applied: a new revision, for the roll to carry out.
    edit(
        "grow",
        c -> {
          c.getMetadata().getAnnotations().remove(ClusterReconciler.PAUSE_ANNOTATION);
          return c;
        });
    await()
        .atMost(WITHIN)
        .until(() -> !revision(statefulSet("grow-broker")).equals(revision(before)));
    await() // the status follows the StatefulSet's write
        .atMost(WITHIN)
        .untilAsserted(
            () ->
                assertThat(Conditions.find(get("grow").getStatus().conditions, Conditions.PAUSED))
                    .isEmpty());
  }

  @Test
  void aScheduledBrokerPodGetsTheRackOfItsNodeAndBrokersSpreadOverRacks() {
    // Given a Cluster spread over zones, and a node in zone "east",
    create(
        "zoned",
        """
        replicas: 2
        storage: {size: 1Gi}
        rack: {topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: DoNotSchedule}
        etcd: {endpoints: ['http://etcd:2379']}
        """);
    client
        .resource(
            new NodeBuilder()
                .withNewMetadata()
                .withName("node-east")
                .withLabels(Map.of("topology.kubernetes.io/zone", "east"))
                .endMetadata()
                .build())
        .create();
    StatefulSet brokers =
        await().atMost(WITHIN).until(() -> statefulSet("zoned-broker"), s -> s != null);
    var template = brokers.getSpec().getTemplate();
    assertThat(template.getSpec().getTopologySpreadConstraints())
        .singleElement()
        .satisfies(
            t -> {
              assertThat(t.getTopologyKey()).isEqualTo("topology.kubernetes.io/zone");
              assertThat(t.getWhenUnsatisfiable()).isEqualTo("DoNotSchedule");
            });
    assertThat(template.getSpec().getVolumes())
        .anySatisfy(v -> assertThat(v.getDownwardAPI()).isNotNull());

    // when its pod 0 is scheduled on that node (the scheduler's work, here the test's),
    client
        .resource(
            new PodBuilder()
                .withNewMetadata()
                .withName("zoned-broker-0")
                .withNamespace(NS)
                .withLabels(template.getMetadata().getLabels())
                .withAnnotations(template.getMetadata().getAnnotations())
                .endMetadata()
                .withSpec(template.getSpec())
                .editSpec()
                .withNodeName("node-east")
                .endSpec()
                .build())
        .create();

    // then the operator writes the node's zone on the pod, where its broker waits for it.
    await()
        .atMost(WITHIN)
        .until(
            () ->
                "east"
                    .equals(
                        client
                            .pods()
                            .inNamespace(NS)
                            .withName("zoned-broker-0")
                            .get()
                            .getMetadata()
                            .getAnnotations()
                            .get(ClusterModel.RACK_ANNOTATION)));
  }

  private static Cluster create(String name, String spec) {
    return client.resource(Resources.cluster(NS, name, spec)).create();
  }

  static Cluster get(String name) {
    return client.resources(Cluster.class).inNamespace(NS).withName(name).get();
  }

  private static void edit(String name, UnaryOperator<Cluster> change) {
    Resources.edit(client.resources(Cluster.class).inNamespace(NS).withName(name), change);
  }

  /**
   * The pods of {@code set} meet the Pod Security Standards' "restricted" profile, with a read-only
   * root and no service-account token (neither brokers nor etcd call the API server).
   */
  private static void assertRestricted(StatefulSet set) {
    var pod = set.getSpec().getTemplate().getSpec();
    assertThat(pod.getAutomountServiceAccountToken()).isFalse();
    assertThat(pod.getSecurityContext().getRunAsNonRoot()).isTrue();
    assertThat(pod.getSecurityContext().getSeccompProfile().getType()).isEqualTo("RuntimeDefault");
    for (var container : pod.getContainers()) {
      var security = container.getSecurityContext();
      assertThat(security.getReadOnlyRootFilesystem()).as(container.getName()).isTrue();
      assertThat(security.getAllowPrivilegeEscalation()).as(container.getName()).isFalse();
      assertThat(security.getCapabilities().getDrop())
          .as(container.getName())
          .containsExactly("ALL");
    }
  }

  private static Cluster awaitReason(String name, String reason) {
    return await()
        .atMost(WITHIN)
        .until(
            () -> get(name),
            c ->
                c.getStatus() != null
                    && Conditions.find(c.getStatus().conditions, Conditions.READY)
                        .map(r -> reason.equals(r.getReason()))
                        .orElse(false));
  }

  private static StatefulSet statefulSet(String name) {
    return client.apps().statefulSets().inNamespace(NS).withName(name).get();
  }

  private static String revision(StatefulSet set) {
    return set.getSpec()
        .getTemplate()
        .getMetadata()
        .getAnnotations()
        .get(ClusterModel.REVISION_ANNOTATION);
  }

  private static PersistentVolumeClaim claim(String name, String size) {
    return new PersistentVolumeClaimBuilder()
        .withNewMetadata()
        .withName(name)
        .withNamespace(NS)
        .endMetadata()
        .withNewSpec()
        .withAccessModes("ReadWriteOnce")
        .withNewResources()
        .withRequests(Map.of("storage", new Quantity(size)))
        .endResources()
        .endSpec()
        .build();
  }
}
