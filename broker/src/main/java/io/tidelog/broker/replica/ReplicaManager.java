package io.tidelog.broker.replica;

import io.netty.util.HashedWheelTimer;
import io.tidelog.broker.cluster.ClusterImage;
import io.tidelog.broker.cluster.MetadataDelta;
import io.tidelog.broker.cluster.MetadataStore;
import io.tidelog.broker.cluster.MetadataStore.PartitionChange;
import io.tidelog.broker.cluster.PartitionState;
import io.tidelog.broker.cluster.TopicMetadata;
import io.tidelog.broker.config.EffectiveTopicConfigs;
import io.tidelog.broker.log.ActiveProducer;
import io.tidelog.broker.log.EpochEndOffset;
import io.tidelog.broker.log.LogAppendInfo;
import io.tidelog.broker.log.LogCleaner;
import io.tidelog.broker.log.LogConfig;
import io.tidelog.broker.log.LogManager;
import io.tidelog.broker.log.PartitionLog;
import io.tidelog.broker.quota.ReplicationQuota;
import io.tidelog.broker.quota.ThrottledReplicas;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Function;
import java.util.function.IntConsumer;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.NotLeaderOrFollowerException;
import org.apache.kafka.common.errors.OffsetOutOfRangeException;
import org.apache.kafka.common.errors.ReplicaNotAvailableException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.record.ControlRecordType;
import org.apache.kafka.common.record.EndTransactionMarker;
import org.apache.kafka.common.record.FileRecords.TimestampAndOffset;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.RecordBatch;
import org.apache.kafka.storage.internals.log.AppendOrigin;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The partition replicas this broker hosts, each owned by one storage shard: a single thread that
 * makes every call into that partition's {@link Partition} and {@link PartitionLog}, so neither
 * needs locks. Callers get futures and never block.
 *
 * <p>Roles come from the cluster metadata: every new {@link ClusterImage} is applied to the
 * partitions assigned here, making each leader or follower; followers fetch through {@link
 * ReplicaFetchers}. Leaders check their ISR every half {@code replica.lag.time.max.ms}, and after
 * each follower fetch, and write changes to etcd as compare-and-swaps.
 */
public final class ReplicaManager implements FollowedPartitions, AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(ReplicaManager.class);

  /** How long a leader waits before it writes an ISR change again after a failed write. */
  private static final long ISR_CHANGE_RETRY_MS = 500;

  private static final long PURGATORY_TICK_MS = 5;

  /**
   * The most waiting fetches a change made in place on an event loop checks there; a partition with
   * more has them checked on its shard's thread, so an event loop's share stays small.
   */
  private static final int IN_PLACE_FETCH_CHECKS = 16;

  private final int localId;
  private final LogManager logManager;
  private final MetadataStore metadata;
  private final EffectiveTopicConfigs topicConfigs;

  /** {@code leader.replication.throttled.rate}, for followers out of the ISR (KIP-73). */
  private final ReplicationQuota leaderQuota;

  /**
   * The throttled replicas here of each topic that sets {@code leader.replication.throttled
   * .replicas} or {@code follower.replication.throttled.replicas}, parsed as metadata applies.
   */
  private final Map<String, ThrottledReplicas> leaderThrottled = new ConcurrentHashMap<>();

  private final Map<String, ThrottledReplicas> followerThrottled = new ConcurrentHashMap<>();

  private final long replicaLagTimeMaxMs;
  private final Shard[] shards;
  private final IsrChangeSender isrChanges;

  /** ISR checks, and the purgatories' expirations. */
  private final ScheduledThreadPoolExecutor timer =
      new ScheduledThreadPoolExecutor(1, r -> new Thread(r, "tidelog-replica-timer"));

  /**
   * The purgatories' expirations, within {@value #PURGATORY_TICK_MS} ms of their time: a timing
   * wheel, as Kafka's purgatory has, which event loops schedule on and cancel without a lock.
   */
  private final HashedWheelTimer purgatoryTimer =
      new HashedWheelTimer(
          r -> new Thread(r, "tidelog-purgatory-timer"), PURGATORY_TICK_MS, TimeUnit.MILLISECONDS);

  private final Purgatory fetchPurgatory = new Purgatory(purgatoryTimer);
  private final Purgatory producePurgatory = new Purgatory(purgatoryTimer);
  private final FetchReader fetchReader = new FetchReader(this);
  private final Map<TopicPartition, Partition> partitions = new ConcurrentHashMap<>();
  private final List<LeadershipListener> leadershipListeners = new CopyOnWriteArrayList<>();
  private final List<MarkerListener> markerListeners = new CopyOnWriteArrayList<>();
  private final Set<TopicPartition> cleaning = ConcurrentHashMap.newKeySet();
  private final LogDirMoves logDirMoves;
  private final LongAdder isrShrinks = new LongAdder();
  private final LongAdder isrExpands = new LongAdder();
  private ReplicaFetchers fetchers;
  private ClusterImage applied = ClusterImage.EMPTY;
  private Map<String, String> appliedDefaults = Map.of();

  public ReplicaManager(
      int localId,
      LogManager logManager,
      MetadataStore metadata,
      EffectiveTopicConfigs topicConfigs,
      int shardCount,
      long replicaLagTimeMaxMs,
      Executor metadataExecutor,
      ReplicationQuota leaderQuota,
      ReplicationQuota alterLogDirsQuota) {
    this.localId = localId;
    this.leaderQuota = leaderQuota;
    this.logManager = logManager;
    this.metadata = metadata;
    this.topicConfigs = topicConfigs;
    this.replicaLagTimeMaxMs = replicaLagTimeMaxMs;
    this.isrChanges = new IsrChangeSender(metadata, metadataExecutor);
    purgatoryTimer.start(); // now, not on an event loop's first watch, which would wait for it
    this.shards = new Shard[shardCount];
    for (int i = 0; i < shardCount; i++) {
      shards[i] = new Shard("tidelog-shard-" + i);
    }
    this.logDirMoves =
        new LogDirMoves(
            logManager,
            alterLogDirsQuota,
            timer,
            tp -> shard(tp).client(),
            partitions::get,
            cleaning::contains);
  }

  /**
   * Starts following the cluster metadata, with {@code fetchers} for the follower side. The current
   * image is applied once the broker has registered ({@link #reapplyMetadata}).
   */
  public void start(ReplicaFetchers replicaFetchers) {
    this.fetchers = replicaFetchers;
    metadata.addListener(this::applyImage);
    timer.scheduleWithFixedDelay(
        this::checkIsrs, replicaLagTimeMaxMs / 2, replicaLagTimeMaxMs / 2, TimeUnit.MILLISECONDS);
  }

  /**
   * Told, on the partition's shard, whenever this broker starts leading a partition ({@code
   * leader}, with its epoch) or stops, as Kafka's group coordinator is told of elections and
   * resignations of {@code __consumer_offsets} partitions.
   */
  @FunctionalInterface
  public interface LeadershipListener {
    void onLeadershipChange(TopicPartition tp, boolean leader, int leaderEpoch);
  }

  public void addLeadershipListener(LeadershipListener listener) {
    leadershipListeners.add(listener);
  }

  private void notifyLeadership(TopicPartition tp, boolean leader, int leaderEpoch) {
    for (LeadershipListener listener : leadershipListeners) {
      try {
        listener.onLeadershipChange(tp, leader, leaderEpoch);
      } catch (RuntimeException e) {
        LOG.error("{}: a leadership listener failed", tp, e);
      }
    }
  }

  public int localId() {
    return localId;
  }

  /** The effective log config of a topic: the broker's defaults under the topic's overrides. */
  private EffectiveTopicConfigs.Effective effective(TopicMetadata topic) {
    return topicConfigs.of(topic.name(), topic.modRevision(), topic.configs());
  }

  /**
   * Applies what {@code delta} says changed in {@code image} to the partitions assigned here (every
   * one of them when it says everything changed); deletes the logs of topics that were in the
   * previous image and are gone, or were replaced by a topic of the same name. Logs of topics this
   * broker never saw in the metadata are left in place: a wrong or wiped etcd must not delete data.
   * An image older than the one applied (a full {@link #reapplyMetadata} overtook its listener
   * call) is already in it.
   */
  private synchronized void applyImage(ClusterImage image, MetadataDelta delta) {
    if (!delta.everything() && image.revision() <= applied.revision()) {
      return;
    }
    long nowMs = System.currentTimeMillis();
    // Deletions queue on the shards first, so a topic deleted and created again under the same
    // name between two images starts from an empty log
    for (String name : delta.everything() ? applied.topics().keySet() : delta.topics()) {
      TopicMetadata before = applied.topics().get(name);
      TopicMetadata now = image.topics().get(name);
      if (before != null && (now == null || !now.topicId().equals(before.topicId()))) {
        deleteLocalReplicas(before);
      }
      if (now == null) {
        leaderThrottled.remove(name);
        followerThrottled.remove(name);
      }
    }
    for (String name : delta.everything() ? image.topics().keySet() : delta.topics()) {
      TopicMetadata now = image.topics().get(name);
      if (now != null) {
        throttle(
            leaderThrottled, name, now.configs().get(ReplicationQuota.LEADER_THROTTLED_REPLICAS));
        throttle(
            followerThrottled,
            name,
            now.configs().get(ReplicationQuota.FOLLOWER_THROTTLED_REPLICAS));
      }
    }
    // New topic defaults (dynamic broker configs) change every topic's configs; other dynamic
    // configs, such as the connection limits, change none
    Map<String, String> defaults = topicConfigs.defaults();
    boolean newDefaults = !defaults.equals(appliedDefaults);
    appliedDefaults = defaults;
    Collection<String> changedTopics =
        delta.everything() || newDefaults ? image.topics().keySet() : delta.topics();
    for (String name : changedTopics) {
      TopicMetadata topic = image.topics().get(name);
      for (int p = 0; topic != null && p < topic.partitions(); p++) {
        applyPartition(image, topic, p, nowMs);
      }
    }
    for (TopicPartition tp : delta.partitions()) {
      TopicMetadata topic = image.topics().get(tp.topic());
      if (topic != null
          && !changedTopics.contains(tp.topic())
          && tp.partition() < topic.partitions()) {
        applyPartition(image, topic, tp.partition(), nowMs);
      }
    }
    if (delta.everything()) {
      for (TopicPartition tp : logManager.logs().keySet()) {
        TopicMetadata topic = image.topics().get(tp.topic());
        if (topic != null
            && tp.partition() < topic.partitions()
            && !topic.replicas(tp.partition()).contains(localId)) {
          shard(tp).execute(() -> deleteStrayLog(tp, topic.topicId()));
        }
      }
    }
    applied = image;
  }

  /**
   * Deletes the log here of a partition of the topic {@code topicId} that has no replica here: a
   * move took it away while this broker was down (Kafka's stray replica). Only a log recorded as
   * that topic's goes; one of a topic that etcd does not know, or knows by another id, stays. Shard
   * only.
   */
  private void deleteStrayLog(TopicPartition tp, Uuid topicId) {
    if (partitions.containsKey(tp)) {
      return; // a replica here after all: the metadata changed since
    }
    try {
      if (logManager.deleteStrayLog(tp, topicId)) {
        LOG.warn(
            "{}: no replica here since a move while this broker was away; deleted its log", tp);
      }
    } catch (IOException e) {
      LOG.error("{}: deleting the stray log failed", tp, e);
    }
  }

  private void applyPartition(ClusterImage image, TopicMetadata topic, int p, long nowMs) {
    TopicPartition tp = new TopicPartition(topic.name(), p);
    PartitionState state = image.partitions().get(tp);
    if (state == null) {
      return;
    }
    if (!topic.replicas(p).contains(localId)) {
      shard(tp).execute(() -> maybeRemoveReplica(tp));
      return;
    }
    EffectiveTopicConfigs.Effective config = effective(topic);
    shard(tp)
        .execute(() -> apply(tp, topic, config.log(), state, config.minInsyncReplicas(), nowMs));
  }

  private void apply(
      TopicPartition tp,
      TopicMetadata topic,
      LogConfig config,
      PartitionState state,
      int minIsr,
      long nowMs) {
    try {
      Partition partition =
          partitions.computeIfAbsent(
              tp,
              k ->
                  new Partition(
                      tp, logManager.getOrCreateLog(tp, topic.topicId(), config), localId));
      partition.applyConfig(config);
      switch (partition.applyState(state, topic.replicas(tp.partition()), minIsr, nowMs)) {
        case BECAME_LEADER -> {
          fetchers.unfollow(tp);
          notifyLeadership(tp, true, state.leaderEpoch());
        }
        case BECAME_FOLLOWER -> {
          notifyLeadership(tp, false, state.leaderEpoch());
          fetchers.unfollow(tp);
          if (state.leader() != PartitionState.NO_LEADER) {
            fetchers.follow(tp, state.leader());
          }
        }
        case NONE -> {}
      }
      changed(tp);
    } catch (RuntimeException e) {
      LOG.error("{}: applying {} failed", tp, state, e);
    }
  }

  private void deleteLocalReplicas(TopicMetadata topic) {
    for (int p = 0; p < topic.partitions(); p++) {
      TopicPartition tp = new TopicPartition(topic.name(), p);
      shard(tp).execute(() -> deleteLocalReplica(tp));
    }
  }

  /**
   * Deletes the replica here of a partition that a completed move took away from this broker (as
   * Kafka's StopReplica with deletion). Only a replica this broker serves as one is deleted: a log
   * this broker never saw in the metadata as its own stays. Shard only.
   */
  private void maybeRemoveReplica(TopicPartition tp) {
    if (partitions.containsKey(tp)) {
      LOG.info("{}: no longer a replica here; deleting its log", tp);
      deleteLocalReplica(tp);
    }
  }

  private void deleteLocalReplica(TopicPartition tp) {
    fetchers.unfollow(tp);
    logDirMoves.abandon(tp);
    Partition removed = partitions.remove(tp);
    if (removed != null) {
      removed.resign();
      changed(tp);
      notifyLeadership(tp, false, RecordBatch.NO_PARTITION_LEADER_EPOCH);
    }
    try {
      logManager.deleteLog(tp);
    } catch (IOException e) {
      LOG.error("{}: deleting the log failed", tp, e);
    }
  }

  /** A snapshot of every replica here, each taken on its shard. */
  public CompletableFuture<List<ReplicaStatus>> replicaStatuses() {
    List<CompletableFuture<ReplicaStatus>> statuses = new ArrayList<>();
    partitions.forEach(
        (tp, partition) ->
            statuses.add(CompletableFuture.supplyAsync(partition::status, shard(tp))));
    return CompletableFuture.allOf(statuses.toArray(CompletableFuture[]::new))
        .thenApply(done -> statuses.stream().map(CompletableFuture::join).toList());
  }

  /** A snapshot of every replica moving to another log directory here: its future log. */
  public CompletableFuture<List<FutureReplicaStatus>> futureReplicaStatuses() {
    return logDirMoves.statuses();
  }

  /**
   * Moves the replica here of {@code tp} to the log directory {@code path} (AlterReplicaLogDirs),
   * checked as Kafka checks it: the directory must be one of {@code log.dirs} and online. A
   * partition of which this broker has no replica yet gets its log there once it has, and the
   * answer is REPLICA_NOT_AVAILABLE. Completes once the move started, or when none is needed.
   *
   * @return fails with LogDirNotFoundException, KafkaStorageException, ReplicaNotAvailableException
   *     or UnknownTopicOrPartitionException
   */
  public CompletableFuture<Void> alterLogDir(TopicPartition tp, String path) {
    java.nio.file.Path dir;
    try {
      dir = logManager.liveDir(path);
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
    return CompletableFuture.runAsync(
        () -> {
          Partition partition = partitions.get(tp);
          if (partition == null) {
            RuntimeException missing = notHosted(tp);
            if (missing instanceof NotLeaderOrFollowerException) {
              logManager.preferDir(tp, dir);
              throw new ReplicaNotAvailableException(
                  "Broker " + localId + " has no replica of " + tp + " yet");
            }
            throw missing;
          }
          Uuid topicId =
              metadata
                  .topic(tp.topic())
                  .map(TopicMetadata::topicId)
                  .orElseThrow(() -> notHosted(tp));
          logDirMoves.move(partition, dir, topicId);
        },
        shard(tp).client());
  }

  /**
   * Each log directory of this broker ({@code log.dirs}): whether it is offline, and the size and
   * free space of its file system, asked of the operating system on the first storage shard.
   */
  public CompletableFuture<List<LogDirStatus>> logDirStatuses() {
    return CompletableFuture.supplyAsync(
        () -> {
          Set<java.nio.file.Path> offline = logManager.offlineDirs();
          List<LogDirStatus> dirs = new ArrayList<>();
          for (java.nio.file.Path dir : logManager.logDirs()) {
            if (offline.contains(dir)) {
              dirs.add(new LogDirStatus(dir.toString(), true, -1, -1));
              continue;
            }
            try {
              java.nio.file.FileStore store = java.nio.file.Files.getFileStore(dir);
              dirs.add(
                  new LogDirStatus(
                      dir.toString(), false, store.getTotalSpace(), store.getUsableSpace()));
            } catch (IOException e) {
              dirs.add(new LogDirStatus(dir.toString(), true, -1, -1));
            }
          }
          return dirs;
        },
        shards[0]);
  }

  /** This broker lost its registration: every leader here stops leading until told again. */
  public void resignAll() {
    partitions.forEach(
        (tp, partition) ->
            shard(tp)
                .execute(
                    () -> {
                      partition.resign();
                      changed(tp);
                      notifyLeadership(tp, false, RecordBatch.NO_PARTITION_LEADER_EPOCH);
                    }));
  }

  /** Applies the whole current metadata, as after registering (again). */
  public void reapplyMetadata() {
    applyImage(metadata.image(), MetadataDelta.EVERYTHING);
  }

  /**
   * Appends a producer's batches on the leader; for {@code acks=all} the future completes once the
   * ISR has them (the append waits in the produce purgatory), or fails after {@code timeoutMs} with
   * REQUEST_TIMED_OUT.
   */
  public CompletableFuture<LogAppendInfo> append(
      TopicPartition tp, MemoryRecords records, short acks, int timeoutMs) {
    return forClient(
            tp,
            p -> {
              LogAppendInfo info = p.appendAsLeader(records, acks, AppendOrigin.CLIENT);
              changed(tp);
              return acks == -1
                  ? replicated(p, info, timeoutMs)
                  : CompletableFuture.completedFuture(info);
            })
        .thenCompose(Function.identity());
  }

  /**
   * Appends a coordinator's records on the leader (a group's offsets, a transaction's state), as
   * {@code acks=all}; a transaction's offsets are checked for their producer epoch only, as Kafka
   * checks a coordinator's appends.
   */
  public CompletableFuture<LogAppendInfo> appendAsCoordinator(
      TopicPartition tp, MemoryRecords records, int timeoutMs) {
    return forClient(
            tp,
            p -> {
              LogAppendInfo info = p.appendAsLeader(records, (short) -1, AppendOrigin.COORDINATOR);
              changed(tp);
              return replicated(p, info, timeoutMs);
            })
        .thenCompose(Function.identity());
  }

  /**
   * Appends a transaction marker on the leader, as the broker's own work (the coordinator's
   * WriteTxnMarkers), and completes once the ISR has it, or fails after {@code timeoutMs} with
   * REQUEST_TIMED_OUT.
   */
  public CompletableFuture<LogAppendInfo> appendMarker(
      TopicPartition tp,
      long producerId,
      short producerEpoch,
      EndTransactionMarker marker,
      int timeoutMs) {
    return onPartition(
            tp,
            p -> {
              LogAppendInfo info = p.appendMarker(producerId, producerEpoch, marker);
              changed(tp);
              return replicated(p, info, timeoutMs);
            })
        .thenCompose(Function.identity())
        .whenComplete(
            (info, e) -> {
              if (e == null) {
                boolean commit = marker.controlType() == ControlRecordType.COMMIT;
                markerListeners.forEach(l -> l.onMarker(tp, producerId, commit));
              }
            });
  }

  /** Told of each transaction marker this broker wrote as leader, once the ISR has it. */
  public interface MarkerListener {
    void onMarker(TopicPartition tp, long producerId, boolean commit);
  }

  public void addMarkerListener(MarkerListener listener) {
    markerListeners.add(listener);
  }

  /** On the shard, after an append: completes once the high watermark passes it. */
  private CompletableFuture<LogAppendInfo> replicated(
      Partition p, LogAppendInfo info, int timeoutMs) {
    if (info.lastOffset() < p.highWatermark()) {
      return CompletableFuture.completedFuture(info);
    }
    // On the shard: nothing can move the HW between the append and the watch
    DelayedProduce produce = new DelayedProduce(p, p.leaderEpoch(), info);
    producePurgatory.watch(produce, List.of(p.tp), timeoutMs);
    return produce.result();
  }

  /**
   * A Fetch: reads its partitions once; if they hold fewer than {@code minBytes}, none failed and
   * {@code maxWaitMs} allows, waits in the fetch purgatory for appends and high-watermark moves on
   * them (or its time) and reads them again. The answer lists the partitions in {@code wanted}'s
   * order; its cost is linear in their number.
   */
  public CompletableFuture<List<FetchedPartition>> fetch(
      FetchParams params, List<PartitionFetch> wanted) {
    long deadlineNanos = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(params.maxWaitMs());
    return fetchReader
        .read(params, wanted)
        .thenCompose(
            first -> {
              long leftMs = TimeUnit.NANOSECONDS.toMillis(deadlineNanos - System.nanoTime());
              if (!params.mayWait()
                  || first.total() >= params.minBytes()
                  || first.answerNow()
                  || leftMs <= 0) {
                return CompletableFuture.completedFuture(first.partitions());
              }
              DelayedFetch delayed =
                  new DelayedFetch(
                      params,
                      wanted,
                      first.bytes(),
                      partition -> bytesAvailable(params, partition),
                      again -> readAgain(params, wanted, first.partitions(), again));
              fetchPurgatory.watch(delayed, delayed.keys(), leftMs);
              recheck(delayed);
              return delayed.result();
            })
        .thenApply(
            answer -> {
              if (params.byFollower()) {
                countAgainstLeaderThrottle(answer);
              }
              return answer;
            });
  }

  /**
   * A waiting fetch's answer: the partitions at {@code indexes} read again (every partition when
   * null), the others as {@code first} read them, in request order.
   */
  private CompletableFuture<List<FetchedPartition>> readAgain(
      FetchParams params,
      List<PartitionFetch> wanted,
      List<FetchedPartition> first,
      List<Integer> indexes) {
    if (indexes == null) {
      return fetchReader.read(params, wanted).thenApply(FetchReader.Reads::partitions);
    }
    if (indexes.isEmpty()) {
      return CompletableFuture.completedFuture(first);
    }
    List<PartitionFetch> changed = indexes.stream().map(wanted::get).toList();
    return fetchReader
        .read(params, changed)
        .thenApply(
            reads -> {
              List<FetchedPartition> answer = new ArrayList<>(first);
              for (int k = 0; k < indexes.size(); k++) {
                answer.set(indexes.get(k), reads.partitions().get(k));
              }
              return answer;
            });
  }

  /**
   * Checks {@code delayed} on each of its partitions once, for the changes between its first read
   * and its watch, which woke nobody.
   */
  private void recheck(DelayedFetch delayed) {
    List<TopicPartition> keys = delayed.keys();
    onShardsInPlace(
        keys,
        false,
        (i, inPlace) -> {
          if (!delayed.isCompleted()) {
            delayed.recheck(keys.get(i));
          }
          return true;
        });
  }

  /** What a follower's answer carries of throttled replicas counts against the leader throttle. */
  private void countAgainstLeaderThrottle(List<FetchedPartition> answer) {
    for (FetchedPartition partition : answer) {
      if (partition.bytes() > 0 && throttles(leaderThrottled, partition.tp())) {
        leaderQuota.record(partition.bytes());
      }
    }
  }

  /**
   * Calls {@code work} with each index of {@code tps}, on that partition's shard, the indexes of
   * one shard in one task: a request's partitions cost one hop per shard, in parallel, rather than
   * one per partition. The broker's own work when {@code ownWork}, else a client's; {@code work}
   * must not throw. Completes once every call returned.
   */
  CompletableFuture<Void> onShards(List<TopicPartition> tps, boolean ownWork, IntConsumer work) {
    return onShards(
        tps,
        ownWork,
        (i, inPlace) -> {
          work.accept(i);
          return true;
        },
        false);
  }

  /**
   * As {@link #onShards}, but on an event loop a shard that is idle runs its part in place ({@link
   * Shard#runInPlace}), with {@code inPlace} true: {@code work} then writes no file and reads only
   * the log, and answers false for an index that needs more, which then runs on the shard's thread
   * with {@code inPlace} false.
   */
  CompletableFuture<Void> onShardsInPlace(
      List<TopicPartition> tps, boolean ownWork, InPlaceWork work) {
    return onShards(tps, ownWork, work, true);
  }

  private CompletableFuture<Void> onShards(
      List<TopicPartition> tps, boolean ownWork, InPlaceWork work, boolean mayRunInPlace) {
    Map<Shard, List<Integer>> byShard = new HashMap<>();
    for (int i = 0; i < tps.size(); i++) {
      byShard.computeIfAbsent(shard(tps.get(i)), s -> new ArrayList<>()).add(i);
    }
    List<CompletableFuture<Void>> tasks = new ArrayList<>(byShard.size());
    byShard.forEach(
        (shard, indexes) -> {
          List<Integer> left = new ArrayList<>();
          boolean ran =
              mayRunInPlace
                  && shard.runInPlace(
                      () -> {
                        for (int i : indexes) {
                          if (!work.run(i, true)) {
                            left.add(i);
                          }
                        }
                      });
          List<Integer> onThread = ran ? left : indexes;
          if (!onThread.isEmpty()) {
            tasks.add(
                CompletableFuture.runAsync(
                    () -> onThread.forEach(i -> work.run(i, false)),
                    ownWork ? shard : shard.client()));
          }
        });
    return CompletableFuture.allOf(tasks.toArray(CompletableFuture[]::new));
  }

  /** Work on one index of {@link #onShardsInPlace}; must not throw. */
  @FunctionalInterface
  interface InPlaceWork {
    /**
     * @param inPlace whether it runs in place on an event loop, where it must write no file
     * @return false when it ran in place and left what needs the shard's thread undone
     */
    boolean run(int index, boolean inPlace);
  }

  /**
   * On the partition's shard: the bytes a waiting fetch could read there now, or {@link
   * DelayedFetch#ANSWER_NOW} when it must be answered at once: the partition is gone or led
   * elsewhere, its leader epoch is not the fetch's, or the fetch offset is outside the log.
   */
  private long bytesAvailable(FetchParams params, PartitionFetch fetch) {
    Partition p = partitions.get(fetch.tp());
    if (p == null
        || !p.isLeader()
        || (fetch.currentLeaderEpoch() != RecordBatch.NO_PARTITION_LEADER_EPOCH
            && fetch.currentLeaderEpoch() != p.leaderEpoch())) {
      return DelayedFetch.ANSWER_NOW;
    }
    if (params.byFollower()
        && withheld(p, throttles(leaderThrottled, fetch.tp()), params.replicaId())) {
      return 0; // what the throttle withholds does not complete the wait, as in Kafka
    }
    try {
      // out of range answers now: the read that answers says so; a consumer past the high
      // watermark (a new leader's may lag) waits, as in Kafka
      long bytes =
          p.bytesReadable(
              fetch.fetchOffset(), fetch.maxBytes(), params.byFollower(), params.isolation());
      return bytes < 0 ? DelayedFetch.ANSWER_NOW : bytes;
    } catch (RuntimeException e) {
      return DelayedFetch.ANSWER_NOW; // the read that answers reports it
    }
  }

  /** On the partition's shard, after anything changed there: waiting requests may complete. */
  private void changed(TopicPartition tp) {
    producePurgatory.checkAndComplete(tp);
    Shard shard = shard(tp);
    if (shard.isInPlace() && fetchPurgatory.watching(tp) > IN_PLACE_FETCH_CHECKS) {
      shard.execute(() -> fetchPurgatory.checkAndComplete(tp)); // many: not on an event loop
    } else {
      fetchPurgatory.checkAndComplete(tp);
    }
  }

  /** How many Fetch requests wait in the purgatory. */
  public int waitingFetches() {
    return fetchPurgatory.size();
  }

  /** How many acks=all appends wait in the purgatory. */
  public int waitingProduces() {
    return producePurgatory.size();
  }

  /**
   * On {@code tp}'s shard: a consumer's read from {@code offset}: only what lies below the high
   * watermark, or below the last stable offset for {@code read_committed}. With {@code logOnly},
   * null when the answer takes more than the log (see {@link Partition#readAsConsumer}).
   */
  PartitionRead readForConsumer(
      TopicPartition tp,
      long offset,
      int maxBytes,
      int currentLeaderEpoch,
      IsolationLevel isolation,
      boolean logOnly) {
    Partition p = hosted(tp);
    p.checkLeader(currentLeaderEpoch);
    return p.readAsConsumer(offset, maxBytes, isolation, logOnly);
  }

  /**
   * The leader's read of its own log, up to the log end rather than the high watermark, from {@code
   * offset} or the log start if that is later: how a coordinator loads the state it keeps in a
   * partition it now leads, as Kafka's loader reads with {@code FetchIsolation.LOG_END}.
   */
  public CompletableFuture<PartitionRead> readAsLeader(
      TopicPartition tp, long offset, int maxBytes) {
    return onLeader(tp, p -> p.readToLogEnd(offset, maxBytes));
  }

  /** On {@code tp}'s shard: a follower's fetch: records its progress, reads up to the log end. */
  PartitionRead readForFollower(
      TopicPartition tp,
      int replicaId,
      long fetchOffset,
      int lastFetchedEpoch,
      int currentLeaderEpoch,
      int maxBytes) {
    Partition p = hosted(tp);
    long highWatermark = p.highWatermark();
    Partition.FollowerRead read =
        p.readForFollower(
            replicaId,
            fetchOffset,
            lastFetchedEpoch,
            currentLeaderEpoch,
            maxBytes,
            withheld(p, throttles(leaderThrottled, tp), replicaId),
            System.currentTimeMillis());
    if (p.highWatermark() != highWatermark) {
      changed(tp); // what waits on a follower's progress waits on the high watermark
    }
    Shard shard = shard(tp);
    if (!shard.isInPlace()) {
      maybeChangeIsr(p);
    } else if (wantedIsr(p) != null) { // a change is written and logged: on the shard's thread
      shard.execute(
          () -> {
            if (partitions.get(tp) == p) {
              maybeChangeIsr(p);
            }
          });
    }
    return new PartitionRead(
        read.read(),
        read.divergingEpoch(),
        read.highWatermark(),
        p.logStartOffset(),
        p.logEndOffset(),
        p.lastStableOffset(),
        null);
  }

  @Override
  public CompletableFuture<Optional<FetchPosition>> fetchPosition(TopicPartition tp, int leaderId) {
    return onPartition(tp, p -> nextFetch(p, leaderId));
  }

  /** On the shard: where {@code p}'s follower fetches from {@code leaderId} next, if it does. */
  private Optional<FetchPosition> nextFetch(Partition p, int leaderId) {
    return p.isLeader() || p.leaderId() != leaderId
        ? Optional.empty()
        : Optional.of(p.fetchPosition(throttles(followerThrottled, p.tp)));
  }

  private void throttle(Map<String, ThrottledReplicas> throttled, String topic, String value) {
    ThrottledReplicas replicas = ThrottledReplicas.parse(value, localId);
    if (replicas == ThrottledReplicas.NONE) {
      throttled.remove(topic);
    } else {
      throttled.put(topic, replicas);
    }
  }

  /** Whether {@code throttled} lists this broker's replica of {@code tp}. */
  private static boolean throttles(Map<String, ThrottledReplicas> throttled, TopicPartition tp) {
    ThrottledReplicas replicas = throttled.get(tp.topic());
    return replicas != null && replicas.contains(tp.partition());
  }

  /**
   * Whether the leader throttle holds back what follower {@code replicaId} would read of {@code p}:
   * a throttled replica, a follower out of the ISR, the rate exceeded (Kafka's {@code
   * shouldLeaderThrottle}).
   */
  private boolean withheld(Partition p, boolean throttled, int replicaId) {
    return throttled && !p.inIsr(replicaId) && leaderQuota.isExceeded();
  }

  @Override
  public CompletableFuture<Optional<FetchPosition>> onFetched(
      TopicPartition tp,
      int leaderId,
      FetchPosition position,
      EpochEndOffset diverging,
      MemoryRecords records,
      long leaderHighWatermark,
      long leaderLogStartOffset) {
    return onPartition(
        tp,
        p -> {
          p.onFetched(
              position.leaderEpoch(),
              diverging,
              records,
              leaderHighWatermark,
              leaderLogStartOffset);
          changed(tp);
          return nextFetch(p, leaderId);
        });
  }

  @Override
  public CompletableFuture<Optional<FetchPosition>> onOutOfRange(
      TopicPartition tp,
      int leaderId,
      FetchPosition position,
      long leaderLogStartOffset,
      long leaderHighWatermark) {
    return onPartition(
        tp,
        p -> {
          p.onOutOfRange(
              position.leaderEpoch(),
              position.fetchOffset(),
              leaderLogStartOffset,
              leaderHighWatermark);
          changed(tp);
          return nextFetch(p, leaderId);
        });
  }

  private void checkIsrs() {
    partitions.forEach((tp, partition) -> shard(tp).execute(() -> maybeChangeIsr(partition)));
  }

  /** On the shard: proposes the ISR the leader wants, when it differs from the current one. */
  /** The ISR {@code p} should propose now, or null when it is right. */
  private List<Integer> wantedIsr(Partition p) {
    return p.wantedIsr(System.currentTimeMillis(), replicaLagTimeMaxMs, metadata.image()::isActive);
  }

  private void maybeChangeIsr(Partition p) {
    List<Integer> wanted = wantedIsr(p);
    if (wanted == null) {
      return;
    }
    PartitionState expected = p.state();
    p.isrChangeStarted(wanted);
    LOG.info("{}: ISR {} -> {}", p.tp, expected.isr(), wanted);
    sendIsrChange(p, expected, wanted);
  }

  /**
   * On the shard: writes the proposed ISR change. The proposal ends when a newer state is applied:
   * the one written, or, when etcd held another first, that one from the watch. A write that fails
   * may still have been applied, so the proposal stands and the same change is written again after
   * {@link #ISR_CHANGE_RETRY_MS}, as Kafka's AlterPartitionManager retries, until an answer comes.
   */
  private void sendIsrChange(Partition p, PartitionState expected, List<Integer> wanted) {
    isrChanges
        .send(new PartitionChange(p.tp, expected, expected.withIsr(wanted)))
        .whenCompleteAsync(
            (written, e) -> {
              if (e != null) {
                LOG.warn(
                    "{}: changing the ISR failed, writing it again in {} ms: {}",
                    p.tp,
                    ISR_CHANGE_RETRY_MS,
                    e.getMessage());
                CompletableFuture.delayedExecutor(
                        ISR_CHANGE_RETRY_MS, TimeUnit.MILLISECONDS, shard(p.tp))
                    .execute(
                        () -> {
                          if (p.stillProposes(expected, wanted)) {
                            sendIsrChange(p, expected, wanted);
                          }
                        });
              } else if (written.isPresent()) {
                countIsrChange(expected.isr(), wanted);
                TopicMetadata topic = metadata.topic(p.tp.topic()).orElse(null);
                if (topic != null) {
                  EffectiveTopicConfigs.Effective config = effective(topic);
                  apply(
                      p.tp,
                      topic,
                      config.log(),
                      written.get(),
                      config.minInsyncReplicas(),
                      System.currentTimeMillis());
                }
              }
            },
            shard(p.tp));
  }

  private void countIsrChange(List<Integer> before, List<Integer> after) {
    if (!after.containsAll(before)) {
      isrShrinks.increment();
    }
    if (!before.containsAll(after)) {
      isrExpands.increment();
    }
  }

  /** How many ISR changes this broker made as a leader that dropped a replica. */
  public long isrShrinks() {
    return isrShrinks.sum();
  }

  /** How many ISR changes this broker made as a leader that added a replica. */
  public long isrExpands() {
    return isrExpands.sum();
  }

  /** Moves the log start offset up to {@code offset} (-1: the high watermark); returns it. */
  public CompletableFuture<Long> deleteRecordsBefore(TopicPartition tp, long offset) {
    return forClient(
        tp,
        p -> {
          p.checkLeader(RecordBatch.NO_PARTITION_LEADER_EPOCH);
          long to = offset < 0 ? p.highWatermark() : offset;
          if (to > p.highWatermark()) {
            throw new OffsetOutOfRangeException(
                "Offset " + offset + " is above the high watermark " + p.highWatermark());
          }
          long start = p.deleteRecordsBefore(to);
          changed(tp);
          return start;
        });
  }

  public CompletableFuture<EpochEndOffset> endOffsetForEpoch(
      TopicPartition tp, int epoch, int currentLeaderEpoch) {
    return forClient(
        tp,
        p -> {
          p.checkLeader(currentLeaderEpoch);
          return p.endOffsetForEpoch(epoch);
        });
  }

  /** The idempotent producers of a partition led here, for DescribeProducers. */
  public CompletableFuture<List<ActiveProducer>> activeProducers(TopicPartition tp) {
    return forClient(
        tp,
        p -> {
          p.checkLeader(RecordBatch.NO_PARTITION_LEADER_EPOCH);
          return p.activeProducers();
        });
  }

  public CompletableFuture<PartitionOffsets> offsets(TopicPartition tp) {
    return forClient(tp, p -> leaderOffsets(p));
  }

  /** On {@code tp}'s shard: the offsets that bound a consumer's reads of {@code tp} here. */
  PartitionOffsets leaderOffsets(TopicPartition tp) {
    return leaderOffsets(hosted(tp));
  }

  private static PartitionOffsets leaderOffsets(Partition p) {
    p.checkLeader(RecordBatch.NO_PARTITION_LEADER_EPOCH);
    return new PartitionOffsets(p.logStartOffset(), p.highWatermark(), p.lastStableOffset());
  }

  /**
   * The first record at or after {@code timestamp} that a consumer of {@code isolation} may read
   * (below the high watermark, or the last stable offset), as Kafka answers ListOffsets.
   */
  public CompletableFuture<Optional<TimestampAndOffset>> offsetForTimestamp(
      TopicPartition tp, long timestamp, IsolationLevel isolation) {
    return forClient(
        tp,
        p -> {
          p.checkLeader(RecordBatch.NO_PARTITION_LEADER_EPOCH);
          long fetchable = p.lastFetchableOffset(isolation);
          return p.offsetForTimestamp(timestamp).filter(found -> found.offset < fetchable);
        });
  }

  /** The record with the largest timestamp, if a consumer of {@code isolation} may read it. */
  public CompletableFuture<Optional<TimestampAndOffset>> maxTimestampRecord(
      TopicPartition tp, IsolationLevel isolation) {
    return forClient(
        tp,
        p -> {
          p.checkLeader(RecordBatch.NO_PARTITION_LEADER_EPOCH);
          long fetchable = p.lastFetchableOffset(isolation);
          return p.maxTimestampRecord().filter(found -> found.offset < fetchable);
        });
  }

  /** Applies retention and the flush policy to every log, each on its shard. */
  public void runLogMaintenance() {
    for (PartitionLog log : logManager.logs().values()) {
      if (!log.isOffline()) {
        shard(log.topicPartition())
            .execute(
                () -> {
                  if (logManager.getLog(log.topicPartition()).orElse(null) != log) {
                    return; // deleted, or replaced by a log moved from another directory
                  }
                  try {
                    log.deleteOldSegments();
                    log.maybeFlush(System.currentTimeMillis());
                    changed(log.topicPartition());
                  } catch (RuntimeException e) {
                    LOG.warn("{}: log maintenance failed: {}", log.topicPartition(), e.toString());
                  }
                });
      }
    }
  }

  /**
   * Starts a compaction pass on each compacted log that is due and not being cleaned: planned and
   * swapped in on the log's shard, cleaned on the cleaner's thread, one log at a time.
   */
  public void runLogCleaning(LogCleaner cleaner) {
    long nowMs = System.currentTimeMillis();
    partitions.forEach(
        (tp, partition) -> {
          if (!cleaning.add(tp)) {
            return;
          }
          Shard shard = shard(tp);
          CompletableFuture<Void> pass;
          try {
            pass =
                CompletableFuture.supplyAsync(() -> partition.planCleaning(cleaner, nowMs), shard)
                    .thenCompose(
                        task ->
                            task.isEmpty()
                                ? CompletableFuture.completedFuture(null)
                                : cleaner
                                    .clean(task.get())
                                    .thenAcceptAsync(
                                        result -> swapCleaned(cleaner, task.get(), result), shard));
          } catch (RejectedExecutionException e) {
            pass = CompletableFuture.failedFuture(e);
          }
          pass.whenComplete(
              (v, e) -> {
                cleaning.remove(tp);
                if (e != null) {
                  LOG.warn("{}: cleaning the log failed: {}", tp, e.toString());
                }
              });
        });
  }

  private static void swapCleaned(
      LogCleaner cleaner, LogCleaner.Task task, LogCleaner.Result result) {
    try {
      cleaner.swap(task, result);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private <T> CompletableFuture<T> onLeader(TopicPartition tp, Function<Partition, T> work) {
    return onPartition(
        tp,
        p -> {
          p.checkLeader(RecordBatch.NO_PARTITION_LEADER_EPOCH);
          return work.apply(p);
        });
  }

  /** Runs the broker's own {@code work} on the partition, ahead of client work. */
  private <T> CompletableFuture<T> onPartition(TopicPartition tp, Function<Partition, T> work) {
    return onPartition(tp, work, shard(tp));
  }

  /** Runs a client's {@code work} on the partition, behind the broker's own. */
  private <T> CompletableFuture<T> forClient(TopicPartition tp, Function<Partition, T> work) {
    return onPartition(tp, work, shard(tp).client());
  }

  private <T> CompletableFuture<T> onPartition(
      TopicPartition tp, Function<Partition, T> work, Executor executor) {
    return CompletableFuture.supplyAsync(() -> work.apply(hosted(tp)), executor);
  }

  /** The partition hosted here; throws when there is none. */
  private Partition hosted(TopicPartition tp) {
    Partition partition = partitions.get(tp);
    if (partition == null) {
      throw notHosted(tp);
    }
    return partition;
  }

  private RuntimeException notHosted(TopicPartition tp) {
    boolean exists =
        metadata
            .topic(tp.topic())
            .filter(t -> tp.partition() >= 0 && tp.partition() < t.partitions())
            .isPresent();
    return exists
        ? new NotLeaderOrFollowerException("Broker " + localId + " does not host " + tp)
        : new UnknownTopicOrPartitionException("Unknown partition " + tp);
  }

  /** The shard that owns {@code tp}. */
  Shard shard(TopicPartition tp) {
    return shards[Math.floorMod(tp.hashCode(), shards.length)];
  }

  @Override
  public void close() throws InterruptedException {
    timer.shutdownNow();
    purgatoryTimer.stop();
    for (Shard shard : shards) {
      shard.shutdown();
    }
    for (Shard shard : shards) {
      shard.awaitTermination(30, TimeUnit.SECONDS);
    }
  }
}
