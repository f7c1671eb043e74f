package io.tidelog.operator.topic;

import io.fabric8.kubernetes.client.utils.Serialization;
import io.javaoperatorsdk.operator.api.config.informer.InformerEventSourceConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.Cleaner;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.ControllerConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.DeleteControl;
import io.javaoperatorsdk.operator.api.reconciler.ErrorStatusUpdateControl;
import io.javaoperatorsdk.operator.api.reconciler.EventSourceContext;
import io.javaoperatorsdk.operator.api.reconciler.MaxReconciliationInterval;
import io.javaoperatorsdk.operator.api.reconciler.Reconciler;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.javaoperatorsdk.operator.processing.event.source.EventSource;
import io.javaoperatorsdk.operator.processing.event.source.informer.InformerEventSource;
import io.javaoperatorsdk.operator.processing.retry.GradualRetry;
import io.tidelog.operator.api.Cluster;
import io.tidelog.operator.api.Conditions;
import io.tidelog.operator.api.Topic;
import io.tidelog.operator.api.TopicStatus;
import io.tidelog.operator.brokers.BrokerAccess;
import io.tidelog.operator.metrics.ResourceMetrics;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.kafka.clients.admin.TopicDescription;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps each {@link Topic}'s Kafka topic as declared: creates it, grows its partitions, changes its
 * replication factor by moving replicas (Ready is False, reason {@code Reassigning}, while they
 * move), applies its configs declaratively, and deletes it with the resource (through a finalizer)
 * unless {@code tidelog.io/deletion-policy: retain}. Stateless: every fact comes from the resource,
 * the {@link Cluster} informer and the cluster itself. JOSDK calls it from its reconciler threads,
 * one at a time per Topic.
 */
@ControllerConfiguration(
    name = "topic",
    maxReconciliationInterval =
        @MaxReconciliationInterval(interval = 5, timeUnit = TimeUnit.MINUTES))
@GradualRetry(maxAttempts = -1, initialInterval = 1_000, maxInterval = 30_000)
public class TopicReconciler implements Reconciler<Topic>, Cleaner<Topic> {
  private static final Logger LOG = LoggerFactory.getLogger(TopicReconciler.class);
  private static final Duration RECHECK = Duration.ofSeconds(15);
  private static final Duration MOVE_RECHECK = Duration.ofSeconds(2);

  private final TopicAdmins admins;
  private final BrokerAccess.Resolver brokerAccess;
  private final Duration releaseAfter;
  private final Clock clock;
  private final ResourceMetrics metrics;

  /**
   * @param releaseAfter how long a deleted Topic waits for its unreachable cluster before it is
   *     released without its Kafka topic being deleted
   */
  public TopicReconciler(
      TopicAdmins admins,
      BrokerAccess.Resolver brokerAccess,
      Duration releaseAfter,
      Clock clock,
      ResourceMetrics metrics) {
    this.admins = admins;
    this.brokerAccess = brokerAccess;
    this.releaseAfter = releaseAfter;
    this.clock = clock;
    this.metrics = metrics;
  }

  @Override
  public List<EventSource<?, Topic>> prepareEventSources(EventSourceContext<Topic> context) {
    metrics.watch(
        "Topic",
        context.getPrimaryCache(),
        t -> t.getStatus() == null ? List.of() : t.getStatus().conditions);
    var clusters =
        InformerEventSourceConfiguration.from(Cluster.class, Topic.class)
            .withPrimaryToSecondaryMapper((Topic topic) -> Set.of(clusterId(topic)))
            .withSecondaryToPrimaryMapper(
                cluster ->
                    context
                        .getPrimaryCache()
                        .list(topic -> clusterId(topic).equals(ResourceID.fromResource(cluster)))
                        .map(ResourceID::fromResource)
                        .collect(Collectors.toSet()))
            .build();
    return List.of(new InformerEventSource<>(clusters, context));
  }

  @Override
  public UpdateControl<Topic> reconcile(Topic topic, Context<Topic> context) throws Exception {
    TopicStatus status = copy(topic.getStatus());
    Optional<Cluster> cluster = context.getSecondaryResource(Cluster.class);
    try {
      checkBinding(topic, cluster, context.getPrimaryCache().list());
      TopicAdmin admin = admin(cluster.get(), context);
      String name = topic.topicName();
      var existing = admin.describe(name);
      if (existing.isPresent() && status.topicId == null && !adopts(topic)) {
        status = ownStatusOf(topic, existing.get(), context);
      }
      if (existing.isPresent() && status.topicId == null && !adopts(topic)) {
        throw new TopicChanges.Refused(
            "TopicExists",
            "metadata.name: topic %s exists already; annotate the Topic with %s=true to manage it"
                .formatted(name, Topic.ADOPT_ANNOTATION));
      }
      TopicState state =
          existing.isPresent()
              ? TopicChanges.update(admin, name, topic.getSpec(), existing.get())
              : TopicChanges.create(admin, name, topic.getSpec());
      status.topicName = name;
      status.topicId = state.topicId();
      status.partitions = state.partitions();
      status.replicas = state.replicas();
      setReady(topic, status, true, "Reconciled", "spec: the topic is as declared");
      return update(topic, status);
    } catch (TopicChanges.Refused e) {
      setReady(topic, status, false, e.reason, e.getMessage());
      return update(topic, status).rescheduleAfter(RECHECK);
    } catch (TopicChanges.Moving e) {
      setReady(topic, status, false, "Reassigning", e.getMessage());
      return update(topic, status).rescheduleAfter(MOVE_RECHECK);
    }
  }

  /**
   * The Topic's status as the API server holds it, when that names the existing topic's id: the
   * informer cache may not hold this reconciler's own last status write yet (a reconciliation right
   * after the one that created the topic), and a topic this Topic created is its own, not one to
   * refuse. Otherwise {@code topic}'s status.
   */
  private static TopicStatus ownStatusOf(
      Topic topic, TopicDescription existing, Context<Topic> context) {
    Topic fresh = context.getClient().resource(topic).get();
    if (fresh != null
        && fresh.getStatus() != null
        && existing.topicId().toString().equals(fresh.getStatus().topicId)) {
      return copy(fresh.getStatus());
    }
    return copy(topic.getStatus());
  }

  /** Refuses a Topic that may not act on its Kafka topic now. */
  private static void checkBinding(Topic topic, Optional<Cluster> cluster, Stream<Topic> all)
      throws TopicChanges.Refused {
    ResourceID ref = clusterId(topic);
    String clusterName = ref.getNamespace().orElseThrow() + "/" + ref.getName();
    if (cluster.isEmpty()) {
      throw new TopicChanges.Refused(
          "ClusterNotFound", "spec.clusterRef: Cluster " + clusterName + " does not exist");
    }
    String namespace = topic.getMetadata().getNamespace();
    if (!cluster.get().accepts(namespace)) {
      throw new TopicChanges.Refused(
          "Forbidden",
          "spec.clusterRef: Cluster %s does not accept Topics from namespace %s (its spec.topicNamespaces)"
              .formatted(clusterName, namespace));
    }
    Topic owner =
        all.filter(t -> t.getMetadata().getDeletionTimestamp() == null)
            .filter(t -> clusterId(t).equals(ref) && t.topicName().equals(topic.topicName()))
            .min(
                Comparator.comparing((Topic t) -> t.getMetadata().getCreationTimestamp())
                    .thenComparing(t -> t.getMetadata().getNamespace())
                    .thenComparing(t -> t.getMetadata().getName()))
            .orElse(topic);
    if (!owner.getMetadata().getUid().equals(topic.getMetadata().getUid())) {
      throw new TopicChanges.Refused(
          "ResourceConflict",
          "metadata.name: topic %s of Cluster %s is managed by the older Topic %s/%s"
              .formatted(
                  topic.topicName(),
                  clusterName,
                  owner.getMetadata().getNamespace(),
                  owner.getMetadata().getName()));
    }
    if (cluster.get().getStatus() == null || cluster.get().getStatus().bootstrapServers == null) {
      throw new TopicChanges.Refused(
          "ClusterNotReady",
          "spec.clusterRef: Cluster " + clusterName + " has no bootstrap address yet");
    }
  }

  private TopicAdmin admin(Cluster cluster, Context<Topic> context) {
    return admins.forCluster(
        cluster.getMetadata().getNamespace() + "/" + cluster.getMetadata().getName(),
        () -> brokerAccess.of(cluster, context.getClient()));
  }

  /** A failure of the cluster or of the API: JOSDK retries with back-off; the status says why. */
  @Override
  public ErrorStatusUpdateControl<Topic> updateErrorStatus(
      Topic topic, Context<Topic> context, Exception e) {
    LOG.warn(
        "Topic {}/{}: {}",
        topic.getMetadata().getNamespace(),
        topic.getMetadata().getName(),
        e.toString());
    TopicStatus status = copy(topic.getStatus());
    setReady(topic, status, false, "ClusterUnreachable", "spec.clusterRef: " + e.getMessage());
    topic.setStatus(status);
    return ErrorStatusUpdateControl.patchStatus(topic);
  }

  @Override
  public DeleteControl cleanup(Topic topic, Context<Topic> context) {
    TopicStatus status = topic.getStatus();
    boolean retain =
        "retain".equals(topic.getMetadata().getAnnotations().get(Topic.DELETION_POLICY_ANNOTATION));
    Optional<Cluster> cluster = context.getSecondaryResource(Cluster.class);
    if (retain || status == null || status.topicId == null || cluster.isEmpty()) {
      // Nothing of ours to delete: retained, never created or adopted, or gone with its Cluster.
      return DeleteControl.defaultDelete();
    }
    try {
      admin(cluster.get(), context).delete(status.topicName);
      return DeleteControl.defaultDelete();
    } catch (Exception e) {
      Instant deleted = Instant.parse(topic.getMetadata().getDeletionTimestamp());
      if (clock.instant().isAfter(deleted.plus(releaseAfter))) {
        LOG.warn(
            "Releasing Topic {}/{} without deleting topic {}: its cluster did not answer for {} s",
            topic.getMetadata().getNamespace(),
            topic.getMetadata().getName(),
            status.topicName,
            releaseAfter.toSeconds(),
            e);
        return DeleteControl.defaultDelete();
      }
      return DeleteControl.noFinalizerRemoval().rescheduleAfter(RECHECK.toMillis());
    }
  }

  private static ResourceID clusterId(Topic topic) {
    var ref = topic.getSpec().clusterRef;
    return new ResourceID(
        ref.name, ref.namespace != null ? ref.namespace : topic.getMetadata().getNamespace());
  }

  private static boolean adopts(Topic topic) {
    return "true".equals(topic.getMetadata().getAnnotations().get(Topic.ADOPT_ANNOTATION));
  }

  private static void setReady(
      Topic topic, TopicStatus status, boolean ready, String reason, String message) {
    status.observedGeneration = topic.getMetadata().getGeneration();
    Conditions.set(
        status.conditions, Conditions.READY, ready, reason, message, status.observedGeneration);
  }

  /** Patches the status only when it changed, so that a steady Topic costs no writes. */
  private static UpdateControl<Topic> update(Topic topic, TopicStatus status) {
    if (Serialization.asJson(status).equals(Serialization.asJson(topic.getStatus()))) {
      return UpdateControl.noUpdate();
    }
    Conditions.find(status.conditions, Conditions.READY)
        .ifPresent(
            ready ->
                LOG.info(
                    "Topic {}/{}: Ready={} {}: {}",
                    topic.getMetadata().getNamespace(),
                    topic.getMetadata().getName(),
                    ready.getStatus(),
                    ready.getReason(),
                    ready.getMessage()));
    topic.setStatus(status);
    return UpdateControl.patchStatus(topic);
  }

  private static TopicStatus copy(TopicStatus status) {
    return status == null
        ? new TopicStatus()
        : Serialization.unmarshal(Serialization.asJson(status), TopicStatus.class);
  }
}
