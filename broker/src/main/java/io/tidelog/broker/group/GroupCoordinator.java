package io.tidelog.broker.group;

import io.tidelog.broker.cluster.MetadataStore;
import io.tidelog.broker.cluster.TopicMetadata;
import io.tidelog.broker.config.GroupConfig;
import io.tidelog.broker.group.ClassicGroup.JoinRequest;
import io.tidelog.broker.group.ClassicGroup.JoinResult;
import io.tidelog.broker.group.ClassicGroup.Snapshot;
import io.tidelog.broker.group.ClassicGroup.State;
import io.tidelog.broker.group.ClassicGroup.SyncResult;
import io.tidelog.broker.group.GroupRecords.OffsetEntry;
import io.tidelog.broker.log.LogAppendInfo;
import io.tidelog.broker.replica.PartitionRead;
import io.tidelog.broker.replica.ReplicaManager;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.stream.IntStream;
import org.apache.kafka.clients.consumer.internals.ConsumerProtocol;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.errors.CoordinatorLoadInProgressException;
import org.apache.kafka.common.errors.CoordinatorNotAvailableException;
import org.apache.kafka.common.errors.NotCoordinatorException;
import org.apache.kafka.common.internals.Topic;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.ControlRecordType;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.Record;
import org.apache.kafka.common.record.RecordBatch;
import org.apache.kafka.common.record.SimpleRecord;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.common.utils.Utils;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Kafka's classic group coordinator. The coordinator of a group is the leader of partition {@code
 * abs(groupId.hashCode()) % n} of {@code __consumer_offsets}, which holds the group's metadata and
 * committed offsets as records ({@link GroupRecords}): a new leader loads them before it serves the
 * partition's groups (COORDINATOR_LOAD_IN_PROGRESS meanwhile), and a broker that stops leading
 * unloads them (NOT_COORDINATOR from then on).
 *
 * <p>Offset commits and group changes are appended with {@code acks=all}; a commit is answered, and
 * becomes visible to OffsetFetch, once the partition's ISR has it, so a coordinator failover loses
 * nothing that was acknowledged.
 *
 * <p>Threads: every group and offset lives on one coordinator thread ({@code
 * tidelog-group-coordinator}), which the public methods hop onto and whose queue is bounded;
 * loading reads the log on a thread of its own; a timer ticks groups for their session and
 * rebalance deadlines. Callers get futures and never block.
 */
public final class GroupCoordinator implements AutoCloseable {
  public static final String OFFSETS_TOPIC = Topic.GROUP_METADATA_TOPIC_NAME;

  private static final Logger LOG = LoggerFactory.getLogger(GroupCoordinator.class);
  private static final int QUEUE_CAPACITY = 10_000;
  private static final long TICK_INTERVAL_MS = 50;

  /** Bytes read per step of a load: Kafka's {@code offsets.load.buffer.size} default. */
  private static final int LOAD_BATCH_BYTES = 5 * 1024 * 1024;

  private static final long LOAD_READ_TIMEOUT_MS = 30_000;

  /** A partition's groups in one listing. */
  public record GroupListing(String groupId, String protocolType, State state) {}

  private final GroupConfig config;
  private final MetadataStore metadata;
  private final ReplicaManager replicas;
  private final Time time;
  private final ExecutorService thread =
      new ThreadPoolExecutor(
          1,
          1,
          0,
          TimeUnit.MILLISECONDS,
          new ArrayBlockingQueue<>(QUEUE_CAPACITY),
          r -> new Thread(r, "tidelog-group-coordinator"));
  private final ExecutorService loader =
      Executors.newSingleThreadExecutor(r -> new Thread(r, "tidelog-group-loader"));
  private final ScheduledExecutorService timer =
      Executors.newSingleThreadScheduledExecutor(r -> new Thread(r, "tidelog-group-timer"));

  /**
   * The {@code __consumer_offsets} partitions led here, by partition; on the coordinator thread.
   */
  private final Map<Integer, CoordinatorPartition> partitions = new HashMap<>();

  private long nextExpiryMs;

  /**
   * @param time the clock of sessions, rebalances, offset expiry and commit timestamps
   */
  public GroupCoordinator(
      GroupConfig config, MetadataStore metadata, ReplicaManager replicas, Time time) {
    this.config = config;
    this.metadata = metadata;
    this.replicas = replicas;
    this.time = time;
  }

  /** Starts following leadership of {@code __consumer_offsets} and ticking groups. */
  public void start() {
    replicas.addLeadershipListener(this::onLeadershipChange);
    replicas.addMarkerListener(this::onMarker);
    nextExpiryMs = time.milliseconds() + config.offsetsRetentionCheckIntervalMs();
    timer.scheduleWithFixedDelay(
        () -> execute(this::tick), TICK_INTERVAL_MS, TICK_INTERVAL_MS, TimeUnit.MILLISECONDS);
  }

  /** The partition of {@code __consumer_offsets} that holds a group, as Kafka places it. */
  public static int partitionFor(String groupId, int partitionCount) {
    return Utils.abs(groupId.hashCode()) % partitionCount;
  }

  private void onLeadershipChange(TopicPartition tp, boolean leader, int leaderEpoch) {
    if (!tp.topic().equals(OFFSETS_TOPIC)) {
      return;
    }
    execute(
        () -> {
          CoordinatorPartition previous = partitions.remove(tp.partition());
          if (previous != null) {
            previous.groups().forEach(ClassicGroup::unload);
            LOG.info("Unloaded the groups of {}", tp);
          }
          if (leader) {
            CoordinatorPartition loading =
                new CoordinatorPartition(tp, leaderEpoch, config.initialRebalanceDelayMs());
            partitions.put(tp.partition(), loading);
            loader.execute(() -> load(loading));
          }
        });
  }

  /** A transaction's marker in a partition of {@code __consumer_offsets} led here. */
  private void onMarker(TopicPartition tp, long producerId, boolean commit) {
    if (!tp.topic().equals(OFFSETS_TOPIC)) {
      return;
    }
    execute(
        () -> {
          CoordinatorPartition part = partitions.get(tp.partition());
          if (part != null) {
            part.completeTransaction(producerId, commit);
          }
        });
  }

  /** On the loader thread: replays the partition up to its log end, then hands it over. */
  private void load(CoordinatorPartition loading) {
    long startMs = time.milliseconds();
    long offset = 0;
    try {
      while (true) {
        PartitionRead read =
            replicas
                .readAsLeader(loading.tp, offset, LOAD_BATCH_BYTES)
                .get(LOAD_READ_TIMEOUT_MS, TimeUnit.MILLISECONDS);
        if (read.read().records().sizeInBytes() == 0) {
          break;
        }
        for (RecordBatch batch : read.read().records().batches()) {
          if (batch.isControlBatch()) {
            Iterator<Record> marker = batch.iterator();
            if (marker.hasNext()) {
              loading.replayTransactionEnd(
                  batch.producerId(),
                  ControlRecordType.parse(marker.next().key()) == ControlRecordType.COMMIT);
            }
            continue;
          }
          for (Record record : batch) {
            try {
              GroupRecords.parse(record)
                  .ifPresent(
                      entry -> {
                        if (batch.isTransactional() && entry instanceof OffsetEntry committed) {
                          loading.replayTransactional(batch.producerId(), committed);
                        } else {
                          loading.replay(entry);
                        }
                      });
            } catch (RuntimeException e) {
              LOG.warn("{}: skipping unreadable record at {}: {}", loading.tp, record.offset(), e);
            }
          }
        }
        offset = read.read().nextOffset();
      }
    } catch (ExecutionException | TimeoutException | RuntimeException e) {
      LOG.warn("{}: loading groups failed, at offset {}: {}", loading.tp, offset, e.toString());
      execute(() -> partitions.remove(loading.tp.partition(), loading));
      return;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return;
    }
    long readMs = time.milliseconds() - startMs;
    execute(
        () -> {
          if (partitions.get(loading.tp.partition()) != loading) {
            return; // leadership moved on while loading
          }
          loading.completeLoad(time.milliseconds());
          LOG.info(
              "Loaded {} groups and {} offsets of {} (epoch {}) in {} ms",
              loading.groupCount(),
              loading.offsetCount(),
              loading.tp,
              loading.leaderEpoch,
              readMs);
        });
  }

  public CompletableFuture<JoinResult> join(String groupId, JoinRequest request) {
    return onGroup(
            groupId,
            part -> {
              long nowMs = time.milliseconds();
              if (request.sessionTimeoutMs() < config.minSessionTimeoutMs()
                  || request.sessionTimeoutMs() > config.maxSessionTimeoutMs()) {
                return CompletableFuture.completedFuture(
                    JoinResult.error(Errors.INVALID_SESSION_TIMEOUT, request.memberId()));
              }
              ClassicGroup group = part.group(groupId);
              if (group == null && !request.memberId().isEmpty()) {
                return CompletableFuture.completedFuture(
                    JoinResult.error(Errors.UNKNOWN_MEMBER_ID, request.memberId()));
              }
              group = part.getOrCreateGroup(groupId, nowMs);
              if (request.memberId().isEmpty() && group.size() >= config.maxSize()) {
                return CompletableFuture.completedFuture(
                    JoinResult.error(Errors.GROUP_MAX_SIZE_REACHED, request.memberId()));
              }
              CompletableFuture<JoinResult> joined = group.join(request, nowMs);
              maybeStore(part, group);
              return joined;
            })
        .thenCompose(Function.identity());
  }

  public CompletableFuture<SyncResult> sync(
      String groupId,
      String memberId,
      String groupInstanceId,
      int generationId,
      String protocolType,
      String protocolName,
      Map<String, byte[]> assignments) {
    return onGroup(
            groupId,
            part -> {
              ClassicGroup group = part.group(groupId);
              if (group == null) {
                return CompletableFuture.completedFuture(
                    SyncResult.error(Errors.UNKNOWN_MEMBER_ID));
              }
              CompletableFuture<SyncResult> synced =
                  group.sync(
                      memberId,
                      groupInstanceId,
                      generationId,
                      protocolType,
                      protocolName,
                      assignments,
                      time.milliseconds());
              maybeStore(part, group);
              return synced;
            })
        .thenCompose(Function.identity());
  }

  public CompletableFuture<Errors> heartbeat(
      String groupId, String memberId, String groupInstanceId, int generationId) {
    return onGroup(
        groupId,
        part -> {
          ClassicGroup group = part.group(groupId);
          return group == null
              ? Errors.UNKNOWN_MEMBER_ID
              : group.heartbeat(memberId, groupInstanceId, generationId, time.milliseconds());
        });
  }

  /** One member leaving, by member id or group instance id; an error per member. */
  public record Leaving(String memberId, String groupInstanceId) {}

  public CompletableFuture<List<Errors>> leave(String groupId, List<Leaving> leaving) {
    return onGroup(
        groupId,
        part -> {
          ClassicGroup group = part.group(groupId);
          List<Errors> errors = new ArrayList<>();
          for (Leaving member : leaving) {
            errors.add(
                group == null
                    ? Errors.UNKNOWN_MEMBER_ID
                    : group.leave(
                        member.memberId(), member.groupInstanceId(), time.milliseconds()));
          }
          if (group != null) {
            maybeStore(part, group);
          }
          return errors;
        });
  }

  /**
   * Commits offsets for a group member of {@code generationId}, or, with generation -1, for an
   * empty group; answers each partition once the commit is replicated, or with its error.
   */
  public CompletableFuture<Map<TopicPartition, Errors>> commitOffsets(
      String groupId,
      String memberId,
      String groupInstanceId,
      int generationId,
      Map<TopicPartition, CommittedOffset> offsets) {
    return onGroup(
            groupId,
            part -> {
              long nowMs = time.milliseconds();
              ClassicGroup group = part.group(groupId);
              Errors error =
                  group == null
                      ? generationId < 0 ? Errors.NONE : Errors.ILLEGAL_GENERATION
                      : group.validateOffsetCommit(memberId, groupInstanceId, generationId);
              Commit commit = new Commit(groupId, offsets, error, nowMs);
              Map<TopicPartition, Errors> results = commit.results;
              List<SimpleRecord> records = commit.records;
              List<OffsetEntry> entries = commit.entries;
              if (records.isEmpty()) {
                return CompletableFuture.completedFuture(results);
              }
              part.getOrCreateGroup(groupId, nowMs);
              return append(part, records)
                  .handleAsync(
                      (firstOffset, e) -> {
                        Errors appendError = e == null ? Errors.NONE : commitError(e);
                        if (e == null) {
                          appendedAt(firstOffset, entries).forEach(part::replay);
                        }
                        entries.forEach(entry -> results.put(entry.tp(), appendError));
                        return results;
                      },
                      thread);
            })
        .thenCompose(Function.identity());
  }

  /**
   * An offset commit's records, one per partition that passed its checks ({@code error}, which a
   * whole commit fails with, and {@code offset.metadata.max.bytes}), and the errors of the others.
   */
  private final class Commit {
    final Map<TopicPartition, Errors> results = new LinkedHashMap<>();
    final List<SimpleRecord> records = new ArrayList<>();
    final List<OffsetEntry> entries = new ArrayList<>();

    Commit(String groupId, Map<TopicPartition, CommittedOffset> offsets, Errors error, long nowMs) {
      for (Map.Entry<TopicPartition, CommittedOffset> e : offsets.entrySet()) {
        CommittedOffset offset = e.getValue();
        if (error != Errors.NONE) {
          results.put(e.getKey(), error);
        } else if (offset.metadata() != null
            && offset.metadata().length() > config.offsetMetadataMaxBytes()) {
          results.put(e.getKey(), Errors.OFFSET_METADATA_TOO_LARGE);
        } else {
          CommittedOffset stored =
              new CommittedOffset(
                  offset.offset(),
                  offset.leaderEpoch(),
                  offset.metadata() == null ? "" : offset.metadata(),
                  nowMs);
          records.add(GroupRecords.offsetCommit(groupId, e.getKey(), stored, nowMs));
          entries.add(new OffsetEntry(groupId, e.getKey(), stored));
        }
      }
    }
  }

  /**
   * A group's committed offsets, of {@code partitions} or all when it is null; {@code unstable}
   * names the partitions whose offset an open transaction committed (Kafka's
   * UNSTABLE_OFFSET_COMMIT, for a client that asks for stable offsets).
   */
  public record FetchedOffsets(
      Map<TopicPartition, CommittedOffset> offsets, Set<TopicPartition> unstable) {}

  public CompletableFuture<FetchedOffsets> fetchOffsets(
      String groupId, List<TopicPartition> partitions) {
    return onGroup(
        groupId,
        part -> {
          Map<TopicPartition, CommittedOffset> committed = part.offsets(groupId);
          Map<TopicPartition, CommittedOffset> wanted =
              partitions == null ? new LinkedHashMap<>(committed) : new LinkedHashMap<>();
          if (partitions != null) {
            partitions.forEach(tp -> wanted.put(tp, committed.get(tp)));
          }
          Set<TopicPartition> unstable = new HashSet<>();
          wanted.keySet().stream()
              .filter(tp -> part.hasPendingOffset(groupId, tp))
              .forEach(unstable::add);
          return new FetchedOffsets(wanted, unstable);
        });
  }

  /**
   * TxnOffsetCommit: writes offsets as part of the open transaction of {@code producerId}, in a
   * transactional batch of {@code __consumer_offsets}; they become visible when the transaction's
   * commit marker reaches the partition, and are dropped at its abort. A member's commit is checked
   * as Kafka checks a transactional one (its member id and generation, no rebalance check); one
   * without member id and generation (TxnOffsetCommit v0-2) is taken as it is.
   */
  public CompletableFuture<Map<TopicPartition, Errors>> commitTransactionalOffsets(
      String groupId,
      long producerId,
      short producerEpoch,
      String memberId,
      String groupInstanceId,
      int generationId,
      Map<TopicPartition, CommittedOffset> offsets) {
    return onGroup(
            groupId,
            part -> {
              long nowMs = time.milliseconds();
              ClassicGroup group = part.group(groupId);
              Errors error;
              if (generationId < 0 && memberId.isEmpty() && groupInstanceId == null) {
                error = Errors.NONE;
              } else if (group == null) {
                error = Errors.ILLEGAL_GENERATION;
              } else {
                error = group.validateOffsetCommit(memberId, groupInstanceId, generationId);
                if (error == Errors.REBALANCE_IN_PROGRESS) {
                  error = Errors.NONE;
                }
              }
              Commit commit = new Commit(groupId, offsets, error, nowMs);
              Map<TopicPartition, Errors> results = commit.results;
              List<SimpleRecord> records = commit.records;
              List<OffsetEntry> entries = commit.entries;
              if (records.isEmpty()) {
                return CompletableFuture.completedFuture(results);
              }
              part.getOrCreateGroup(groupId, nowMs);
              MemoryRecords batch =
                  MemoryRecords.withTransactionalRecords(
                      Compression.NONE,
                      producerId,
                      producerEpoch,
                      0,
                      records.toArray(SimpleRecord[]::new));
              return replicas
                  .appendAsCoordinator(part.tp, batch, config.offsetCommitTimeoutMs())
                  .handleAsync(
                      (info, e) -> {
                        Errors appendError = e == null ? Errors.NONE : commitError(e);
                        if (e == null) {
                          appendedAt(info.firstOffset(), entries)
                              .forEach(entry -> part.replayTransactional(producerId, entry));
                        }
                        entries.forEach(entry -> results.put(entry.tp(), appendError));
                        return results;
                      },
                      thread);
            })
        .thenCompose(Function.identity());
  }

  /** The groups this broker coordinates. */
  public CompletableFuture<List<GroupListing>> listGroups() {
    return supply(
        () -> {
          List<GroupListing> listed = new ArrayList<>();
          for (CoordinatorPartition part : partitions.values()) {
            if (!part.isLoaded()) {
              throw new CoordinatorLoadInProgressException(part.tp + " is still loading");
            }
            part.groups()
                .forEach(
                    g -> listed.add(new GroupListing(g.groupId(), g.protocolType(), g.state())));
          }
          return listed;
        });
  }

  /**
   * A group's lag on one partition: the partition's end offset as consumers see it (its high
   * watermark) minus the group's committed offset.
   */
  public record PartitionLag(
      String groupId, TopicPartition tp, long committedOffset, long endOffset) {
    public long lag() {
      return Math.max(0, endOffset - committedOffset);
    }
  }

  /**
   * The lag of each group coordinated here on each partition it committed, given a source of the
   * partitions' end offsets; partitions whose end is unknown are left out.
   */
  public CompletableFuture<List<PartitionLag>> lag(
      Function<Collection<TopicPartition>, CompletableFuture<Map<TopicPartition, Long>>>
          endOffsets) {
    return supply(
            () -> {
              Map<String, Map<TopicPartition, CommittedOffset>> committed = new TreeMap<>();
              for (CoordinatorPartition part : partitions.values()) {
                if (part.isLoaded()) {
                  part.groups().forEach(g -> committed.put(g.groupId(), part.offsets(g.groupId())));
                }
              }
              return committed;
            })
        .thenCompose(
            committed -> {
              Set<TopicPartition> all = new HashSet<>();
              committed.values().forEach(offsets -> all.addAll(offsets.keySet()));
              return endOffsets
                  .apply(all)
                  .thenApply(
                      ends -> {
                        List<PartitionLag> lags = new ArrayList<>();
                        committed.forEach(
                            (group, offsets) ->
                                offsets.forEach(
                                    (tp, offset) -> {
                                      Long end = ends.get(tp);
                                      if (end != null) {
                                        lags.add(new PartitionLag(group, tp, offset.offset(), end));
                                      }
                                    }));
                        return lags;
                      });
            });
  }

  /** The group now, or null when it does not exist (Kafka's "Dead"). */
  public CompletableFuture<Snapshot> describe(String groupId) {
    return onGroup(
        groupId,
        part -> {
          ClassicGroup group = part.group(groupId);
          return group == null ? null : group.snapshot();
        });
  }

  /** Deletes an empty group and its offsets. */
  public CompletableFuture<Errors> deleteGroup(String groupId) {
    return onGroup(
            groupId,
            part -> {
              ClassicGroup group = part.group(groupId);
              if (group == null) {
                return CompletableFuture.completedFuture(Errors.GROUP_ID_NOT_FOUND);
              }
              if (group.state() != State.EMPTY) {
                return CompletableFuture.completedFuture(Errors.NON_EMPTY_GROUP);
              }
              long nowMs = time.milliseconds();
              List<SimpleRecord> records = new ArrayList<>();
              part.offsets(groupId)
                  .keySet()
                  .forEach(tp -> records.add(GroupRecords.offsetTombstone(groupId, tp, nowMs)));
              records.add(GroupRecords.groupTombstone(groupId, nowMs));
              return append(part, records)
                  .handleAsync(
                      (v, e) -> {
                        if (e != null) {
                          return commitError(e);
                        }
                        part.removeGroup(groupId);
                        return Errors.NONE;
                      },
                      thread);
            })
        .thenCompose(Function.identity());
  }

  /**
   * OffsetDelete: deletes a group's offsets of {@code partitions}, except those of topics its
   * members subscribe to (GROUP_SUBSCRIBED_TO_TOPIC).
   */
  public CompletableFuture<Map<TopicPartition, Errors>> deleteOffsets(
      String groupId, List<TopicPartition> partitions) {
    return onGroup(
            groupId,
            part -> {
              ClassicGroup group = part.group(groupId);
              if (group == null) {
                return CompletableFuture.<Map<TopicPartition, Errors>>failedFuture(
                    Errors.GROUP_ID_NOT_FOUND.exception());
              }
              Set<String> subscribed = subscribedTopics(group.snapshot());
              long nowMs = time.milliseconds();
              Map<TopicPartition, Errors> results = new LinkedHashMap<>();
              List<SimpleRecord> records = new ArrayList<>();
              List<OffsetEntry> entries = new ArrayList<>();
              for (TopicPartition tp : partitions) {
                if (subscribed.contains(tp.topic())) {
                  results.put(tp, Errors.GROUP_SUBSCRIBED_TO_TOPIC);
                } else {
                  results.put(tp, Errors.NONE);
                  if (part.offsets(groupId).containsKey(tp)) {
                    records.add(GroupRecords.offsetTombstone(groupId, tp, nowMs));
                    entries.add(new OffsetEntry(groupId, tp, null));
                  }
                }
              }
              if (records.isEmpty()) {
                return CompletableFuture.completedFuture(results);
              }
              return append(part, records)
                  .handleAsync(
                      (v, e) -> {
                        if (e != null) {
                          entries.forEach(entry -> results.put(entry.tp(), commitError(e)));
                        } else {
                          entries.forEach(part::replay);
                        }
                        return results;
                      },
                      thread);
            })
        .thenCompose(Function.identity());
  }

  /** The topics a consumer group's members subscribe to; none for other protocol types. */
  private static Set<String> subscribedTopics(Snapshot group) {
    Set<String> topics = new HashSet<>();
    if (!ConsumerProtocol.PROTOCOL_TYPE.equals(group.protocolType())) {
      return topics;
    }
    for (ClassicGroup.MemberSnapshot member : group.members()) {
      try {
        topics.addAll(
            ConsumerProtocol.deserializeSubscription(ByteBuffer.wrap(member.metadata())).topics());
      } catch (RuntimeException e) {
        LOG.debug("Member {} has an unreadable subscription: {}", member.memberId(), e.toString());
      }
    }
    return topics;
  }

  /** On the coordinator thread: ticks due groups, stores settled ones, expires offsets. */
  private void tick() {
    long nowMs = time.milliseconds();
    for (CoordinatorPartition part : partitions.values()) {
      if (!part.isLoaded()) {
        continue;
      }
      for (ClassicGroup group : part.groups()) {
        if (group.nextDeadlineMs() <= nowMs) {
          group.tick(nowMs);
          maybeStore(part, group);
        }
      }
    }
    if (nowMs >= nextExpiryMs) {
      nextExpiryMs = nowMs + config.offsetsRetentionCheckIntervalMs();
      partitions.values().stream().filter(CoordinatorPartition::isLoaded).forEach(this::expire);
    }
  }

  /** Deletes expired offsets, then the empty groups left without any. */
  private void expire(CoordinatorPartition part) {
    long nowMs = time.milliseconds();
    List<OffsetEntry> expired = part.expiredOffsets(nowMs, config.offsetsRetentionMs());
    if (expired.isEmpty()) {
      removeDeadGroups(part, nowMs);
      return;
    }
    List<SimpleRecord> records =
        expired.stream()
            .map(o -> GroupRecords.offsetTombstone(o.groupId(), o.tp(), nowMs))
            .toList();
    append(part, records)
        .whenCompleteAsync(
            (v, e) -> {
              if (e != null) {
                LOG.warn("{}: expiring offsets failed: {}", part.tp, e.toString());
                return;
              }
              expired.forEach(part::replay);
              LOG.info("{}: expired {} offsets", part.tp, expired.size());
              removeDeadGroups(part, nowMs);
            },
            thread);
  }

  private void removeDeadGroups(CoordinatorPartition part, long nowMs) {
    List<String> dead = part.deadGroups();
    if (dead.isEmpty()) {
      return;
    }
    append(part, dead.stream().map(g -> GroupRecords.groupTombstone(g, nowMs)).toList())
        .whenCompleteAsync(
            (v, e) -> {
              if (e == null) {
                dead.forEach(
                    id -> {
                      ClassicGroup group = part.group(id);
                      if (group != null && group.state() == State.EMPTY && group.size() == 0) {
                        part.removeGroup(id);
                      }
                    });
              }
            },
            thread);
  }

  /**
   * Writes the group's state when its membership settled into something new, as Kafka stores a
   * group after each rebalance, so that a new coordinator knows its members and their assignments.
   * The members' answers do not wait for the write: a new coordinator that missed it loads the
   * generation before, and the members rejoin.
   */
  private void maybeStore(CoordinatorPartition part, ClassicGroup group) {
    Snapshot changed = part.changedSnapshot(group);
    if (changed == null) {
      return;
    }
    part.stored(group.groupId(), changed);
    append(part, List.of(GroupRecords.groupMetadata(group.groupId(), changed, time.milliseconds())))
        .whenComplete(
            (v, e) -> {
              if (e != null) {
                LOG.warn("{}: storing group {} failed: {}", part.tp, group.groupId(), e.toString());
              }
            });
  }

  /** Appends {@code records} to the partition, replicated; the offset of the first. */
  private CompletableFuture<Long> append(CoordinatorPartition part, List<SimpleRecord> records) {
    MemoryRecords batch =
        MemoryRecords.withRecords(Compression.NONE, records.toArray(SimpleRecord[]::new));
    return replicas
        .appendAsCoordinator(part.tp, batch, config.offsetCommitTimeoutMs())
        .thenApply(LogAppendInfo::firstOffset);
  }

  /** The entries of records appended from {@code firstOffset} on, one record each, in order. */
  private static List<OffsetEntry> appendedAt(long firstOffset, List<OffsetEntry> entries) {
    return IntStream.range(0, entries.size())
        .mapToObj(i -> entries.get(i).at(firstOffset + i))
        .toList();
  }

  /** The error a client gets when a write to {@code __consumer_offsets} failed, as in Kafka. */
  private static Errors commitError(Throwable failure) {
    Throwable cause = Errors.maybeUnwrapException(failure);
    return switch (Errors.forException(cause)) {
      case NOT_ENOUGH_REPLICAS, NOT_ENOUGH_REPLICAS_AFTER_APPEND, REQUEST_TIMED_OUT ->
          Errors.COORDINATOR_NOT_AVAILABLE;
      case UNKNOWN_TOPIC_OR_PARTITION, NOT_LEADER_OR_FOLLOWER, KAFKA_STORAGE_ERROR ->
          Errors.NOT_COORDINATOR;
      case MESSAGE_TOO_LARGE, RECORD_LIST_TOO_LARGE, INVALID_FETCH_SIZE ->
          Errors.INVALID_COMMIT_OFFSET_SIZE;
      default -> Errors.forException(cause);
    };
  }

  /**
   * Runs {@code work} on the coordinator thread with the group's partition, once loaded; fails with
   * NOT_COORDINATOR when this broker does not lead it.
   */
  private <T> CompletableFuture<T> onGroup(String groupId, Function<CoordinatorPartition, T> work) {
    return supply(
        () -> {
          TopicMetadata topic = metadata.topic(OFFSETS_TOPIC).orElse(null);
          if (topic == null) {
            throw new NotCoordinatorException(OFFSETS_TOPIC + " does not exist yet");
          }
          CoordinatorPartition part = partitions.get(partitionFor(groupId, topic.partitions()));
          if (part == null) {
            throw new NotCoordinatorException(
                "Broker " + replicas.localId() + " is not the coordinator of " + groupId);
          }
          if (!part.isLoaded()) {
            throw new CoordinatorLoadInProgressException(part.tp + " is still loading");
          }
          return work.apply(part);
        });
  }

  private <T> CompletableFuture<T> supply(Supplier<T> work) {
    try {
      return CompletableFuture.supplyAsync(work, thread);
    } catch (RejectedExecutionException e) {
      return CompletableFuture.failedFuture(
          new CoordinatorNotAvailableException("The group coordinator is overloaded or closed"));
    }
  }

  private void execute(Runnable work) {
    try {
      thread.execute(work);
    } catch (RejectedExecutionException e) {
      LOG.warn("The group coordinator dropped a task: {}", e.toString());
    }
  }

  @Override
  public void close() throws InterruptedException {
    timer.shutdownNow();
    loader.shutdownNow();
    thread.shutdown();
    thread.awaitTermination(5, TimeUnit.SECONDS);
  }
}
