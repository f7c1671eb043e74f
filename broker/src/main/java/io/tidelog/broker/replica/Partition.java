package io.tidelog.broker.replica;

import io.tidelog.broker.cluster.PartitionState;
import io.tidelog.broker.log.ActiveProducer;
import io.tidelog.broker.log.EpochEndOffset;
import io.tidelog.broker.log.LogAppendInfo;
import io.tidelog.broker.log.LogCleaner;
import io.tidelog.broker.log.LogConfig;
import io.tidelog.broker.log.LogReadInfo;
import io.tidelog.broker.log.PartitionLog;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.IntPredicate;
import java.util.function.Supplier;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.FencedLeaderEpochException;
import org.apache.kafka.common.errors.KafkaStorageException;
import org.apache.kafka.common.errors.NotEnoughReplicasException;
import org.apache.kafka.common.errors.NotLeaderOrFollowerException;
import org.apache.kafka.common.errors.OffsetOutOfRangeException;
import org.apache.kafka.common.errors.UnknownLeaderEpochException;
import org.apache.kafka.common.record.EndTransactionMarker;
import org.apache.kafka.common.record.FileRecords;
import org.apache.kafka.common.record.FileRecords.TimestampAndOffset;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.RecordBatch;
import org.apache.kafka.storage.internals.log.AbortedTxn;
import org.apache.kafka.storage.internals.log.AppendOrigin;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One partition replica on this broker: its log, and its role in the seeds' replication model.
 *
 * <ul>
 *   <li>As <b>leader</b> it tracks every follower's log end offset (LEO) from the offsets they
 *       fetch at, and the last time each was caught up. The high watermark (HW) is the smallest LEO
 *       in the ISR, and it does not move while the ISR is smaller than {@code min.insync.replicas}.
 *       A follower not caught up within {@code replica.lag.time.max.ms} leaves the ISR; it rejoins
 *       once it reaches the HW and the start of the current leader epoch. {@code acks=all} produces
 *       wait in the produce {@link Purgatory} until the HW passes them.
 *   <li>As <b>follower</b> it appends what the leader sends, truncates where the leader reports a
 *       diverging epoch, and keeps HW = min(the leader's HW, its own LEO).
 * </ul>
 *
 * <p>Threads: touched only on the partition's storage shard.
 */
final class Partition {
  private static final Logger LOG = LoggerFactory.getLogger(Partition.class);

  /** What the leader knows of a follower. */
  private static final class Follower {
    long logEndOffset = -1;
    long lastCaughtUpMs;
    long lastFetchMs;
    long leaderEndOffsetAtLastFetch = -1;
  }

  /**
   * What only a leader keeps, made new at each leadership (as Kafka's raft module has a class per
   * role): every follower's progress, and the offset at which this leader's epoch began.
   */
  private static final class LeaderState {
    final long epochStartOffset;
    final Map<Integer, Follower> followers = new HashMap<>();

    LeaderState(long epochStartOffset) {
      this.epochStartOffset = epochStartOffset;
    }
  }

  final TopicPartition tp;
  private PartitionLog log;
  private final int localId;
  private PartitionState state;
  private List<Integer> replicas = List.of();
  private int minInsyncReplicas = 1;

  /** Null unless this replica leads. */
  private LeaderState leaderState;

  private long highWatermark;

  /** As a follower: whether its last fetch brought its log to the leader's high watermark. */
  private boolean caughtUp;

  /**
   * The ISR this leader proposed and etcd may have taken already, while the change is in flight or
   * its fate is unknown (a write that failed may still have been applied); null otherwise. Until a
   * newer state is applied, the high watermark waits for the replicas of both ISRs (Kafka's maximal
   * ISR): once etcd has the larger one, the controller may elect any of them.
   */
  private List<Integer> proposedIsr;

  private LogConfig logConfig;

  Partition(TopicPartition tp, PartitionLog log, int localId) {
    this.tp = tp;
    this.log = log;
    this.localId = localId;
    this.highWatermark = log.highWatermark();
  }

  LogConfig logConfig() {
    return logConfig;
  }

  /** The log directory (one of {@code log.dirs}) that holds this replica's log. */
  Path logDir() {
    return log.dir().getParent();
  }

  /**
   * Copies into {@code future} this log's next batches, up to {@code maxBytes} but at least one
   * batch. A future log that may hold records this log lost since (it was truncated), or that fell
   * below its start, starts again from this log's start.
   *
   * @return whether {@code future} now holds all this log holds
   */
  boolean copyTo(FutureReplica future, int maxBytes) {
    PartitionLog to = future.log();
    if (future.truncationsSeen() != log.truncations()
        || to.logEndOffset() > log.logEndOffset()
        || to.logEndOffset() < log.logStartOffset()) {
      to.truncateFullyAndStartAt(log.logStartOffset());
      future.copiedSince(log.truncations());
    }
    if (to.logEndOffset() < log.logEndOffset()) {
      MemoryRecords records = inMemory(log.read(to.logEndOffset(), maxBytes, Long.MAX_VALUE));
      if (records.sizeInBytes() > 0) {
        RecordBatch first = records.batches().iterator().next();
        if (to.logEndOffset() == to.logStartOffset() && first.baseOffset() < to.logEndOffset()) {
          to.truncateFullyAndStartAt(first.baseOffset()); // this log starts inside that batch
        }
        to.appendAsFollower(records);
      }
    }
    return to.logEndOffset() == log.logEndOffset();
  }

  private static MemoryRecords inMemory(LogReadInfo read) {
    if (read.records() instanceof MemoryRecords records) {
      return records;
    }
    FileRecords file = (FileRecords) read.records();
    ByteBuffer buffer = ByteBuffer.allocate(file.sizeInBytes());
    try {
      file.readInto(buffer, 0);
    } catch (IOException e) {
      throw new KafkaStorageException("Reading " + file + " failed", e);
    }
    return MemoryRecords.readableRecords(buffer);
  }

  /**
   * Takes {@code replacement}, the future log that held all this log held, in place of it: its
   * start moves up to this log's, and this partition reads and writes it from now on.
   */
  void replaceLog(FutureReplica future, Supplier<PartitionLog> replace) {
    PartitionLog to = future.log();
    if (to.logStartOffset() < log.logStartOffset()) {
      to.deleteRecordsBefore(log.logStartOffset());
    }
    log = replace.get();
    log.updateConfig(logConfig);
    log.updateHighWatermark(highWatermark);
  }

  /** Gives the log the config its topic has now, if that changed. */
  void applyConfig(LogConfig config) {
    if (!config.equals(logConfig)) {
      log.updateConfig(config);
      logConfig = config;
    }
  }

  /** What {@link #applyState} changed in the replica's role. */
  enum Transition {
    NONE,
    BECAME_LEADER,
    BECAME_FOLLOWER
  }

  /**
   * Applies the partition's state from the metadata: leader or follower, its epoch and ISR. States
   * older than the one applied are ignored.
   */
  Transition applyState(PartitionState next, List<Integer> assignment, int minIsr, long nowMs) {
    if (!assignment.equals(replicas)) {
      replicas = assignment;
      trackFollowers();
    }
    minInsyncReplicas = minIsr;
    if (state != null && next.modRevision() <= state.modRevision()) {
      return Transition.NONE;
    }
    PartitionState previous = state;
    state = next;
    proposedIsr = null; // whatever became of a proposal, this is the ISR now
    boolean newEpoch = previous == null || previous.leaderEpoch() != next.leaderEpoch();
    if (next.leader() == localId) {
      if (leaderState == null || newEpoch) {
        becomeLeader(nowMs);
        return Transition.BECAME_LEADER;
      }
      onIsrChanged();
      return Transition.NONE;
    }
    if (leaderState != null || newEpoch || previous.leader() != next.leader()) {
      becomeFollower();
      return Transition.BECAME_FOLLOWER;
    }
    return Transition.NONE;
  }

  private void becomeLeader(long nowMs) {
    log.assignLeaderEpoch(state.leaderEpoch());
    leaderState = new LeaderState(log.logEndOffset());
    for (int replica : replicas) {
      if (replica != localId) {
        Follower follower = new Follower();
        follower.lastCaughtUpMs = state.isr().contains(replica) ? nowMs : 0;
        leaderState.followers.put(replica, follower);
      }
    }
    setHighWatermark(Math.min(Math.max(highWatermark, log.logStartOffset()), log.logEndOffset()));
    LOG.info(
        "{}: leader at epoch {} with ISR {}, LEO {}, HW {}",
        tp,
        state.leaderEpoch(),
        state.isr(),
        log.logEndOffset(),
        highWatermark);
    maybeAdvanceHighWatermark();
  }

  /**
   * As leader, follows the progress of exactly the replicas assigned now: a move's adding replicas
   * start out of sync (Kafka's new replica state), the replicas it removed are forgotten.
   */
  private void trackFollowers() {
    if (leaderState == null) {
      return;
    }
    leaderState.followers.keySet().removeIf(replica -> !replicas.contains(replica));
    for (int replica : replicas) {
      if (replica != localId) {
        leaderState.followers.putIfAbsent(replica, new Follower());
      }
    }
  }

  private void becomeFollower() {
    boolean wasLeader = leaderState != null;
    leaderState = null;
    caughtUp = false;
    setHighWatermark(Math.min(highWatermark, log.logEndOffset()));
    if (wasLeader) {
      LOG.info("{}: follower of {} at epoch {}", tp, state.leader(), state.leaderEpoch());
    }
  }

  /** Stops acting as leader, without a new state: this broker lost its registration. */
  void resign() {
    if (leaderState != null) {
      LOG.warn("{}: no longer leading: this broker lost its registration", tp);
      leaderState = null;
      state = null;
      proposedIsr = null;
    }
  }

  private void onIsrChanged() {
    maybeAdvanceHighWatermark();
  }

  /** Whether, as leader, its ISR is below {@code min.insync.replicas}: the HW cannot move. */
  boolean isrBelowMinimum() {
    return leaderState != null && state.isr().size() < minInsyncReplicas;
  }

  /** Why the ISR is below {@code min.insync.replicas}, for an error. */
  String isrShortfall() {
    return "The ISR "
        + (state == null ? List.of() : state.isr())
        + " of "
        + tp
        + " is smaller than min.insync.replicas="
        + minInsyncReplicas;
  }

  boolean isLeader() {
    return leaderState != null;
  }

  ReplicaStatus status() {
    return new ReplicaStatus(
        tp,
        isLeader(),
        leaderId(),
        leaderEpoch(),
        replicas,
        state == null ? List.of() : state.isr(),
        minInsyncReplicas,
        log.logStartOffset(),
        highWatermark,
        log.logEndOffset(),
        log.lastStableOffset(),
        log.sizeInBytes(),
        log.dir().getParent().toString());
  }

  int leaderId() {
    return state == null ? PartitionState.NO_LEADER : state.leader();
  }

  int leaderEpoch() {
    return state == null ? RecordBatch.NO_PARTITION_LEADER_EPOCH : state.leaderEpoch();
  }

  PartitionState state() {
    return state;
  }

  long highWatermark() {
    return highWatermark;
  }

  private void setHighWatermark(long offset) {
    highWatermark = offset;
    log.updateHighWatermark(offset);
  }

  void checkLeader(int currentLeaderEpoch) {
    if (leaderState == null) {
      throw new NotLeaderOrFollowerException(
          "Broker " + localId + " does not lead " + tp + " (leader: " + leaderId() + ")");
    }
    if (currentLeaderEpoch != RecordBatch.NO_PARTITION_LEADER_EPOCH) {
      if (currentLeaderEpoch < state.leaderEpoch()) {
        throw new FencedLeaderEpochException(
            "Epoch " + currentLeaderEpoch + " is older than " + state.leaderEpoch());
      }
      if (currentLeaderEpoch > state.leaderEpoch()) {
        throw new UnknownLeaderEpochException(
            "Epoch " + currentLeaderEpoch + " is newer than " + state.leaderEpoch());
      }
    }
  }

  /**
   * Appends a producer's batches (a client's, or a coordinator's: {@code origin}) as leader; an
   * {@code acks=all} append is refused while the ISR is below {@code min.insync.replicas}. Whether
   * the HW has passed it is the caller's to ask.
   */
  LogAppendInfo appendAsLeader(MemoryRecords records, short acks, AppendOrigin origin) {
    checkLeader(RecordBatch.NO_PARTITION_LEADER_EPOCH);
    if (acks == -1 && isrBelowMinimum()) {
      throw new NotEnoughReplicasException(isrShortfall());
    }
    LogAppendInfo info = log.append(records, state.leaderEpoch(), origin);
    maybeAdvanceHighWatermark();
    return info;
  }

  /**
   * Appends a transaction marker as leader, for the coordinator (WriteTxnMarkers); refused, as an
   * {@code acks=all} append, while the ISR is below {@code min.insync.replicas}.
   */
  LogAppendInfo appendMarker(long producerId, short producerEpoch, EndTransactionMarker marker) {
    checkLeader(RecordBatch.NO_PARTITION_LEADER_EPOCH);
    if (isrBelowMinimum()) {
      throw new NotEnoughReplicasException(isrShortfall());
    }
    LogAppendInfo info = log.appendMarker(producerId, producerEpoch, marker, state.leaderEpoch());
    maybeAdvanceHighWatermark();
    return info;
  }

  /** Moves the HW to the smallest LEO in the ISR; returns whether it moved. */
  boolean maybeAdvanceHighWatermark() {
    if (leaderState == null || state.isr().size() < minInsyncReplicas) {
      return false;
    }
    long smallest = log.logEndOffset();
    Set<Integer> maximalIsr = new HashSet<>(state.isr());
    if (proposedIsr != null) {
      maximalIsr.addAll(proposedIsr);
    }
    for (int replica : maximalIsr) {
      // a replica a move removed may stay in the stored ISR a moment; it is no longer waited for
      if (replica != localId && replicas.contains(replica)) {
        Follower follower = leaderState.followers.get(replica);
        smallest = Math.min(smallest, follower == null ? -1 : follower.logEndOffset);
      }
    }
    if (smallest <= highWatermark) {
      return false;
    }
    setHighWatermark(smallest);
    return true;
  }

  /** What a follower's fetch gets from this leader. */
  record FollowerRead(LogReadInfo read, EpochEndOffset divergingEpoch, long highWatermark) {}

  /**
   * Serves a follower's fetch: records the follower's LEO (its fetch offset), checks its last
   * fetched epoch against this log's epochs (KIP-320), and reads up to the log end; or, when {@code
   * withhold} (a leader replication throttle), reads nothing.
   */
  FollowerRead readForFollower(
      int replicaId,
      long fetchOffset,
      int lastFetchedEpoch,
      int currentLeaderEpoch,
      int maxBytes,
      boolean withhold,
      long nowMs) {
    checkLeader(currentLeaderEpoch);
    Follower follower = leaderState.followers.get(replicaId);
    if (follower == null) {
      throw new NotLeaderOrFollowerException("Broker " + replicaId + " is not a replica of " + tp);
    }
    if (lastFetchedEpoch != RecordBatch.NO_PARTITION_LEADER_EPOCH) {
      EpochEndOffset end = log.endOffsetForEpoch(lastFetchedEpoch);
      if (end.isUndefined()) {
        // As Kafka: the follower restarts from this log's start or HW
        throw new OffsetOutOfRangeException(
            "Cannot place epoch " + lastFetchedEpoch + " in the history of " + tp);
      }
      if (end.epoch() < lastFetchedEpoch || end.endOffset() < fetchOffset) {
        return new FollowerRead(null, end, highWatermark);
      }
    }
    long leaderEnd = log.logEndOffset();
    if (fetchOffset > leaderEnd || fetchOffset < log.logStartOffset()) {
      throw new OffsetOutOfRangeException(
          "Offset "
              + fetchOffset
              + " is outside ["
              + log.logStartOffset()
              + ", "
              + leaderEnd
              + "]");
    }
    follower.logEndOffset = fetchOffset;
    if (fetchOffset >= leaderEnd) {
      follower.lastCaughtUpMs = nowMs;
    } else if (fetchOffset >= follower.leaderEndOffsetAtLastFetch) {
      follower.lastCaughtUpMs = Math.max(follower.lastCaughtUpMs, follower.lastFetchMs);
    }
    follower.leaderEndOffsetAtLastFetch = leaderEnd;
    follower.lastFetchMs = nowMs;
    maybeAdvanceHighWatermark();
    LogReadInfo read =
        withhold
            ? new LogReadInfo(MemoryRecords.EMPTY, 0, fetchOffset)
            : log.read(fetchOffset, maxBytes, leaderEnd);
    return new FollowerRead(read, null, highWatermark);
  }

  /** As leader: whether {@code replicaId} is in the ISR. */
  boolean inIsr(int replicaId) {
    return state != null && state.isr().contains(replicaId);
  }

  /**
   * The ISR this leader should propose now, or null when it is right. Only {@code eligible} brokers
   * (registered, not in a controlled shutdown) may join it.
   */
  List<Integer> wantedIsr(long nowMs, long replicaLagTimeMaxMs, IntPredicate eligible) {
    if (leaderState == null || proposedIsr != null) {
      return null;
    }
    List<Integer> wanted = new ArrayList<>(state.isr());
    for (Map.Entry<Integer, Follower> entry : leaderState.followers.entrySet()) {
      int replica = entry.getKey();
      Follower follower = entry.getValue();
      boolean inSync = wanted.contains(replica);
      boolean caughtUpLately = nowMs - follower.lastCaughtUpMs <= replicaLagTimeMaxMs;
      if (inSync && !caughtUpLately) {
        wanted.remove(Integer.valueOf(replica));
      } else if (!inSync
          && eligible.test(replica)
          && caughtUpLately
          && follower.logEndOffset >= highWatermark
          && follower.logEndOffset >= leaderState.epochStartOffset) {
        wanted.add(replica);
      }
    }
    return wanted.equals(state.isr()) ? null : wanted;
  }

  /** The leader proposed {@code isr}; see {@link #proposedIsr}. */
  void isrChangeStarted(List<Integer> isr) {
    proposedIsr = List.copyOf(isr);
  }

  /** Whether {@code isr} is still proposed, from {@code expected}, and nothing newer applied. */
  boolean stillProposes(PartitionState expected, List<Integer> isr) {
    return leaderState != null && state == expected && isr.equals(proposedIsr);
  }

  /**
   * Takes what a fetch from the leader returned at {@code epoch}: truncates to a diverging epoch's
   * end, or appends the records; then HW = min(the leader's HW, this LEO).
   */
  void onFetched(
      int epoch,
      EpochEndOffset diverging,
      MemoryRecords records,
      long leaderHighWatermark,
      long leaderLogStartOffset) {
    if (leaderState != null || epoch != leaderEpoch()) {
      return;
    }
    if (diverging != null) {
      EpochEndOffset local = log.endOffsetForEpoch(diverging.epoch());
      long localEnd = local.isUndefined() ? log.logEndOffset() : local.endOffset();
      long truncateTo = Math.min(diverging.endOffset(), localEnd);
      LOG.info(
          "{}: diverged from leader {} at epoch {}; truncating to {}",
          tp,
          leaderId(),
          diverging.epoch(),
          truncateTo);
      log.truncateTo(truncateTo);
    } else if (records.sizeInBytes() > 0) {
      RecordBatch first = records.batches().iterator().next();
      long end = log.logEndOffset();
      if (end == log.logStartOffset() && first.baseOffset() < end && first.lastOffset() >= end) {
        // An empty log that starts inside the leader's first batch (the leader's log start fell
        // mid-batch, by DeleteRecords): start it at the batch, as Kafka does
        LOG.info("{}: the log starts at {}, inside a batch from {}", tp, end, first.baseOffset());
        log.truncateFullyAndStartAt(first.baseOffset());
      }
      log.appendAsFollower(records);
    }
    if (leaderLogStartOffset > log.logStartOffset() && leaderLogStartOffset <= log.logEndOffset()) {
      log.deleteRecordsBefore(leaderLogStartOffset);
    }
    setHighWatermark(Math.min(leaderHighWatermark, log.logEndOffset()));
    caughtUp = log.logEndOffset() >= leaderHighWatermark;
  }

  /** A fetch from the leader was out of range: restart from its log start, or its HW. */
  void onOutOfRange(
      int epoch, long fetchOffset, long leaderLogStartOffset, long leaderHighWatermark) {
    if (leaderState != null || epoch != leaderEpoch()) {
      return;
    }
    if (fetchOffset < leaderLogStartOffset) {
      log.truncateFullyAndStartAt(leaderLogStartOffset);
    } else if (leaderHighWatermark >= 0) {
      log.truncateTo(leaderHighWatermark);
    }
    setHighWatermark(Math.min(highWatermark, log.logEndOffset()));
  }

  List<ActiveProducer> activeProducers() {
    return log.activeProducers();
  }

  long logStartOffset() {
    return log.logStartOffset();
  }

  long logEndOffset() {
    return log.logEndOffset();
  }

  long lastStableOffset() {
    return log.lastStableOffset();
  }

  /**
   * Where a consumer of {@code isolation} stops reading: the high watermark, or for {@code
   * read_committed} the last stable offset.
   */
  long lastFetchableOffset(IsolationLevel isolation) {
    return isolation == IsolationLevel.READ_COMMITTED ? log.lastStableOffset() : highWatermark;
  }

  /**
   * The bytes a read from {@code offset} finds now, up to the log end for a follower or a
   * consumer's {@link #lastFetchableOffset}; -1 when {@code offset} is outside the log.
   */
  long bytesReadable(long offset, int maxBytes, boolean byFollower, IsolationLevel isolation) {
    if (offset < log.logStartOffset() || offset > log.logEndOffset()) {
      return -1;
    }
    long end = byFollower ? log.logEndOffset() : lastFetchableOffset(isolation);
    return offset >= end ? 0 : log.read(offset, maxBytes, end).records().sizeInBytes();
  }

  /**
   * A consumer's read from {@code offset}: only what lies below its {@link #lastFetchableOffset};
   * for {@code read_committed} with the aborted transactions that overlap what it read. With {@code
   * logOnly}, null when that takes more than the log: records for {@code read_committed}, whose
   * aborted transactions are in the transaction indexes.
   */
  PartitionRead readAsConsumer(
      long offset, int maxBytes, IsolationLevel isolation, boolean logOnly) {
    if (logOnly
        && isolation == IsolationLevel.READ_COMMITTED
        && offset >= log.logStartOffset()
        && offset < lastFetchableOffset(isolation)) {
      return null;
    }
    LogReadInfo read = log.read(offset, maxBytes, lastFetchableOffset(isolation));
    List<AbortedTxn> aborted = null;
    if (isolation == IsolationLevel.READ_COMMITTED) {
      aborted =
          read.records().sizeInBytes() == 0
              ? List.of()
              : log.abortedTransactions(offset, read.nextOffset());
    }
    return new PartitionRead(
        read,
        null,
        highWatermark,
        log.logStartOffset(),
        log.logEndOffset(),
        log.lastStableOffset(),
        aborted);
  }

  /** The leader's read of its own log up to the log end, from {@code offset} or the log start. */
  PartitionRead readToLogEnd(long offset, int maxBytes) {
    return new PartitionRead(
        log.read(Math.max(offset, log.logStartOffset()), maxBytes, Long.MAX_VALUE),
        null,
        highWatermark,
        log.logStartOffset(),
        log.logEndOffset(),
        log.lastStableOffset(),
        null);
  }

  /**
   * Where this follower fetches from next: its log end, with the epoch it ends in; {@code
   * throttled} when its topic throttles this replica.
   */
  FetchPosition fetchPosition(boolean throttled) {
    return new FetchPosition(
        leaderEpoch(),
        log.logEndOffset(),
        log.latestEpoch(),
        log.logStartOffset(),
        highWatermark,
        throttled,
        caughtUp);
  }

  /** Moves the log start offset up to {@code offset}; returns the new log start. */
  long deleteRecordsBefore(long offset) {
    return log.deleteRecordsBefore(offset);
  }

  EpochEndOffset endOffsetForEpoch(int epoch) {
    return log.endOffsetForEpoch(epoch);
  }

  Optional<TimestampAndOffset> offsetForTimestamp(long timestamp) {
    return log.offsetForTimestamp(timestamp);
  }

  Optional<TimestampAndOffset> maxTimestampRecord() {
    return log.maxTimestampRecord();
  }

  /** The compaction pass this partition's log is due, if any. */
  Optional<LogCleaner.Task> planCleaning(LogCleaner cleaner, long nowMs) {
    return cleaner.plan(log, nowMs);
  }
}
