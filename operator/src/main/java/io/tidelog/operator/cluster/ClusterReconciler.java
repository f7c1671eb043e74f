package io.tidelog.operator.cluster;

import io.fabric8.kubernetes.api.model.EventBuilder;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.javaoperatorsdk.operator.api.config.informer.InformerEventSourceConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.ControllerConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.ErrorStatusUpdateControl;
import io.javaoperatorsdk.operator.api.reconciler.EventSourceContext;
import io.javaoperatorsdk.operator.api.reconciler.Reconciler;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.javaoperatorsdk.operator.processing.event.source.EventSource;
import io.javaoperatorsdk.operator.processing.event.source.informer.InformerEventSource;
import io.javaoperatorsdk.operator.processing.retry.GradualRetry;
import io.tidelog.operator.api.Cluster;
import io.tidelog.operator.api.ClusterSpec;
import io.tidelog.operator.api.ClusterStatus;
import io.tidelog.operator.api.Conditions;
import io.tidelog.operator.brokers.BrokerAccess;
import io.tidelog.operator.metrics.ResourceMetrics;
import java.math.BigDecimal;
import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps a {@link Cluster}'s brokers and etcd as declared, as a pipeline: pause? check the spec,
 * apply the desired objects, grow volumes, roll one out-of-date broker pod, report. No finalizer:
 * everything it creates is owned by the Cluster, so Kubernetes' garbage collector removes it with
 * the Cluster, and a namespace never waits on the operator to be deleted.
 */
// Not generation-aware: the pause and manual-roll annotations change no generation.
@ControllerConfiguration(name = "cluster", generationAwareEventProcessing = false)
@GradualRetry(maxAttempts = -1, initialInterval = 1_000, maxInterval = 30_000)
public class ClusterReconciler implements Reconciler<Cluster> {
  public static final String PAUSE_ANNOTATION = "tidelog.io/pause-reconciliation";
  private static final Logger LOG = LoggerFactory.getLogger(ClusterReconciler.class);
  private static final Duration WHILE_CHANGING = Duration.ofSeconds(5);

  /** The partitions one rebalancing step moves at most: one AlterPartitionReassignments. */
  private static final int MAX_BALANCE_MOVES = 500;

  /** How often a Cluster with listener certificates of the user's own reads them again. */
  private static final Duration OWN_CERTIFICATES_RECHECK = Duration.ofMinutes(1);

  private final BrokerAccess.Resolver brokerAccess;
  private final ResourceMetrics metrics;
  private final Duration secretPropagation;
  private final String operatorNamespace;

  /** By Cluster uid: the dynamic configs this process last gave the Cluster's brokers. */
  private final Map<String, Map<String, String>> appliedDynamic = new ConcurrentHashMap<>();

  /**
   * @param brokerAccess how the operator reaches a Cluster's brokers: their replication listener,
   *     with its own certificate, when the operator runs in Kubernetes
   * @param secretPropagation how long the kubelet may take to update a mounted Secret, which each
   *     step of a CA's renewal waits
   * @param operatorNamespace where the operator runs, whose pods may reach the brokers' replication
   *     listener; null when not known (from any namespace)
   */
  public ClusterReconciler(
      BrokerAccess.Resolver brokerAccess,
      ResourceMetrics metrics,
      Duration secretPropagation,
      String operatorNamespace) {
    this.brokerAccess = brokerAccess;
    this.operatorNamespace = operatorNamespace;
    this.metrics = metrics;
    this.secretPropagation = secretPropagation;
  }

  @Override
  public List<EventSource<?, Cluster>> prepareEventSources(EventSourceContext<Cluster> context) {
    metrics.watch(
        "Cluster",
        context.getPrimaryCache(),
        c -> c.getStatus() == null ? List.of() : c.getStatus().conditions);
    // Pod changes (Ready, deleted, recreated) drive the roll forward.
    var pods =
        InformerEventSourceConfiguration.from(Pod.class, Cluster.class)
            .withLabelSelector("app.kubernetes.io/managed-by=tidelog-operator")
            .withSecondaryToPrimaryMapper(
                pod ->
                    Set.of(
                        new ResourceID(
                            pod.getMetadata().getLabels().get("app.kubernetes.io/instance"),
                            pod.getMetadata().getNamespace())))
            .build();
    return List.of(new InformerEventSource<>(pods, context));
  }

  @Override
  public UpdateControl<Cluster> reconcile(Cluster cluster, Context<Cluster> context)
      throws Exception {
    KubernetesClient client = context.getClient();
    ClusterStatus status = copy(cluster.getStatus());
    Long generation = cluster.getMetadata().getGeneration();
    status.observedGeneration = generation;
    if ("true".equals(annotation(cluster, PAUSE_ANNOTATION))) {
      Conditions.set(
          status.conditions,
          Conditions.PAUSED,
          true,
          "Paused",
          "metadata.annotations: " + PAUSE_ANNOTATION + " is set; the operator changes nothing",
          generation);
      return update(cluster, status);
    }
    Conditions.remove(status.conditions, Conditions.PAUSED);
    String ns = cluster.getMetadata().getNamespace();
    StatefulSet brokers =
        client
            .apps()
            .statefulSets()
            .inNamespace(ns)
            .withName(ClusterModel.brokerSet(cluster))
            .get();
    StatefulSet etcd =
        client.apps().statefulSets().inNamespace(ns).withName(ClusterModel.etcdSet(cluster)).get();
    List<PersistentVolumeClaim> claims = claims(client, cluster, brokers);
    // Read from the brokers at most once a reconcile, and only when a step needs it.
    BrokerViewOnce view = new BrokerViewOnce(() -> brokerAccess.of(cluster, client));
    Optional<String> problem = SpecChecks.problem(cluster, brokers, etcd, claims, view);
    if (problem.isPresent()) {
      refuse(status, problem.get(), generation);
      return update(cluster, status);
    }
    ClusterCertificates.Outcome certificates =
        ClusterCertificates.reconcile(
            client,
            cluster,
            Instant.now(),
            secretPropagation,
            trusted -> etcdTrusts(client, cluster, trusted));
    if (certificates.problem().isPresent()) {
      String missing = certificates.problem().get();
      Conditions.set(
          status.conditions, Conditions.ERROR, true, "CertificatesMissing", missing, generation);
      Conditions.set(
          status.conditions, Conditions.READY, false, "CertificatesMissing", missing, generation);
      return update(cluster, status).rescheduleAfter(WHILE_CHANGING);
    }
    Conditions.remove(status.conditions, Conditions.ERROR);
    reportRenewals(status, certificates.renewals(), generation);
    Optional<String> draining =
        brokers != null && brokers.getSpec().getReplicas() > cluster.getSpec().replicas
            ? drain(client, cluster, brokers.getSpec().getReplicas(), status, view)
            : Optional.empty();
    // While the brokers to remove still hold replicas, the StatefulSet keeps them.
    Cluster modelled =
        draining.isPresent() ? withBrokers(cluster, brokers.getSpec().getReplicas()) : cluster;
    List<HasMetadata> desired =
        ClusterModel.desired(modelled, operatorNamespace, certificates.clusterTrust());
    desired.forEach(object -> apply(client, object));
    growClaims(client, cluster, claims);
    Map<Integer, Pod> pods = brokerPods(client, cluster);
    writeRacks(client, cluster, pods.values());
    boolean dynamicApplied = applyDynamicConfigs(client, cluster, pods.values());
    Roller.Decision decision =
        Roller.next(
            cluster.getSpec().replicas,
            ClusterModel.brokerStatefulSet(cluster).getSpec().getTemplate(),
            pods,
            view);
    if (decision instanceof Roller.Restart restart) {
      restart(client, cluster, pods.get(restart.brokerId()), restart.reason());
    }
    Optional<String> moving = draining.map(d -> "scaling down: " + d);
    if (moving.isEmpty() && decision instanceof Roller.Done && settled(cluster, pods)) {
      try {
        moving = rebalance(client, cluster, status, view).map(r -> "rebalancing: " + r);
      } catch (Exception e) {
        // Balance is an optimisation: brokers that do not answer now are balanced later.
        LOG.info(
            "Cluster {}/{}: not rebalancing now: {}",
            cluster.getMetadata().getNamespace(),
            cluster.getMetadata().getName(),
            e.toString());
      }
    }
    report(cluster, status, pods, decision, view, moving);
    boolean done =
        moving.isEmpty()
            && decision instanceof Roller.Done
            && dynamicApplied
            && Conditions.isTrue(status.conditions, Conditions.READY)
            && certificates.renewals().isEmpty();
    if (!done) {
      return update(cluster, status).rescheduleAfter(WHILE_CHANGING);
    }
    // Secrets are read by name, never watched: a user's renewed listener certificate is found so
    return BrokerListeners.anyOwnCertificate(cluster)
        ? update(cluster, status).rescheduleAfter(OWN_CERTIFICATES_RECHECK)
        : update(cluster, status);
  }

  /**
   * One step of emptying the brokers a scale-down from {@code current} removes ({@link DrainPlan}),
   * with an Event when moves start and when the brokers are empty; what it is doing, or empty once
   * they are.
   */
  private Optional<String> drain(
      KubernetesClient client,
      Cluster cluster,
      int current,
      ClusterStatus status,
      BrokerViewOnce view)
      throws Exception {
    int wanted = cluster.getSpec().replicas;
    Set<Integer> removed =
        java.util.stream.IntStream.range(wanted, current)
            .boxed()
            .collect(java.util.stream.Collectors.toCollection(java.util.TreeSet::new));
    ReplicaMoves.Step step = moves(client, cluster, status, view, new DrainPlan(removed));
    if (step.started() > 0) {
      event(
          client,
          cluster,
          "ScaleDownMoving",
          "Moving %d partition(s) off brokers %s, which the scale-down from %d to %d removes"
              .formatted(step.started(), removed, current, wanted));
    }
    if (step.done()) {
      event(
          client,
          cluster,
          "ScaleDown",
          "Removing brokers %s: they hold no partition replica".formatted(removed));
      return Optional.empty();
    }
    return Optional.of(
        step.started() > 0 || !step.throttledTopics().isEmpty()
            ? "moving %d partition(s) off brokers %s before removing them"
                .formatted(Math.max(step.moving(), step.started()), removed)
            : "waiting for %d partition move(s) in progress before moving replicas off brokers %s"
                .formatted(step.moving(), removed));
  }

  /**
   * One step of spreading replicas evenly over the brokers ({@link BalancePlan}, {@code
   * spec.rebalance: auto}) once every broker is registered, with an Event when moves start; what it
   * is doing, or empty when the replicas are spread.
   */
  private Optional<String> rebalance(
      KubernetesClient client, Cluster cluster, ClusterStatus status, BrokerViewOnce view)
      throws Exception {
    Set<Integer> members =
        java.util.stream.IntStream.range(0, cluster.getSpec().replicas)
            .boxed()
            .collect(java.util.stream.Collectors.toCollection(java.util.TreeSet::new));
    if (cluster.getSpec().rebalance == ClusterSpec.Rebalance.MANUAL
        || !view.call().liveBrokers().containsAll(members)) {
      return Optional.empty();
    }
    ReplicaMoves.Step step =
        moves(client, cluster, status, view, new BalancePlan(members, MAX_BALANCE_MOVES));
    if (step.started() > 0) {
      event(
          client,
          cluster,
          "Rebalance",
          "Moving %d partition(s) to spread replicas evenly over brokers %s"
              .formatted(step.started(), members));
    }
    // moves of others (a user's reassignment, a Topic's new replication factor) are theirs to
    // report: only this operator's, whose topics it throttled, keep the Cluster Reconciling
    boolean own = step.started() > 0 || !step.throttledTopics().isEmpty();
    return step.done() || !own
        ? Optional.empty()
        : Optional.of(
            "moving %d partition(s) to spread replicas evenly over the brokers"
                .formatted(Math.max(step.moving(), step.started())));
  }

  private ReplicaMoves.Step moves(
      KubernetesClient client,
      Cluster cluster,
      ClusterStatus status,
      BrokerViewOnce view,
      ReplicaMoves.Plan plan)
      throws Exception {
    ReplicaMoves.Step step =
        ReplicaMoves.step(
            brokerAccess.of(cluster, client),
            view.call(),
            plan,
            status.throttledTopics == null ? List.of() : status.throttledTopics);
    status.throttledTopics = step.throttledTopics().isEmpty() ? null : step.throttledTopics();
    return step;
  }

  /** Whether exactly the Cluster's brokers have pods, all Ready: no broker comes or goes. */
  private static boolean settled(Cluster cluster, Map<Integer, Pod> pods) {
    int replicas = cluster.getSpec().replicas;
    return pods.size() == replicas
        && java.util.stream.IntStream.range(0, replicas)
            .allMatch(id -> pods.containsKey(id) && Roller.isReady(pods.get(id)));
  }

  /** {@code cluster} with {@code brokers} brokers, to model the StatefulSet that keeps them. */
  private static Cluster withBrokers(Cluster cluster, int brokers) {
    Cluster copy = Serialization.clone(cluster);
    copy.getSpec().replicas = brokers;
    return copy;
  }

  /**
   * The brokers' view for one reconcile: read on first use and kept; the controller id comes from
   * it when it was read, else from a lighter DescribeCluster.
   */
  private static final class BrokerViewOnce implements Callable<BrokerView> {
    private final Supplier<BrokerAccess> access;
    private BrokerView read;

    /** {@code access} is asked on first use: after this reconcile made the certificates. */
    BrokerViewOnce(Supplier<BrokerAccess> access) {
      this.access = access;
    }

    @Override
    public BrokerView call() throws Exception {
      if (read == null) {
        read = BrokerView.read(access.get());
      }
      return read;
    }

    Optional<Integer> controllerId() throws Exception {
      return read != null ? read.controllerId() : BrokerView.controller(access.get());
    }
  }

  /**
   * A condition per CA whose renewal is under way ({@code ClusterCaRenewal}, {@code
   * ClientsCaRenewal}), True with the step as its reason; none once the renewal is done.
   */
  private void reportRenewals(
      ClusterStatus status, List<ClusterCertificates.Renewal> renewals, Long generation) {
    for (String kind : List.of("cluster", "clients")) {
      String type = Character.toUpperCase(kind.charAt(0)) + kind.substring(1) + "CaRenewal";
      Optional<ClusterCertificates.Renewal> renewal =
          renewals.stream().filter(r -> r.kind().equals(kind)).findFirst();
      if (renewal.isEmpty()) {
        Conditions.remove(status.conditions, type);
        continue;
      }
      ClusterCertificates.Renewal r = renewal.get();
      String next =
          r.waitingForEtcd()
              ? "the next step once every etcd member restarted trusting both CAs"
              : "the next step from " + r.since().plus(secretPropagation);
      Conditions.set(
          status.conditions,
          type,
          true,
          r.step().reason,
          "spec.%sCa: renewing the CA: %s (since %s; %s)"
              .formatted(kind, r.step().meaning, r.since(), next),
          generation);
    }
  }

  /**
   * Whether every member of the Cluster's managed etcd runs, Ready, from a template that trusts
   * {@code trusted} (the StatefulSet rolls them when it changes); true without a managed etcd.
   */
  private static boolean etcdTrusts(KubernetesClient client, Cluster cluster, String trusted) {
    if (!ClusterModel.managedEtcd(cluster)) {
      return true;
    }
    String expected = ClusterModel.hash(trusted);
    List<Pod> members =
        client
            .pods()
            .inNamespace(cluster.getMetadata().getNamespace())
            .withLabels(ClusterModel.labels(cluster, "etcd"))
            .list()
            .getItems();
    return members.size() == cluster.getSpec().etcd.replicas
        && members.stream()
            .allMatch(
                pod ->
                    Roller.isReady(pod)
                        && pod.getMetadata().getAnnotations() != null
                        && expected.equals(
                            pod.getMetadata()
                                .getAnnotations()
                                .get(ClusterModel.ETCD_TRUST_ANNOTATION)));
  }

  /** A spec that is refused: Error and not Ready, naming the field, and nothing changed. */
  private static void refuse(ClusterStatus status, String problem, Long generation) {
    Conditions.set(status.conditions, Conditions.ERROR, true, "InvalidSpec", problem, generation);
    Conditions.set(status.conditions, Conditions.READY, false, "InvalidSpec", problem, generation);
    Conditions.set(
        status.conditions,
        Conditions.RECONCILING,
        false,
        "InvalidSpec",
        "spec: refused; nothing was changed",
        generation);
  }

  /** Ready brokers, bootstrap address, controller, and the Ready/Reconciling conditions. */
  private static void report(
      Cluster cluster,
      ClusterStatus status,
      Map<Integer, Pod> pods,
      Roller.Decision decision,
      BrokerViewOnce view,
      Optional<String> moving) {
    Long generation = cluster.getMetadata().getGeneration();
    int replicas = cluster.getSpec().replicas;
    status.readyBrokers =
        (int)
            pods.entrySet().stream()
                .filter(e -> e.getKey() < replicas)
                .filter(e -> Roller.isReady(e.getValue()))
                .count();
    status.bootstrapServers = ClusterModel.bootstrapServers(cluster);
    status.listeners =
        BrokerListeners.clientListeners(cluster).stream()
            .map(
                l -> {
                  ClusterStatus.ListenerStatus listener = new ClusterStatus.ListenerStatus();
                  listener.name = l.name;
                  listener.bootstrapServers = ClusterModel.bootstrapServers(cluster, l);
                  // a certificate of the user's own: its CA is theirs to know
                  listener.caCertificateSecret =
                      l.tls && !BrokerListeners.ownCertificate(l)
                          ? ClusterCertificates.caCertSecret(cluster, "cluster")
                          : null;
                  return listener;
                })
            .toList();
    if (status.readyBrokers > 0) {
      try {
        status.controllerId = view.controllerId().orElse(null);
      } catch (Exception e) {
        LOG.debug(
            "Cluster {}: no controller id: {}", cluster.getMetadata().getName(), e.toString());
      }
    }
    String doing;
    if (decision instanceof Roller.Restart r) {
      doing = "restarting broker " + r.brokerId() + ": " + r.reason();
    } else if (decision instanceof Roller.Wait w) {
      doing = "rolling: " + w.why();
    } else if (moving.isPresent()) {
      doing = moving.get();
    } else if (pods.keySet().stream().anyMatch(id -> id >= replicas)) {
      doing =
          "scaling down: waiting for the pods of brokers %s to go"
              .formatted(pods.keySet().stream().filter(id -> id >= replicas).sorted().toList());
    } else {
      doing = status.readyBrokers == replicas ? null : "waiting for brokers to be Ready";
    }
    if (doing == null) {
      Conditions.set(
          status.conditions,
          Conditions.READY,
          true,
          "Ready",
          "spec.replicas: %d of %d brokers are Ready and up to date"
              .formatted(status.readyBrokers, replicas),
          generation);
      Conditions.set(
          status.conditions,
          Conditions.RECONCILING,
          false,
          "Reconciled",
          "spec: the cluster is as declared",
          generation);
    } else {
      String reason =
          !(decision instanceof Roller.Done)
              ? "RollingUpdate"
              : doing.startsWith("scaling down")
                  ? "ScaleDown"
                  : doing.startsWith("rebalancing") ? "Rebalancing" : "BrokersNotReady";
      Conditions.set(
          status.conditions,
          Conditions.READY,
          false,
          reason,
          "spec.replicas: %d of %d brokers are Ready; %s"
              .formatted(status.readyBrokers, replicas, doing),
          generation);
      Conditions.set(
          status.conditions, Conditions.RECONCILING, true, reason, "spec: " + doing, generation);
    }
  }

  /** Creates the object, or replaces it when its desired form changed since it was written. */
  private static void apply(KubernetesClient client, HasMetadata desired) {
    HasMetadata existing = client.resource(desired).get();
    if (existing == null) {
      client.resource(desired).create();
      return;
    }
    String hash = ClusterModel.DESIRED_HASH_ANNOTATION;
    if (desired.getMetadata().getAnnotations().get(hash).equals(annotation(existing, hash))) {
      return;
    }
    if (existing instanceof StatefulSet old && desired instanceof StatefulSet set) {
      // Immutable once created; volumes grow through their claims instead.
      set.getSpec().setVolumeClaimTemplates(old.getSpec().getVolumeClaimTemplates());
    }
    if (existing instanceof Service old && desired instanceof Service service) {
      service.getSpec().setClusterIP(old.getSpec().getClusterIP());
      service.getSpec().setClusterIPs(old.getSpec().getClusterIPs());
    }
    desired.getMetadata().setResourceVersion(existing.getMetadata().getResourceVersion());
    client.resource(desired).update();
  }

  private static List<PersistentVolumeClaim> claims(
      KubernetesClient client, Cluster cluster, StatefulSet brokers) {
    if (brokers == null) {
      return List.of();
    }
    return java.util.stream.IntStream.range(0, brokers.getSpec().getReplicas())
        .mapToObj(
            id ->
                client
                    .persistentVolumeClaims()
                    .inNamespace(cluster.getMetadata().getNamespace())
                    .withName(ClusterModel.dataClaim(cluster, id))
                    .get())
        .filter(java.util.Objects::nonNull)
        .toList();
  }

  /** Asks for the larger size on each claim; the storage class must allow volume expansion. */
  private static void growClaims(
      KubernetesClient client, Cluster cluster, List<PersistentVolumeClaim> claims) {
    Quantity wanted = new Quantity(cluster.getSpec().storage.size);
    BigDecimal wantedBytes = Quantity.getAmountInBytes(wanted);
    for (PersistentVolumeClaim claim : claims) {
      Quantity size = claim.getSpec().getResources().getRequests().get("storage");
      if (size == null || Quantity.getAmountInBytes(size).compareTo(wantedBytes) < 0) {
        client
            .persistentVolumeClaims()
            .inNamespace(claim.getMetadata().getNamespace())
            .withName(claim.getMetadata().getName())
            .edit(
                c -> {
                  c.getSpec().getResources().getRequests().put("storage", wanted);
                  return c;
                });
      }
    }
  }

  private static Map<Integer, Pod> brokerPods(KubernetesClient client, Cluster cluster) {
    Map<Integer, Pod> pods = new HashMap<>();
    String prefix = ClusterModel.brokerSet(cluster) + "-";
    client
        .pods()
        .inNamespace(cluster.getMetadata().getNamespace())
        .withLabels(ClusterModel.labels(cluster, "broker"))
        .list()
        .getItems()
        .forEach(
            pod -> {
              String name = pod.getMetadata().getName();
              if (name.startsWith(prefix) && name.substring(prefix.length()).matches("[0-9]+")) {
                pods.put(Integer.parseInt(name.substring(prefix.length())), pod);
              }
            });
    return pods;
  }

  /**
   * Writes on each scheduled broker pod the rack of its node (the value of the Cluster's topology
   * label), which the pod waits for before its broker starts.
   */
  private static void writeRacks(KubernetesClient client, Cluster cluster, Collection<Pod> pods) {
    if (cluster.getSpec().rack == null) {
      return;
    }
    for (Pod pod : pods) {
      String node = pod.getSpec() == null ? null : pod.getSpec().getNodeName();
      if (node == null || annotation(pod, ClusterModel.RACK_ANNOTATION) != null) {
        continue;
      }
      Node scheduled = client.nodes().withName(node).get();
      String rack =
          scheduled == null || scheduled.getMetadata().getLabels() == null
              ? null
              : scheduled.getMetadata().getLabels().get(cluster.getSpec().rack.topologyKey);
      client
          .pods()
          .inNamespace(pod.getMetadata().getNamespace())
          .withName(pod.getMetadata().getName())
          .edit(
              p -> {
                // Empty when the node lacks the label: the broker then starts without a rack.
                p.getMetadata()
                    .getAnnotations()
                    .put(ClusterModel.RACK_ANNOTATION, rack == null ? "" : rack);
                return p;
              });
    }
  }

  /**
   * Gives the brokers spec.config's dynamic keys as the cluster-wide dynamic default, once a broker
   * is Ready to take them, and says so in an Event when that changed anything. Returns whether the
   * brokers have them now; if not (none Ready yet, or Admin failed), a later reconcile tries again.
   * What this operator process applied last is not asked for again: a default changed behind its
   * back is put right at the next change of spec.config, or when the operator restarts.
   */
  private boolean applyDynamicConfigs(
      KubernetesClient client, Cluster cluster, Collection<Pod> pods) {
    Map<String, String> desired = DynamicConfigs.of(cluster);
    String uid = cluster.getMetadata().getUid();
    if (desired.equals(appliedDynamic.get(uid))) {
      return true;
    }
    if (pods.stream().noneMatch(Roller::isReady)) {
      return desired.isEmpty();
    }
    try {
      List<String> changed = DynamicConfigs.apply(brokerAccess.of(cluster, client), desired);
      appliedDynamic.put(uid, desired);
      if (!changed.isEmpty()) {
        String message =
            "Applied spec.config to the running brokers, as their dynamic default, without a"
                + " restart: "
                + String.join(", ", changed);
        LOG.info(
            "Cluster {}/{}: {}",
            cluster.getMetadata().getNamespace(),
            cluster.getMetadata().getName(),
            message);
        event(client, cluster, "BrokerConfigUpdated", message);
      }
      return true;
    } catch (Exception e) {
      LOG.warn(
          "Cluster {}/{}: applying the dynamic configs of spec.config failed, retrying: {}",
          cluster.getMetadata().getNamespace(),
          cluster.getMetadata().getName(),
          e.toString());
      return false;
    }
  }

  /**
   * Deletes the pod, so that the StatefulSet recreates it from the current template, and says why.
   */
  private static void restart(KubernetesClient client, Cluster cluster, Pod pod, String reason) {
    String message = "Restarting broker pod %s: %s".formatted(pod.getMetadata().getName(), reason);
    LOG.info(
        "Cluster {}/{}: {}",
        cluster.getMetadata().getNamespace(),
        cluster.getMetadata().getName(),
        message);
    client.resource(pod).delete();
    event(client, cluster, "BrokerRestart", message);
  }

  /** A Normal Event on the Cluster, from the operator. */
  private static void event(
      KubernetesClient client, Cluster cluster, String reason, String message) {
    String now = Instant.now().toString();
    client
        .v1()
        .events()
        .inNamespace(cluster.getMetadata().getNamespace())
        .resource(
            new EventBuilder()
                .withNewMetadata()
                .withGenerateName(cluster.getMetadata().getName() + "-")
                .endMetadata()
                .withNewInvolvedObject()
                .withApiVersion(cluster.getApiVersion())
                .withKind(cluster.getKind())
                .withName(cluster.getMetadata().getName())
                .withNamespace(cluster.getMetadata().getNamespace())
                .withUid(cluster.getMetadata().getUid())
                .endInvolvedObject()
                .withType("Normal")
                .withReason(reason)
                .withMessage(message)
                .withFirstTimestamp(now)
                .withLastTimestamp(now)
                .withCount(1)
                .withNewSource()
                .withComponent("tidelog-operator")
                .endSource()
                .build())
        .create();
  }

  @Override
  public ErrorStatusUpdateControl<Cluster> updateErrorStatus(
      Cluster cluster, Context<Cluster> context, Exception e) {
    LOG.warn(
        "Cluster {}/{}: {}",
        cluster.getMetadata().getNamespace(),
        cluster.getMetadata().getName(),
        e.toString());
    ClusterStatus status = copy(cluster.getStatus());
    Long generation = cluster.getMetadata().getGeneration();
    Conditions.set(
        status.conditions,
        Conditions.ERROR,
        true,
        "ReconcileFailed",
        "metadata.name: " + e.getMessage(),
        generation);
    Conditions.set(
        status.conditions,
        Conditions.READY,
        false,
        "ReconcileFailed",
        "metadata.name: " + e.getMessage(),
        generation);
    cluster.setStatus(status);
    return ErrorStatusUpdateControl.patchStatus(cluster);
  }

  private static String annotation(HasMetadata object, String key) {
    Map<String, String> annotations = object.getMetadata().getAnnotations();
    return annotations == null ? null : annotations.get(key);
  }

  private static UpdateControl<Cluster> update(Cluster cluster, ClusterStatus status) {
    if (Serialization.asJson(status).equals(Serialization.asJson(cluster.getStatus()))) {
      return UpdateControl.noUpdate();
    }
    cluster.setStatus(status);
    return UpdateControl.patchStatus(cluster);
  }

  private static ClusterStatus copy(ClusterStatus status) {
    return status == null
        ? new ClusterStatus()
        : Serialization.unmarshal(Serialization.asJson(status), ClusterStatus.class);
  }
}
