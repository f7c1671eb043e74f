package io.tidelog.operator.cluster;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerBuilder;
import io.fabric8.kubernetes.api.model.ContainerPort;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.EnvVarBuilder;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaimBuilder;
import io.fabric8.kubernetes.api.model.PodSecurityContext;
import io.fabric8.kubernetes.api.model.PodSecurityContextBuilder;
import io.fabric8.kubernetes.api.model.PodTemplateSpec;
import io.fabric8.kubernetes.api.model.PodTemplateSpecBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.ResourceRequirements;
import io.fabric8.kubernetes.api.model.ResourceRequirementsBuilder;
import io.fabric8.kubernetes.api.model.SecurityContext;
import io.fabric8.kubernetes.api.model.SecurityContextBuilder;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeBuilder;
import io.fabric8.kubernetes.api.model.VolumeMount;
import io.fabric8.kubernetes.api.model.VolumeMountBuilder;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.apps.StatefulSetBuilder;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudgetBuilder;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.tidelog.operator.api.Cluster;
import io.tidelog.operator.api.ClusterSpec;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

/**
 * The Kubernetes objects that a {@link Cluster} should have: pure functions of the resource, so
 * that the same spec always yields the same objects (and the same revision hash).
 *
 * <p>Brokers run in a StatefulSet {@code <name>-broker} with {@code OnDelete} updates: the operator
 * decides when each pod restarts. Broker {@code i} is pod {@code <name>-broker-i}, and advertises
 * its stable DNS name under the headless Service {@code <name>-brokers}. Each pod template carries
 * {@link #REVISION_ANNOTATION}, a hash of everything that needs a restart to take effect; a pod
 * whose annotation differs from the StatefulSet's is out of date.
 */
public final class ClusterModel {
  public static final String REVISION_ANNOTATION = "tidelog.io/revision";
  public static final String DESIRED_HASH_ANNOTATION = "tidelog.io/desired-hash";

  /** On a broker pod template: a hash of the server.properties a change of which restarts. */
  public static final String CONFIG_HASH_ANNOTATION = "tidelog.io/config-hash";

  /** On a Cluster: a new value rolls every broker, safely, as a configuration change would. */
  public static final String MANUAL_ROLL_ANNOTATION = "tidelog.io/manual-rolling-update";

  /**
   * On a broker pod: the value of the Cluster's rack topology label on the pod's node, which the
   * operator writes once the pod is scheduled, and the broker waits for as its {@code broker.rack}.
   */
  public static final String RACK_ANNOTATION = "tidelog.io/rack";

  public static final int KAFKA_PORT = 9092;
  public static final int HTTP_PORT = 8080;
  static final int ETCD_CLIENT_PORT = 2379;
  static final int ETCD_PEER_PORT = 2380;

  /** A managed etcd member's plain-HTTP {@code /health} and {@code /metrics}, for the kubelet. */
  static final int ETCD_METRICS_PORT = 2381;

  /**
   * On a managed etcd member's pod template: a hash of the CA certificates it trusts. etcd reads
   * its certificate again at every handshake but its trusted CAs only at start (etcd issue #11555),
   * so a change of them rolls the members, one at a time.
   */
  public static final String ETCD_TRUST_ANNOTATION = "tidelog.io/etcd-trusted-cas";

  static final String ETCD_CERTS_DIR = "/etc/tidelog-tls/etcd";
  static final String DATA_DIR = "/var/lib/tidelog";
  static final String CONFIG_DIR = "/etc/tidelog";
  static final String PODINFO_DIR = "/etc/podinfo";
  private static final int RACK_WAIT_SECONDS = 300;

  /**
   * The broker configs that the operator sets itself (the broker's names, BrokerConfig), besides
   * every config of the replication listener ({@link #OWNED_PREFIX}).
   */
  public static final Set<String> OWNED_CONFIGS =
      Set.of(
          "node.id",
          "listeners",
          "advertised.listeners",
          "listener.security.protocol.map",
          "inter.broker.listener.name",
          "ssl.keystore.type",
          "ssl.keystore.location",
          "authorizer.class.name",
          "super.users",
          "log.dirs",
          "broker.rack",
          "tidelog.etcd.endpoints",
          "tidelog.etcd.tls.ca.file",
          "tidelog.etcd.tls.cert.file",
          "tidelog.etcd.tls.key.file",
          "tidelog.http.port");

  /** The configs of the replication listener, all the operator's. */
  public static final String OWNED_PREFIX = "listener.name.replication.";

  private ClusterModel() {}

  static String brokerSet(Cluster c) {
    return c.getMetadata().getName() + "-broker";
  }

  static String headlessService(Cluster c) {
    return c.getMetadata().getName() + "-brokers";
  }

  static String bootstrapService(Cluster c) {
    return c.getMetadata().getName() + "-bootstrap";
  }

  static String etcdSet(Cluster c) {
    return c.getMetadata().getName() + "-etcd";
  }

  static String etcdClientService(Cluster c) {
    return c.getMetadata().getName() + "-etcd-client";
  }

  static String etcdPod(Cluster c, int id) {
    return etcdSet(c) + "-" + id;
  }

  /** Whether the operator runs the Cluster's etcd (no {@code etcd.endpoints}). */
  static boolean managedEtcd(Cluster c) {
    return c.getSpec().etcd.endpoints == null;
  }

  /**
   * The DNS names managed etcd member {@code id} answers to, which its certificate names: its pod
   * under the peer Service and the client Service, as the cluster's DNS spells them.
   */
  static List<String> etcdDnsNames(Cluster c, int id) {
    String ns = c.getMetadata().getNamespace();
    String pod = etcdPod(c, id) + "." + etcdSet(c) + "." + ns;
    String client = etcdClientService(c);
    return List.of(
        pod + ".svc",
        pod + ".svc.cluster.local",
        client,
        client + "." + ns,
        client + "." + ns + ".svc",
        client + "." + ns + ".svc.cluster.local");
  }

  static String brokerPod(Cluster c, int id) {
    return brokerSet(c) + "-" + id;
  }

  /** The PersistentVolumeClaim that the StatefulSet made for broker {@code id}. */
  static String dataClaim(Cluster c, int id) {
    return "data-" + brokerPod(c, id);
  }

  /**
   * The DNS names broker {@code id} answers to, which its certificate names: its pod under the
   * headless Service, the headless Service and the bootstrap Service, each as the cluster's DNS
   * spells it (short, with the namespace, {@code .svc}, {@code .svc.cluster.local}).
   */
  static List<String> brokerDnsNames(Cluster c, int id) {
    String ns = c.getMetadata().getNamespace();
    String pod = brokerPod(c, id) + "." + headlessService(c) + "." + ns;
    String headless = headlessService(c) + "." + ns;
    String bootstrap = bootstrapService(c);
    return List.of(
        pod + ".svc",
        pod + ".svc.cluster.local",
        headless + ".svc",
        headless + ".svc.cluster.local",
        bootstrap,
        bootstrap + "." + ns,
        bootstrap + "." + ns + ".svc",
        bootstrap + "." + ns + ".svc.cluster.local");
  }

  /** The address Kafka clients inside Kubernetes bootstrap from: of the first listener. */
  public static String bootstrapServers(Cluster c) {
    return bootstrapServers(c, BrokerListeners.clientListeners(c).get(0));
  }

  static String bootstrapServers(Cluster c, ClusterSpec.Listener listener) {
    return "%s.%s.svc:%d"
        .formatted(bootstrapService(c), c.getMetadata().getNamespace(), listener.port);
  }

  static Map<String, String> labels(Cluster c, String component) {
    Map<String, String> labels = new TreeMap<>();
    labels.put("app.kubernetes.io/name", "tidelog");
    labels.put("app.kubernetes.io/instance", c.getMetadata().getName());
    labels.put("app.kubernetes.io/component", component);
    labels.put("app.kubernetes.io/managed-by", "tidelog-operator");
    return labels;
  }

  /**
   * Everything the Cluster should have, in the order to create it.
   *
   * @param operatorNamespace where the operator runs, whose pods the brokers' NetworkPolicy lets
   *     in; null when not known (any namespace)
   * @param etcdTrust the CA certificates (PEM) that a managed etcd trusts now
   */
  public static List<HasMetadata> desired(Cluster c, String operatorNamespace, String etcdTrust) {
    List<HasMetadata> objects = new ArrayList<>();
    if (managedEtcd(c)) {
      objects.add(withHash(NetworkPolicies.etcd(c)));
      objects.add(etcdPeerService(c));
      objects.add(etcdClientServiceObject(c));
      objects.add(etcdStatefulSet(c, etcdTrust));
    }
    objects.add(withHash(NetworkPolicies.brokers(c, operatorNamespace)));
    objects.add(configMap(c));
    objects.add(headlessServiceObject(c));
    objects.add(bootstrapServiceObject(c));
    objects.add(brokerStatefulSet(c));
    objects.add(podDisruptionBudget(c));
    return objects;
  }

  static String etcdEndpoints(Cluster c) {
    List<String> external = c.getSpec().etcd.endpoints;
    return external != null
        ? String.join(",", external)
        : "https://%s.%s.svc:%d"
            .formatted(etcdClientService(c), c.getMetadata().getNamespace(), ETCD_CLIENT_PORT);
  }

  /**
   * server.properties for every broker; node.id and advertised.listeners come per pod. Topics come
   * from Topic resources, so {@code auto.create.topics.enable} is false unless the spec sets it: a
   * client's Metadata request naming a topic creates nothing behind the platform's back
   * (bin/tidelog dev keeps Kafka's default, true).
   */
  static String serverProperties(Cluster c) {
    return serverProperties(c, c.getSpec().config == null ? Map.of() : c.getSpec().config);
  }

  /**
   * server.properties but for the {@linkplain DynamicConfigs dynamic} keys of spec.config, which
   * the brokers take without a restart: what the pods' config hash covers.
   */
  static String restartingProperties(Cluster c) {
    Map<String, String> restarting = new TreeMap<>();
    if (c.getSpec().config != null) {
      restarting.putAll(c.getSpec().config);
    }
    restarting.keySet().removeAll(DynamicConfigs.KEYS);
    return serverProperties(c, restarting);
  }

  private static String serverProperties(Cluster c, Map<String, String> specConfig) {
    Map<String, String> config = new TreeMap<>();
    config.put("auto.create.topics.enable", "false");
    config.putAll(specConfig);
    config.putAll(BrokerListeners.configs(c));
    config.put("log.dirs", DATA_DIR + "/data");
    config.put("tidelog.etcd.endpoints", etcdEndpoints(c));
    if (managedEtcd(c)) {
      // its certificate and key come per pod, in the environment
      config.put("tidelog.etcd.tls.ca.file", BrokerListeners.CLUSTER_CA_DIR + "/ca.crt");
    }
    config.put("tidelog.http.port", String.valueOf(HTTP_PORT));
    return config.entrySet().stream()
        .map(e -> e.getKey() + "=" + escaped(e.getValue()))
        .collect(
            Collectors.joining(
                "\n",
                "# Written by the Tidelog operator from Cluster "
                    + c.getMetadata().getName()
                    + "\n",
                "\n"));
  }

  /**
   * {@code value} as server.properties must spell it to be read back as it is: a backslash doubled,
   * a leading space escaped (SpecChecks refuses line breaks and other control characters).
   */
  static String escaped(String value) {
    String doubled = value == null ? "" : value.replace("\\", "\\\\");
    return doubled.startsWith(" ") ? "\\" + doubled : doubled;
  }

  static ConfigMap configMap(Cluster c) {
    return withHash(
        new ConfigMapBuilder()
            .withMetadata(meta(c, c.getMetadata().getName() + "-config", "broker"))
            .withData(Map.of("server.properties", serverProperties(c)))
            .build());
  }

  static Service headlessServiceObject(Cluster c) {
    Map<String, Integer> ports = new TreeMap<>(clientPorts(c));
    ports.put("replication", BrokerListeners.REPLICATION_PORT);
    ports.put("http", HTTP_PORT);
    return service(c, headlessService(c), "broker", true, ports);
  }

  /** One port per client listener, named after it; brokers replicate over the headless one. */
  static Service bootstrapServiceObject(Cluster c) {
    return service(c, bootstrapService(c), "broker", false, clientPorts(c));
  }

  private static Map<String, Integer> clientPorts(Cluster c) {
    Map<String, Integer> ports = new TreeMap<>();
    BrokerListeners.clientListeners(c).forEach(l -> ports.put(l.name, l.port));
    return ports;
  }

  /**
   * A Service for the pods of {@code component}: headless (each pod by its own DNS name, ready or
   * not) or one ClusterIP in front of the ready ones.
   */
  private static Service service(
      Cluster c, String name, String component, boolean headless, Map<String, Integer> ports) {
    ServiceBuilder service =
        new ServiceBuilder()
            .withMetadata(meta(c, name, component))
            .withNewSpec()
            .withSelector(labels(c, component))
            .endSpec();
    if (headless) {
      service.editSpec().withClusterIP("None").withPublishNotReadyAddresses(true).endSpec();
    } else {
      service.editSpec().withType("ClusterIP").endSpec();
    }
    new TreeMap<>(ports)
        .forEach(
            (portName, port) ->
                service
                    .editSpec()
                    .addNewPort()
                    .withName(portName)
                    .withPort(port)
                    .endPort()
                    .endSpec());
    return withHash(service.build());
  }

  /** The revision that up-to-date broker pods carry in {@link #REVISION_ANNOTATION}. */
  static String brokerRevision(Cluster c) {
    return hash(brokerPodTemplate(c));
  }

  static StatefulSet brokerStatefulSet(Cluster c) {
    ClusterSpec spec = c.getSpec();
    PodTemplateSpec template = brokerPodTemplate(c);
    template.getMetadata().getAnnotations().put(REVISION_ANNOTATION, brokerRevision(c));
    if (spec.metrics == null || spec.metrics.enabled) {
      // Outside the revision: scraping needs no restart.
      template.getMetadata().getAnnotations().put("prometheus.io/scrape", "true");
      template.getMetadata().getAnnotations().put("prometheus.io/port", String.valueOf(HTTP_PORT));
      template.getMetadata().getAnnotations().put("prometheus.io/path", "/metrics");
    }
    String retention = spec.storage.deleteClaim ? "Delete" : "Retain";
    return withHash(
        new StatefulSetBuilder()
            .withMetadata(meta(c, brokerSet(c), "broker"))
            .withNewSpec()
            .withReplicas(spec.replicas)
            .withServiceName(headlessService(c))
            .withPodManagementPolicy("Parallel")
            .withNewUpdateStrategy()
            .withType("OnDelete")
            .endUpdateStrategy()
            .withNewSelector()
            .withMatchLabels(labels(c, "broker"))
            .endSelector()
            .withTemplate(template)
            .withVolumeClaimTemplates(claimTemplate("data", spec.storage))
            .withNewPersistentVolumeClaimRetentionPolicy()
            .withWhenDeleted(retention)
            .withWhenScaled(retention)
            .endPersistentVolumeClaimRetentionPolicy()
            .endSpec()
            .build());
  }

  private static PodTemplateSpec brokerPodTemplate(Cluster c) {
    ClusterSpec spec = c.getSpec();
    String self =
        "$(POD_NAME).%s.%s.svc".formatted(headlessService(c), c.getMetadata().getNamespace());
    List<EnvVar> env = new ArrayList<>();
    env.add(
        new EnvVarBuilder()
            .withName("POD_NAME")
            .withNewValueFrom()
            .withNewFieldRef()
            .withFieldPath("metadata.name")
            .endFieldRef()
            .endValueFrom()
            .build());
    env.add(
        new EnvVarBuilder()
            .withName("TIDELOG_ADVERTISED_LISTENERS")
            .withValue(BrokerListeners.endpoints(c, self))
            .build());
    env.add(
        new EnvVarBuilder()
            .withName("TIDELOG_SSL_KEYSTORE_LOCATION")
            .withValue(BrokerListeners.BROKER_CERTS_DIR + "/$(POD_NAME).pem")
            .build());
    if (managedEtcd(c)) {
      // etcd takes only clients with a certificate of the cluster CA: the broker's own
      env.add(
          new EnvVarBuilder()
              .withName("TIDELOG_TIDELOG_ETCD_TLS_CERT_FILE")
              .withValue(BrokerListeners.BROKER_CERTS_DIR + "/$(POD_NAME).crt")
              .build());
      env.add(
          new EnvVarBuilder()
              .withName("TIDELOG_TIDELOG_ETCD_TLS_KEY_FILE")
              .withValue(BrokerListeners.BROKER_CERTS_DIR + "/$(POD_NAME).key")
              .build());
    }
    env.add(
        new EnvVarBuilder()
            .withName("JAVA_OPTS")
            .withValue(javaOptions(spec.jvm, BrokerListeners.jwksUrls(c)))
            .build());
    List<ContainerPort> ports = new ArrayList<>();
    ports.add(new ContainerPort(BrokerListeners.REPLICATION_PORT, null, null, "replication", null));
    BrokerListeners.clientListeners(c)
        .forEach(l -> ports.add(new ContainerPort(l.port, null, null, l.name, null)));
    Container broker =
        new ContainerBuilder()
            .withName("broker")
            .withImage(spec.image + ":" + spec.version)
            .withCommand("sh", "-c", brokerCommand(c))
            .withEnv(env)
            .withPorts(ports)
            .addNewPort()
            .withName("http")
            .withContainerPort(HTTP_PORT)
            .endPort()
            .withNewReadinessProbe()
            .withNewHttpGet()
            .withPath("/readyz")
            .withNewPort(HTTP_PORT)
            .endHttpGet()
            .withPeriodSeconds(5)
            .endReadinessProbe()
            .withNewLivenessProbe()
            .withNewHttpGet()
            .withPath("/healthz")
            .withNewPort(HTTP_PORT)
            .endHttpGet()
            .withPeriodSeconds(10)
            .withFailureThreshold(6)
            .endLivenessProbe()
            .withResources(spec.resources)
            .addNewVolumeMount()
            .withName("data")
            .withMountPath(DATA_DIR)
            .endVolumeMount()
            .addNewVolumeMount()
            .withName("config")
            .withMountPath(CONFIG_DIR)
            .endVolumeMount()
            .addNewVolumeMount()
            .withName("tmp")
            .withMountPath("/tmp")
            .endVolumeMount()
            .addToVolumeMounts(readOnlyMount("broker-certs", BrokerListeners.BROKER_CERTS_DIR))
            .addToVolumeMounts(readOnlyMount("cluster-ca", BrokerListeners.CLUSTER_CA_DIR))
            .addToVolumeMounts(readOnlyMount("clients-ca", BrokerListeners.CLIENTS_CA_DIR))
            .withSecurityContext(restrictedContainer())
            .build();
    PodTemplateSpecBuilder template =
        new PodTemplateSpecBuilder()
            .withNewMetadata()
            .withLabels(labels(c, "broker"))
            .withAnnotations(podAnnotations(c))
            .endMetadata()
            .withNewSpec()
            .withContainers(broker)
            // Room for a controlled shutdown: leadership moves before the process exits.
            .withTerminationGracePeriodSeconds(120L)
            .withSecurityContext(restrictedPod())
            // brokers never call the Kubernetes API
            .withAutomountServiceAccountToken(false)
            .addNewVolume()
            .withName("config")
            .withNewConfigMap()
            .withName(c.getMetadata().getName() + "-config")
            .endConfigMap()
            .endVolume()
            .addToVolumes(scratch())
            // whole Secrets, never subPath: the kubelet updates them in place, and brokers reload
            .addToVolumes(
                secretVolume("broker-certs", ClusterCertificates.brokerCertsSecret(c)),
                secretVolume("cluster-ca", ClusterCertificates.caCertSecret(c, "cluster")),
                secretVolume("clients-ca", ClusterCertificates.caCertSecret(c, "clients")))
            .endSpec();
    if (BrokerListeners.anyOwnCertificate(c)) {
      template
          .editSpec()
          .addToVolumes(secretVolume("listener-certs", ClusterCertificates.listenerCertsSecret(c)))
          .editFirstContainer()
          .addToVolumeMounts(readOnlyMount("listener-certs", BrokerListeners.LISTENER_CERTS_DIR))
          .endContainer()
          .endSpec();
    }
    if (spec.rack != null) {
      template
          .editSpec()
          .addNewVolume()
          .withName("podinfo")
          .withNewDownwardAPI()
          .addNewItem()
          .withPath("annotations")
          .withNewFieldRef()
          .withFieldPath("metadata.annotations")
          .endFieldRef()
          .endItem()
          .endDownwardAPI()
          .endVolume()
          .editFirstContainer()
          .addNewVolumeMount()
          .withName("podinfo")
          .withMountPath(PODINFO_DIR)
          .endVolumeMount()
          .endContainer()
          .addNewTopologySpreadConstraint()
          .withTopologyKey(spec.rack.topologyKey)
          .withMaxSkew(1)
          .withWhenUnsatisfiable(spec.rack.whenUnsatisfiable.name())
          .withNewLabelSelector()
          .withMatchLabels(labels(c, "broker"))
          .endLabelSelector()
          .endTopologySpreadConstraint()
          .endSpec();
    }
    return template.build();
  }

  private static Map<String, String> podAnnotations(Cluster c) {
    Map<String, String> annotations = new TreeMap<>();
    annotations.put(CONFIG_HASH_ANNOTATION, hash(restartingProperties(c)));
    Map<String, String> own = c.getMetadata().getAnnotations();
    if (own != null && own.containsKey(MANUAL_ROLL_ANNOTATION)) {
      annotations.put(MANUAL_ROLL_ANNOTATION, own.get(MANUAL_ROLL_ANNOTATION));
    }
    return annotations;
  }

  /**
   * The broker container's shell command: the broker id is the pod's ordinal, the suffix of its
   * name; with a rack label, the broker first waits (bounded) for the operator to write its node's
   * rack on the pod, which the downward API shows in a file.
   */
  static String brokerCommand(Cluster c) {
    String start =
        "export TIDELOG_NODE_ID=\"${POD_NAME##*-}\"; exec /opt/tidelog/bin/broker --config "
            + CONFIG_DIR
            + "/server.properties";
    if (c.getSpec().rack == null) {
      return start;
    }
    String annotations = PODINFO_DIR + "/annotations";
    String key = RACK_ANNOTATION.replace(".", "\\.");
    return ("i=0; until grep -q '^%1$s=' %2$s; do i=$((i+1));"
                + " if [ $i -ge %3$d ]; then echo 'no %4$s annotation after %3$d s' >&2; exit 1; fi;"
                + " sleep 1; done;"
                + " rack=\"$(sed -n 's|^%1$s=\"\\(.*\\)\"$|\\1|p' %2$s)\";"
                + " if [ -n \"$rack\" ]; then export TIDELOG_BROKER_RACK=\"$rack\"; fi; ")
            .formatted(key, annotations, RACK_WAIT_SECONDS, RACK_ANNOTATION)
        + start;
  }

  /**
   * The JVM's options: the heap, the spec's options, and the JWKS URLs Kafka's OAUTHBEARER
   * validation may fetch (Kafka 4.1 reads none the JVM does not allow).
   */
  static String javaOptions(ClusterSpec.Jvm jvm, List<String> jwksUrls) {
    List<String> options = new ArrayList<>();
    if (!jwksUrls.isEmpty()) {
      options.add("-Dorg.apache.kafka.sasl.oauthbearer.allowed.urls=" + String.join(",", jwksUrls));
    }
    if (jvm != null && jvm.heap != null) {
      options.add("-Xms" + jvm.heap);
      options.add("-Xmx" + jvm.heap);
    }
    if (jvm != null && jvm.options != null) {
      options.addAll(jvm.options);
    }
    return String.join(" ", options);
  }

  private static PersistentVolumeClaim claimTemplate(String name, ClusterSpec.Storage storage) {
    return new PersistentVolumeClaimBuilder()
        .withNewMetadata()
        .withName(name)
        .endMetadata()
        .withNewSpec()
        .withAccessModes("ReadWriteOnce")
        .withStorageClassName(storage.storageClass)
        .withNewResources()
        .withRequests(Map.of("storage", new Quantity(storage.size)))
        .endResources()
        .endSpec()
        .build();
  }

  static PodDisruptionBudget podDisruptionBudget(Cluster c) {
    return withHash(
        new PodDisruptionBudgetBuilder()
            .withMetadata(meta(c, c.getMetadata().getName() + "-broker", "broker"))
            .withNewSpec()
            .withNewMaxUnavailable(1)
            .withNewSelector()
            .withMatchLabels(labels(c, "broker"))
            .endSelector()
            .endSpec()
            .build());
  }

  static Service etcdPeerService(Cluster c) {
    return service(
        c, etcdSet(c), "etcd", true, Map.of("client", ETCD_CLIENT_PORT, "peer", ETCD_PEER_PORT));
  }

  static Service etcdClientServiceObject(Cluster c) {
    return service(c, etcdClientService(c), "etcd", false, Map.of("client", ETCD_CLIENT_PORT));
  }

  /**
   * The managed etcd: clients and peers over TLS with certificates of the cluster CA, each member's
   * own from Secret {@code <name>-etcd-certs}, and only clients and peers with such a certificate
   * (peers only with an etcd member's); {@code /health} on plain HTTP for the kubelet alone. {@code
   * etcdTrust} is what the members trust now: its hash on the template rolls them when it changes.
   */
  static StatefulSet etcdStatefulSet(Cluster c, String etcdTrust) {
    ClusterSpec.Etcd etcd = c.getSpec().etcd;
    String ns = c.getMetadata().getNamespace();
    String peers =
        IntStream.range(0, etcd.replicas)
            .mapToObj(
                i ->
                    "%s-%d=https://%s-%d.%s.%s.svc:%d"
                        .formatted(etcdSet(c), i, etcdSet(c), i, etcdSet(c), ns, ETCD_PEER_PORT))
            .collect(Collectors.joining(","));
    String self = "$(POD_NAME).%s.%s.svc".formatted(etcdSet(c), ns);
    String cert = ETCD_CERTS_DIR + "/$(POD_NAME).crt";
    String key = ETCD_CERTS_DIR + "/$(POD_NAME).key";
    String trusted = BrokerListeners.CLUSTER_CA_DIR + "/ca.crt";
    Container container =
        new ContainerBuilder()
            .withName("etcd")
            .withImage(etcd.image)
            .withCommand(
                "etcd",
                "--name=$(POD_NAME)",
                "--data-dir=/var/lib/etcd/data",
                "--listen-client-urls=https://0.0.0.0:" + ETCD_CLIENT_PORT,
                "--advertise-client-urls=https://" + self + ":" + ETCD_CLIENT_PORT,
                "--listen-peer-urls=https://0.0.0.0:" + ETCD_PEER_PORT,
                "--initial-advertise-peer-urls=https://" + self + ":" + ETCD_PEER_PORT,
                "--listen-metrics-urls=http://0.0.0.0:" + ETCD_METRICS_PORT,
                "--initial-cluster=" + peers,
                "--cert-file=" + cert,
                "--key-file=" + key,
                "--trusted-ca-file=" + trusted,
                "--client-cert-auth",
                "--peer-cert-file=" + cert,
                "--peer-key-file=" + key,
                "--peer-trusted-ca-file=" + trusted,
                "--peer-client-cert-auth",
                "--peer-cert-allowed-cn=" + ClusterCertificates.etcdCommonName(c),
                "--initial-cluster-state=new",
                "--initial-cluster-token=" + c.getMetadata().getName(),
                // A topic takes one operation per partition, plus one, in one transaction.
                "--max-txn-ops=10000",
                // Every leader and ISR change is a revision: history older than five minutes
                // goes, as Kubernetes' API server compacts it, or etcd fills its quota. A broker
                // whose watch falls further behind reads the metadata again.
                "--auto-compaction-mode=periodic",
                "--auto-compaction-retention=5m")
            .withEnv(
                new EnvVarBuilder()
                    .withName("POD_NAME")
                    .withNewValueFrom()
                    .withNewFieldRef()
                    .withFieldPath("metadata.name")
                    .endFieldRef()
                    .endValueFrom()
                    .build())
            .addNewPort()
            .withName("client")
            .withContainerPort(ETCD_CLIENT_PORT)
            .endPort()
            .addNewPort()
            .withName("peer")
            .withContainerPort(ETCD_PEER_PORT)
            .endPort()
            .withNewReadinessProbe()
            .withNewHttpGet()
            .withPath("/health")
            .withNewPort(ETCD_METRICS_PORT)
            .endHttpGet()
            .withPeriodSeconds(5)
            .endReadinessProbe()
            .addNewVolumeMount()
            .withName("data")
            .withMountPath("/var/lib/etcd")
            .endVolumeMount()
            .addToVolumeMounts(readOnlyMount("etcd-certs", ETCD_CERTS_DIR))
            .addToVolumeMounts(readOnlyMount("cluster-ca", BrokerListeners.CLUSTER_CA_DIR))
            .withResources(etcd.resources != null ? etcd.resources : defaultEtcdResources())
            .withSecurityContext(restrictedContainer())
            .build();
    ClusterSpec.Storage storage = etcd.storage != null ? etcd.storage : defaultEtcdStorage();
    return withHash(
        new StatefulSetBuilder()
            .withMetadata(meta(c, etcdSet(c), "etcd"))
            .withNewSpec()
            .withReplicas(etcd.replicas)
            .withServiceName(etcdSet(c))
            .withPodManagementPolicy("Parallel")
            .withNewSelector()
            .withMatchLabels(labels(c, "etcd"))
            .endSelector()
            .withNewTemplate()
            .withNewMetadata()
            .withLabels(labels(c, "etcd"))
            .withAnnotations(Map.of(ETCD_TRUST_ANNOTATION, hash(etcdTrust)))
            .endMetadata()
            .withNewSpec()
            .withContainers(container)
            .withSecurityContext(restrictedPod())
            .withAutomountServiceAccountToken(false)
            .addToVolumes(
                secretVolume("etcd-certs", ClusterCertificates.etcdCertsSecret(c)),
                secretVolume("cluster-ca", ClusterCertificates.caCertSecret(c, "cluster")))
            .endSpec()
            .endTemplate()
            .withVolumeClaimTemplates(claimTemplate("data", storage))
            .endSpec()
            .build());
  }

  /**
   * What a managed etcd member asks for unless {@code etcd.resources} says otherwise: its data is
   * small (a few MiB per thousand partitions) and history is compacted every five minutes.
   */
  private static ResourceRequirements defaultEtcdResources() {
    return new ResourceRequirementsBuilder()
        .withRequests(Map.of("cpu", new Quantity("100m"), "memory", new Quantity("256Mi")))
        .withLimits(Map.of("memory", new Quantity("1Gi")))
        .build();
  }

  /**
   * The pod security of brokers and etcd members: user 1000, whose group owns the volumes, and the
   * container runtime's default seccomp profile (the Pod Security Standards' "restricted").
   */
  private static PodSecurityContext restrictedPod() {
    return new PodSecurityContextBuilder()
        .withRunAsNonRoot(true)
        .withRunAsUser(1000L)
        .withRunAsGroup(1000L)
        .withFsGroup(1000L)
        .withNewSeccompProfile()
        .withType("RuntimeDefault")
        .endSeccompProfile()
        .build();
  }

  /** A container that can write only to its volumes: no privileges, no capabilities. */
  private static SecurityContext restrictedContainer() {
    return new SecurityContextBuilder()
        .withRunAsNonRoot(true)
        .withAllowPrivilegeEscalation(false)
        .withReadOnlyRootFilesystem(true)
        .withNewCapabilities()
        .withDrop("ALL")
        .endCapabilities()
        .build();
  }

  /** Volume {@code name} at {@code path}, read only: Secrets, which only the kubelet writes. */
  private static VolumeMount readOnlyMount(String name, String path) {
    return new VolumeMountBuilder().withName(name).withMountPath(path).withReadOnly(true).build();
  }

  /** Secret {@code secret} as volume {@code name}: readable by the pods' group only. */
  private static Volume secretVolume(String name, String secret) {
    return new VolumeBuilder()
        .withName(name)
        .withNewSecret()
        .withSecretName(secret)
        .withDefaultMode(0440)
        .endSecret()
        .build();
  }

  /**
   * The broker's {@code /tmp} on a read-only root: the JVM's and Netty's scratch files (native
   * libraries unpacked there), never data.
   */
  private static Volume scratch() {
    return new VolumeBuilder()
        .withName("tmp")
        .withNewEmptyDir()
        .withSizeLimit(new Quantity("256Mi"))
        .endEmptyDir()
        .build();
  }

  private static ClusterSpec.Storage defaultEtcdStorage() {
    ClusterSpec.Storage storage = new ClusterSpec.Storage();
    storage.size = "1Gi";
    return storage;
  }

  static ObjectMeta meta(Cluster c, String name, String component) {
    return new ObjectMetaBuilder()
        .withName(name)
        .withNamespace(c.getMetadata().getNamespace())
        .withLabels(labels(c, component))
        .withAnnotations(new LinkedHashMap<>())
        // Kubernetes' garbage collector deletes what a deleted Cluster owned: no finalizer to hang.
        .withOwnerReferences(
            new OwnerReferenceBuilder()
                .withApiVersion(c.getApiVersion())
                .withKind(c.getKind())
                .withName(c.getMetadata().getName())
                .withUid(c.getMetadata().getUid())
                .withController(true)
                .withBlockOwnerDeletion(true)
                .build())
        .build();
  }

  /**
   * Stamps the object with a hash of its desired form, to tell later whether it needs an update.
   */
  static <T extends HasMetadata> T withHash(T object) {
    object.getMetadata().getAnnotations().put(DESIRED_HASH_ANNOTATION, hash(object));
    return object;
  }

  static String hash(Object value) {
    String text = value instanceof String s ? s : Serialization.asJson(value);
    try {
      byte[] digest =
          MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8));
      return HexFormat.of().formatHex(digest, 0, 8);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is part of every JDK", e);
    }
  }
}
