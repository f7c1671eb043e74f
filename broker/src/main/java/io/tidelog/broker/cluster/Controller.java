package io.tidelog.broker.cluster;

import static java.nio.charset.StandardCharsets.UTF_8;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.election.CampaignResponse;
import io.etcd.jetcd.election.LeaderKey;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.tidelog.broker.config.EffectiveTopicConfigs;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.common.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.event.Level;

/**
 * The controller: every broker campaigns with jetcd's Election on its registration lease; the
 * elected one moves partition leadership when brokers come and go. For each partition it
 *
 * <ul>
 *   <li>removes brokers that are no longer registered, or are in a controlled shutdown, from the
 *       ISR;
 *   <li>elects a new leader from the live ISR, in replica order, when the leader is gone or
 *       shutting down, bumping the leader epoch; with no live ISR member the partition goes offline
 *       (leader -1), unless the topic enables {@code unclean.leader.election.enable}, which elects
 *       any live replica and logs the possible loss;
 *   <li>with {@code auto.leader.rebalance.enable}, every {@code
 *       leader.imbalance.check.interval.seconds}, moves leadership back to the preferred (first)
 *       replica when it is in the ISR.
 * </ul>
 *
 * <p>Each pass decides the partitions that a new image changed, every partition when a broker or
 * candidate came or went, and writes its decisions together, in batched etcd transactions ({@link
 * MetadataStore#writePartitions}), as Kafka's controller appends its records in batches: moving the
 * leadership of a failed broker's 100,000 partitions takes under a thousand transactions, not
 * 100,000. Every write is fenced: its transaction also compares the election key's create revision,
 * so a deposed controller cannot write. All work runs on the controller's own thread.
 */
public final class Controller implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(Controller.class);
  private static final long CAMPAIGN_POLL_MS = 1_000;
  private static final long RETRY_MS = 1_000;

  private final MetadataStore store;
  private final int nodeId;
  private final EffectiveTopicConfigs topicConfigs;
  private final boolean autoRebalance;
  private final ScheduledExecutorService thread =
      Executors.newSingleThreadScheduledExecutor(r -> new Thread(r, "tidelog-controller"));
  private final AtomicBoolean reconcileQueued = new AtomicBoolean();
  private boolean changedAll;
  private Set<TopicPartition> changedPartitions = new HashSet<>();
  private Set<String> changedTopics = new HashSet<>();
  private volatile LeaderKey leaderKey;
  private volatile long campaignLease = -1;
  private final AtomicLong elections = new AtomicLong();
  private volatile boolean closed;

  /**
   * @param topicConfigs the topics' effective configs
   */
  public Controller(
      MetadataStore store,
      int nodeId,
      EffectiveTopicConfigs topicConfigs,
      boolean autoRebalance,
      long rebalanceIntervalMs) {
    this.store = store;
    this.nodeId = nodeId;
    this.topicConfigs = topicConfigs;
    this.autoRebalance = autoRebalance;
    store.addListener(this::onImage);
    thread.scheduleWithFixedDelay(
        () -> reconcile(autoRebalance, null),
        rebalanceIntervalMs,
        rebalanceIntervalMs,
        TimeUnit.MILLISECONDS);
  }

  /** Whether this broker is the controller now. */
  public boolean isActive() {
    return leaderKey != null;
  }

  /** How many times this broker has won the controller election. */
  public long elections() {
    return elections.get();
  }

  private ByteSequence electionName() {
    return store.key(ClusterImage.CONTROLLER);
  }

  /** Campaigns with {@code lease} (a new registration's) until elected or closed. */
  public void campaign(long lease) {
    campaignLease = lease;
    thread.execute(() -> runCampaign(lease));
  }

  private void runCampaign(long lease) {
    if (closed || lease != campaignLease) {
      return;
    }
    CompletableFuture<CampaignResponse> campaign =
        store
            .client()
            .getElectionClient()
            .campaign(electionName(), lease, ByteSequence.from(String.valueOf(nodeId), UTF_8));
    while (!closed && lease == campaignLease) {
      try {
        leaderKey = campaign.get(CAMPAIGN_POLL_MS, TimeUnit.MILLISECONDS).getLeader();
        elections.incrementAndGet();
        LOG.info("Broker {} is the controller (epoch {})", nodeId, leaderKey.getRevision());
        reconcile(false, null);
        return;
      } catch (java.util.concurrent.TimeoutException e) {
        // still a candidate
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      } catch (Exception e) {
        LOG.warn("Campaigning for controller failed: {}", e.toString());
        thread.schedule(() -> runCampaign(lease), CAMPAIGN_POLL_MS, TimeUnit.MILLISECONDS);
        return;
      }
    }
    campaign.cancel(true);
  }

  /**
   * Notes what a new image changed, to be decided again: the partitions written and those of the
   * topics changed; everything when brokers or candidates changed, since a broker that goes or
   * comes touches any partition.
   */
  private void onImage(ClusterImage image, MetadataDelta delta) {
    if (leaderKey == null || closed) {
      return; // once elected, the controller reconciles every partition
    }
    synchronized (this) {
      // new dynamic broker configs may turn unclean.leader.election.enable on for any topic
      if (delta.everything() || delta.brokers() || delta.candidates() || delta.brokerConfigs()) {
        changedAll = true;
      } else {
        changedPartitions.addAll(delta.partitions());
        changedTopics.addAll(delta.topics());
      }
    }
    queueReconcile();
  }

  private synchronized void markAllChanged() {
    changedAll = true;
  }

  private void queueReconcile() {
    if (reconcileQueued.compareAndSet(false, true)) {
      try {
        thread.execute(
            () -> {
              reconcileQueued.set(false);
              reconcileChanged();
            });
      } catch (RejectedExecutionException e) {
        reconcileQueued.set(false); // closed
      }
    }
  }

  /** Decides again what changed since the last reconcile. Controller thread only. */
  private void reconcileChanged() {
    boolean all;
    Set<TopicPartition> partitions;
    Set<String> topics;
    synchronized (this) {
      all = changedAll;
      partitions = changedPartitions;
      topics = changedTopics;
      changedAll = false;
      changedPartitions = new HashSet<>();
      changedTopics = new HashSet<>();
    }
    if (all) {
      reconcile(false, null);
      return;
    }
    ClusterImage image = store.image();
    Set<TopicPartition> scope = new HashSet<>(partitions);
    for (String name : topics) {
      TopicMetadata topic = image.topics().get(name);
      for (int p = 0; topic != null && p < topic.partitions(); p++) {
        scope.add(new TopicPartition(name, p));
      }
    }
    if (!scope.isEmpty()) {
      reconcile(false, scope);
    }
  }

  /**
   * Decides the partitions in {@code scope} (every one when null) from the current image and writes
   * what should change. Controller thread only.
   */
  private void reconcile(boolean rebalance, Set<TopicPartition> scope) {
    LeaderKey key = leaderKey;
    if (key == null || closed) {
      return;
    }
    ClusterImage image = store.image();
    if (image.revision() < key.getRevision()) {
      markAllChanged(); // the image has not seen our election yet; the next one brings it
      return;
    }
    String ourKey = key.getKey().toString(UTF_8);
    if (image.candidates().keySet().stream().noneMatch(ourKey::endsWith)) {
      LOG.warn("Broker {} is no longer the controller: its election key is gone", nodeId);
      leaderKey = null;
      return;
    }
    Cmp fence = new Cmp(key.getKey(), Cmp.Op.EQUAL, CmpTarget.createRevision(key.getRevision()));
    Set<Integer> active = image.activeBrokers();
    List<MetadataStore.PartitionChange> changes = new ArrayList<>();
    Map<String, List<MetadataStore.PartitionChange>> completions = new TreeMap<>();
    for (TopicPartition tp : scope == null ? image.partitions().keySet() : scope) {
      TopicMetadata topic = image.topics().get(tp.topic());
      PartitionState state = image.partitions().get(tp);
      if (topic == null || state == null || tp.partition() >= topic.partitions()) {
        continue;
      }
      List<Integer> replicas = topic.replicas(tp.partition());
      Optional<PartitionState> decided =
          decide(
              tp,
              state,
              replicas,
              active,
              topicConfigs
                  .of(topic.name(), topic.modRevision(), topic.configs())
                  .uncleanLeaderElection(),
              rebalance && autoRebalance);
      if (decided.isPresent()) {
        changes.add(new MetadataStore.PartitionChange(tp, state, decided.get()));
        continue; // a move completes once the partition is settled
      }
      topic
          .reassignment(tp.partition())
          .flatMap(move -> move.completion(replicas, state, active))
          .ifPresent(
              done ->
                  completions
                      .computeIfAbsent(tp.topic(), t -> new ArrayList<>())
                      .add(new MetadataStore.PartitionChange(tp, state, done)));
    }
    completions.forEach((name, done) -> completeReassignments(image, name, done, fence));
    if (changes.isEmpty()) {
      return;
    }
    try {
      int written = store.writePartitions(changes, List.of(fence)).size();
      List<TopicPartition> offline =
          changes.stream()
              .filter(c -> c.next().leader() == PartitionState.NO_LEADER)
              .map(MetadataStore.PartitionChange::tp)
              .toList();
      long leaders =
          changes.stream().filter(c -> c.next().leader() != c.expected().leader()).count();
      LOG.atLevel(offline.isEmpty() ? Level.INFO : Level.ERROR)
          .log(
              "Controller {} wrote {} of {} partition state changes: {} new leaders, {} offline"
                  + " (no live replica in the ISR){}",
              nodeId,
              written,
              changes.size(),
              leaders - offline.size(),
              offline.size(),
              offline.isEmpty()
                  ? ""
                  : ", such as " + offline.subList(0, Math.min(offline.size(), 10)));
    } catch (RuntimeException e) {
      LOG.warn(
          "Writing {} partition state changes failed, deciding again in {} ms: {}",
          changes.size(),
          RETRY_MS,
          e.getMessage());
      markAllChanged();
      thread.schedule(this::queueReconcile, RETRY_MS, TimeUnit.MILLISECONDS);
    }
  }

  /**
   * Completes the moves of {@code topic} whose target replicas are all in the ISR: the replicas
   * become the targets and the partitions' states change with them, in one write per {@value
   * PartitionReassigner#MAX_STATES_PER_WRITE} partitions. A write that fails because the topic or a
   * state changed first is decided again on the image that change brings.
   */
  private void completeReassignments(
      ClusterImage image, String name, List<MetadataStore.PartitionChange> done, Cmp fence) {
    for (int from = 0; from < done.size(); from += PartitionReassigner.MAX_STATES_PER_WRITE) {
      TopicMetadata topic = store.image().topics().get(name);
      if (topic == null || image.topics().get(name).modRevision() != topic.modRevision()) {
        return; // changed meanwhile: the next image brings the partitions here again
      }
      List<MetadataStore.PartitionChange> batch =
          done.subList(
              from, Math.min(done.size(), from + PartitionReassigner.MAX_STATES_PER_WRITE));
      TopicMetadata next = topic;
      for (MetadataStore.PartitionChange change : batch) {
        int p = change.tp().partition();
        List<Integer> target = topic.reassignment(p).orElseThrow().target(topic.replicas(p));
        next = next.withReplicas(p, target, null);
      }
      try {
        boolean written = store.writeReplicas(topic, next, batch, List.of(fence));
        LOG.info(
            "Controller {} {} the reassignment of {} partition(s) of {}",
            nodeId,
            written ? "completed" : "could not yet complete",
            batch.size(),
            name);
        image = store.image();
      } catch (RuntimeException e) {
        LOG.warn("Completing reassignments of {} failed: {}", name, e.getMessage());
        markAllChanged();
        thread.schedule(this::queueReconcile, RETRY_MS, TimeUnit.MILLISECONDS);
        return;
      }
    }
  }

  /**
   * The state a partition should move to, or empty when it is right as it is. A broker that is not
   * one of {@code replicas} (a move removed it) counts as gone.
   */
  static Optional<PartitionState> decide(
      TopicPartition tp,
      PartitionState state,
      List<Integer> replicas,
      Set<Integer> live,
      boolean unclean,
      boolean rebalance) {
    List<Integer> liveIsr =
        state.isr().stream().filter(r -> live.contains(r) && replicas.contains(r)).toList();
    if (state.leader() != PartitionState.NO_LEADER
        && live.contains(state.leader())
        && replicas.contains(state.leader())) {
      if (liveIsr.size() < state.isr().size()) {
        return Optional.of(state.withIsr(liveIsr));
      }
      int preferred = replicas.get(0);
      if (rebalance && preferred != state.leader() && liveIsr.contains(preferred)) {
        LOG.debug("{}: moving leadership back to preferred replica {}", tp, preferred);
        return Optional.of(state.withLeader(preferred, liveIsr));
      }
      return Optional.empty();
    }
    Optional<Integer> clean = replicas.stream().filter(liveIsr::contains).findFirst();
    if (clean.isPresent()) {
      LOG.debug("{}: broker {} leads after {}", tp, clean.get(), state.leader());
      return Optional.of(state.withLeader(clean.get(), liveIsr));
    }
    if (unclean) {
      Optional<Integer> any = replicas.stream().filter(live::contains).findFirst();
      if (any.isPresent()) {
        LOG.warn(
            "{}: UNCLEAN leader election: broker {} leads though it was not in the ISR {};"
                + " records acknowledged by the old ISR may be lost",
            tp,
            any.get(),
            state.isr());
        return Optional.of(state.withLeader(any.get(), List.of(any.get())));
      }
    }
    if (state.leader() != PartitionState.NO_LEADER) {
      LOG.debug(
          "{}: offline: no live replica of the ISR {} (unclean election is {})",
          tp,
          state.isr(),
          unclean ? "on, but no replica lives" : "off");
      return Optional.of(state.withLeader(PartitionState.NO_LEADER, state.isr()));
    }
    return Optional.empty();
  }

  /** Resigns the controller, so that another broker takes over within milliseconds. */
  public void resign() {
    LeaderKey key = leaderKey;
    leaderKey = null;
    campaignLease = -1;
    if (key != null) {
      try {
        MetadataStore.get(store.client().getElectionClient().resign(key));
        LOG.info("Broker {} resigned the controller", nodeId);
      } catch (RuntimeException e) {
        LOG.warn("Resigning the controller failed: {}", e.getMessage());
      }
    }
  }

  @Override
  public void close() {
    closed = true;
    thread.shutdownNow();
    try {
      thread.awaitTermination(MetadataStore.TIMEOUT_MS, TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
