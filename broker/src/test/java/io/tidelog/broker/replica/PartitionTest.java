package io.tidelog.broker.replica;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tidelog.broker.cluster.PartitionState;
import io.tidelog.broker.log.EpochEndOffset;
import io.tidelog.broker.log.LogConfig;
import io.tidelog.broker.log.LogServices;
import io.tidelog.broker.log.PartitionLog;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.errors.NotEnoughReplicasAfterAppendException;
import org.apache.kafka.common.errors.NotEnoughReplicasException;
import org.apache.kafka.common.errors.NotLeaderOrFollowerException;
import org.apache.kafka.common.record.ControlRecordType;
import org.apache.kafka.common.record.EndTransactionMarker;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.RecordBatch;
import org.apache.kafka.common.record.SimpleRecord;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.storage.internals.log.AbortedTxn;
import org.apache.kafka.storage.internals.log.AppendOrigin;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The leader's ISR decisions, on a real log. */
class PartitionTest {
  private static final long LAG_MS = 10_000;
  private static final long NOW = 1_000_000;

  @TempDir Path dir;
  private int logs;

  private Partition leaderWithFollower2OutOfSync() throws Exception {
    return leaderWithFollower2OutOfSync(RecordBatch.NO_PARTITION_LEADER_EPOCH);
  }

  /**
   * Leader 0 at epoch 1 of an empty log; follower 2 fetches at its end, having seen {@code epoch}.
   */
  private Partition leaderWithFollower2OutOfSync(int lastFetchedEpoch) throws Exception {
    PartitionLog log =
        PartitionLog.open(
            dir.resolve("leader-" + logs++).resolve("t-0"),
            LogConfig.parse(Map.of()),
            PartitionLog.LoadState.NEW,
            new LogServices(Time.SYSTEM, Runnable::run, (logDir, cause) -> {}));
    Partition partition = new Partition(new TopicPartition("t", 0), log, 0);
    replicaLogs.put(partition, log);
    partition.applyState(new PartitionState(0, 1, List.of(0, 1), 1, 10), List.of(0, 1, 2), 1, NOW);
    // Follower 2 fetches at the leader's end: caught up
    Partition.FollowerRead read =
        partition.readForFollower(2, log.logEndOffset(), lastFetchedEpoch, 1, 1024, false, NOW);
    assertThat(read.divergingEpoch()).isNull();
    return partition;
  }

  private Partition replica(int brokerId) throws Exception {
    PartitionLog log =
        PartitionLog.open(
            dir.resolve("broker-" + brokerId).resolve("t-0"),
            LogConfig.parse(Map.of()),
            PartitionLog.LoadState.NEW,
            new LogServices(Time.SYSTEM, Runnable::run, (logDir, cause) -> {}));
    Partition partition = new Partition(new TopicPartition("t", 0), log, brokerId);
    replicaLogs.put(partition, log);
    return partition;
  }

  /** The log of a replica made here: what the partition keeps to itself. */
  private final Map<Partition, PartitionLog> replicaLogs = new java.util.IdentityHashMap<>();

  private PartitionLog log(Partition partition) {
    return replicaLogs.get(partition);
  }

  @Test
  void aReadCommittedConsumerStopsAtTheLastStableOffsetAndLearnsOfAborts() throws Exception {
    Partition leader = replica(0);
    leader.applyState(new PartitionState(0, 1, List.of(0), 1, 10), List.of(0), 1, NOW);
    leader.appendAsLeader(
        MemoryRecords.withRecords(Compression.NONE, record("a")), (short) -1, AppendOrigin.CLIENT);
    leader.appendAsLeader(
        MemoryRecords.withTransactionalRecords(Compression.NONE, 7L, (short) 0, 0, record("t")),
        (short) -1,
        AppendOrigin.CLIENT);
    leader.appendAsLeader(
        MemoryRecords.withRecords(Compression.NONE, record("b")), (short) -1, AppendOrigin.CLIENT);
    assertThat(leader.highWatermark()).isEqualTo(3);

    PartitionRead committed =
        leader.readAsConsumer(0, 10_000, IsolationLevel.READ_COMMITTED, false);
    assertThat(offsets(committed)).containsExactly(0L);
    assertThat(committed.lastStableOffset()).isEqualTo(1);
    assertThat(committed.abortedTransactions()).isEmpty();
    assertThat(leader.bytesReadable(1, 10_000, false, IsolationLevel.READ_COMMITTED)).isZero();
    PartitionRead uncommitted =
        leader.readAsConsumer(0, 10_000, IsolationLevel.READ_UNCOMMITTED, false);
    assertThat(offsets(uncommitted)).containsExactly(0L, 1L, 2L);
    assertThat(uncommitted.abortedTransactions()).isNull();

    log(leader).appendMarker(7, (short) 0, new EndTransactionMarker(ControlRecordType.ABORT, 0), 1);
    leader.maybeAdvanceHighWatermark();

    PartitionRead afterAbort =
        leader.readAsConsumer(0, 10_000, IsolationLevel.READ_COMMITTED, false);
    assertThat(afterAbort.lastStableOffset()).isEqualTo(4);
    assertThat(offsets(afterAbort)).containsExactly(0L, 1L, 2L, 3L);
    assertThat(afterAbort.abortedTransactions()).containsExactly(new AbortedTxn(7, 1, 3, 4));
    assertThat(
            leader
                .readAsConsumer(2, 10_000, IsolationLevel.READ_COMMITTED, false)
                .abortedTransactions())
        .containsExactly(new AbortedTxn(7, 1, 3, 4));
    // in place, with only the log: what needs the transaction indexes is left to the shard
    assertThat(leader.readAsConsumer(0, 10_000, IsolationLevel.READ_COMMITTED, true)).isNull();
    assertThat(leader.readAsConsumer(4, 10_000, IsolationLevel.READ_COMMITTED, true)).isNotNull();
    assertThat(offsets(leader.readAsConsumer(0, 10_000, IsolationLevel.READ_UNCOMMITTED, true)))
        .containsExactly(0L, 1L, 2L, 3L);
  }

  private static SimpleRecord record(String value) {
    return new SimpleRecord(value.getBytes(java.nio.charset.StandardCharsets.UTF_8));
  }

  private static List<Long> offsets(PartitionRead read) {
    List<Long> offsets = new java.util.ArrayList<>();
    read.read().records().batches().forEach(b -> offsets.add(b.baseOffset()));
    return offsets;
  }

  @Test
  void aFollowerThatLedAnEpochWithoutWritingFollowsTheNextLeader() throws Exception {
    // Found by the fault suite: broker 3 was elected at epoch 2 and paused before it appended;
    // following broker 2 at epoch 3, it kept reporting epoch 2 as its last, was told it diverged
    // at epoch 1, "truncated" to its own log end, and fetched the same again, never rejoining.
    List<Integer> replicas = List.of(2, 3);
    MemoryRecords records =
        MemoryRecords.withRecords(
            0L,
            Compression.NONE,
            1,
            new SimpleRecord("a".getBytes()),
            new SimpleRecord("b".getBytes()));
    Partition two = replica(2);
    Partition three = replica(3);
    log(two).appendAsFollower(MemoryRecords.readableRecords(records.buffer().duplicate()));
    log(three).appendAsFollower(MemoryRecords.readableRecords(records.buffer().duplicate()));
    three.applyState(new PartitionState(3, 2, replicas, 2, 20), replicas, 1, NOW);
    two.applyState(new PartitionState(2, 3, replicas, 3, 30), replicas, 1, NOW);
    three.applyState(new PartitionState(2, 3, replicas, 3, 30), replicas, 1, NOW);
    assertThat(log(three).latestEpoch()).isEqualTo(2);

    Partition.FollowerRead diverged =
        two.readForFollower(
            3, log(three).logEndOffset(), log(three).latestEpoch(), 3, 1024, false, NOW);
    three.onFetched(3, diverged.divergingEpoch(), MemoryRecords.EMPTY, 2, 0);
    Partition.FollowerRead next =
        two.readForFollower(
            3, log(three).logEndOffset(), log(three).latestEpoch(), 3, 1024, false, NOW);

    assertThat(diverged.divergingEpoch()).isEqualTo(new EpochEndOffset(1, 2));
    assertThat(log(three).logEndOffset()).isEqualTo(2);
    assertThat(log(three).latestEpoch()).isEqualTo(1);
    assertThat(next.divergingEpoch()).isNull();
  }

  @Test
  void aCaughtUpFollowerRejoinsTheIsr() throws Exception {
    Partition partition = leaderWithFollower2OutOfSync();

    assertThat(partition.wantedIsr(NOW, LAG_MS, Set.of(0, 1, 2)::contains))
        .containsExactly(0, 1, 2);
  }

  @Test
  void whileTheIsrGrowsTheHighWatermarkWaitsForTheReplicaBeingAdded() throws Exception {
    // Found by the fault suite (a rolling restart): the leader of ISR {2, 3} proposed {2, 3, 1},
    // etcd took it, and before the leader applied it, it acknowledged acks=all records that 1 did
    // not have, as {2, 3} had them; the controlled shutdown of the leader then elected 1 from the
    // ISR etcd held, which lost them. Kafka's leader uses the maximal ISR while a change is
    // pending.
    Partition partition = leaderWithFollower2OutOfSync();
    List<Integer> wanted = partition.wantedIsr(NOW, LAG_MS, Set.of(0, 1, 2)::contains);
    partition.isrChangeStarted(wanted);
    partition.appendAsLeader(oneRecord(), (short) -1, AppendOrigin.CLIENT);

    partition.readForFollower(1, 1, 1, 1, 1024, false, NOW);
    assertThat(partition.highWatermark()).as("follower 2, being added, has not fetched").isZero();
    partition.readForFollower(2, 1, 1, 1, 1024, false, NOW);
    assertThat(partition.highWatermark()).isEqualTo(1);
  }

  @Test
  void aProposedIsrStandsUntilANewerStateIsAppliedWhateverItsWriteAnswered() throws Exception {
    // A write of ISR {0, 1, 2} that failed (an etcd timeout, say) may still have been applied:
    // until a newer state comes, the leader keeps waiting for 2 and proposes nothing else
    Partition partition = leaderWithFollower2OutOfSync();
    PartitionState expected = partition.state();
    List<Integer> wanted = partition.wantedIsr(NOW, LAG_MS, Set.of(0, 1, 2)::contains);
    partition.isrChangeStarted(wanted);
    partition.appendAsLeader(oneRecord(), (short) -1, AppendOrigin.CLIENT);
    partition.readForFollower(1, 1, 1, 1, 1024, false, NOW);

    assertThat(partition.stillProposes(expected, wanted)).isTrue();
    assertThat(partition.wantedIsr(NOW, LAG_MS, Set.of(0, 1, 2)::contains)).isNull();
    assertThat(partition.highWatermark()).as("2 may be in etcd's ISR already").isZero();

    // When the watch brings etcd's state, which took the change, the proposal is over
    partition.applyState(new PartitionState(0, 1, wanted, 2, 12), List.of(0, 1, 2), 1, NOW);
    assertThat(partition.stillProposes(expected, wanted)).isFalse();
    partition.readForFollower(2, 1, 1, 1, 1024, false, NOW);
    assertThat(partition.highWatermark()).isEqualTo(1);
  }

  @Test
  void aFollowerThatLedAnEarlierEpochOfTheEmptyLogRejoinsTheIsr() throws Exception {
    // It led epoch 0 without writing anything; this leader's history starts at epoch 1
    Partition partition = leaderWithFollower2OutOfSync(0);

    assertThat(partition.wantedIsr(NOW, LAG_MS, Set.of(0, 1, 2)::contains))
        .containsExactly(0, 1, 2);
  }

  @Test
  void aFollowerInControlledShutdownOrUnregisteredDoesNotRejoinTheIsr() throws Exception {
    Partition partition = leaderWithFollower2OutOfSync();

    assertThat(partition.wantedIsr(NOW, LAG_MS, Set.of(0, 1)::contains)).isNull();
  }

  private static MemoryRecords oneRecord() {
    return MemoryRecords.withRecords(Compression.NONE, new SimpleRecord("v".getBytes()));
  }

  /** An acks=all append to a leader whose ISR {0, 1, 2} needs two replicas, waiting. */
  private DelayedProduce waitingAcksAll(Partition partition) {
    partition.applyState(
        new PartitionState(0, 1, List.of(0, 1, 2), 2, 11), List.of(0, 1, 2), 2, NOW);
    DelayedProduce waiting =
        new DelayedProduce(
            partition,
            partition.leaderEpoch(),
            partition.appendAsLeader(oneRecord(), (short) -1, AppendOrigin.CLIENT));
    waiting.tryComplete(partition.tp);
    assertThat(waiting.result()).isNotDone();
    return waiting;
  }

  @Test
  void anAcksAllAppendFailsAfterTheAppendWhenTheIsrShrinksBelowTheMinimumAndThenBeforeIt()
      throws Exception {
    Partition partition = leaderWithFollower2OutOfSync();
    DelayedProduce waiting = waitingAcksAll(partition);

    // The ISR shrinks to the leader alone, below min.insync.replicas = 2
    partition.applyState(new PartitionState(0, 1, List.of(0), 3, 12), List.of(0, 1, 2), 2, NOW);
    waiting.tryComplete(partition.tp);

    assertThat(waiting.result())
        .failsWithin(Duration.ZERO)
        .withThrowableOfType(ExecutionException.class)
        .withCauseInstanceOf(NotEnoughReplicasAfterAppendException.class);
    assertThatThrownBy(() -> partition.appendAsLeader(oneRecord(), (short) -1, AppendOrigin.CLIENT))
        .isInstanceOf(NotEnoughReplicasException.class);
  }

  @Test
  void anAcksAllAppendCompletesWhenEveryIsrMemberHasFetchedPastIt() throws Exception {
    Partition partition = leaderWithFollower2OutOfSync();
    DelayedProduce waiting = waitingAcksAll(partition);
    long end = log(partition).logEndOffset();

    partition.readForFollower(1, end, partition.leaderEpoch(), 1, 1024, false, NOW);
    waiting.tryComplete(partition.tp);
    assertThat(waiting.result()).as("follower 2 has not fetched past it").isNotDone();
    partition.readForFollower(2, end, partition.leaderEpoch(), 1, 1024, false, NOW);
    waiting.tryComplete(partition.tp);

    assertThat(waiting.result()).succeedsWithin(Duration.ZERO);
    assertThat(partition.highWatermark()).isEqualTo(end);
  }

  @Test
  void anAcksAllAppendFailsWhenTheLeaderMovesOrThisBrokerResigns() throws Exception {
    Partition moved = leaderWithFollower2OutOfSync();
    DelayedProduce waiting = waitingAcksAll(moved);
    moved.applyState(new PartitionState(1, 2, List.of(0, 1, 2), 4, 13), List.of(0, 1, 2), 2, NOW);
    waiting.tryComplete(moved.tp);
    assertThat(waiting.result())
        .failsWithin(Duration.ZERO)
        .withThrowableOfType(ExecutionException.class)
        .withCauseInstanceOf(NotLeaderOrFollowerException.class);

    Partition resigned = leaderWithFollower2OutOfSync();
    DelayedProduce alsoWaiting = waitingAcksAll(resigned);
    resigned.resign();
    alsoWaiting.tryComplete(resigned.tp);
    assertThat(alsoWaiting.result())
        .failsWithin(Duration.ZERO)
        .withThrowableOfType(ExecutionException.class)
        .withCauseInstanceOf(NotLeaderOrFollowerException.class);
  }
}
