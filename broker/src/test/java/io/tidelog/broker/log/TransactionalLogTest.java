package io.tidelog.broker.log;

import static io.tidelog.broker.log.TestBatches.batch;
import static io.tidelog.broker.log.TestBatches.idempotent;
import static io.tidelog.broker.log.TestBatches.transactional;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.tidelog.broker.log.PartitionLog.LoadState;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.errors.InvalidProducerEpochException;
import org.apache.kafka.common.errors.InvalidTxnStateException;
import org.apache.kafka.common.errors.TransactionCoordinatorFencedException;
import org.apache.kafka.common.record.ControlRecordType;
import org.apache.kafka.common.record.EndTransactionMarker;
import org.apache.kafka.common.record.FileRecords;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.RecordBatch;
import org.apache.kafka.common.record.Records;
import org.apache.kafka.common.utils.MockTime;
import org.apache.kafka.storage.internals.log.AbortedTxn;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Transactions in the log, as Kafka's leader keeps them: the last stable offset, commit and abort
 * markers, the aborted transactions' index, and their survival across restarts, crashes and
 * truncation.
 */
class TransactionalLogTest {
  private static final long T0 = 1_700_000_000_000L;

  @TempDir Path logDir;
  private final MockTime time = new MockTime(0, T0, 0);
  private final LogServices services = new LogServices(time, Runnable::run, (dir, e) -> {});
  private final List<PartitionLog> opened = new ArrayList<>();

  @AfterEach
  void closeLogs() throws IOException {
    for (PartitionLog log : opened) {
      log.close();
    }
  }

  private PartitionLog open(Map<String, ?> configs, LoadState state) throws IOException {
    PartitionLog log =
        PartitionLog.open(logDir.resolve("orders-0"), LogConfig.parse(configs), state, services);
    opened.add(log);
    return log;
  }

  private static EndTransactionMarker commit(int coordinatorEpoch) {
    return new EndTransactionMarker(ControlRecordType.COMMIT, coordinatorEpoch);
  }

  private static EndTransactionMarker abort(int coordinatorEpoch) {
    return new EndTransactionMarker(ControlRecordType.ABORT, coordinatorEpoch);
  }

  @Test
  void theLastStableOffsetWaitsForTheMarkerAndItsReplication() throws IOException {
    PartitionLog log = open(Map.of(), LoadState.NEW);
    log.append(batch(T0, "a", "b"), 0); // 0, 1
    log.append(transactional(7, (short) 0, 0, T0, "t1", "t2"), 0); // 2, 3: opens 7's transaction
    log.append(batch(T0, "c"), 0); // 4
    log.updateHighWatermark(5);
    assertThat(log.lastStableOffset()).isEqualTo(2);

    LogAppendInfo marker = log.appendMarker(7, (short) 0, commit(0), 0); // 5
    assertThat(marker.firstOffset()).isEqualTo(5);
    // decided, but the marker is not below the high watermark yet: a new leader might not have it
    assertThat(log.lastStableOffset()).isEqualTo(2);

    log.updateHighWatermark(6);
    assertThat(log.lastStableOffset()).isEqualTo(6);
    RecordBatch stored = log.read(5, 1000, Long.MAX_VALUE).records().batches().iterator().next();
    assertThat(stored.isControlBatch()).isTrue();
    assertThat(stored.isTransactional()).isTrue();
    assertThat(stored.producerId()).isEqualTo(7);
    // a commit leaves nothing in the transaction index
    assertThat(log.abortedTransactions(0, 6)).isEmpty();
    assertThat(Files.exists(log.dir().resolve("00000000000000000000.txnindex"))).isFalse();
  }

  @Test
  void anAbortIsIndexedWithTheLastStableOffsetOfItsTime() throws IOException {
    PartitionLog log = open(Map.of(), LoadState.NEW);
    log.append(transactional(7, (short) 0, 0, T0, "x1", "x2"), 0); // 0, 1
    log.append(transactional(8, (short) 0, 0, T0, "y1"), 0); // 2
    log.appendMarker(7, (short) 0, abort(3), 0); // 3
    log.appendMarker(8, (short) 0, commit(3), 0); // 4
    log.append(transactional(7, (short) 0, 2, T0, "x3"), 0); // 5: 7's next transaction
    log.appendMarker(7, (short) 0, abort(3), 0); // 6
    log.updateHighWatermark(7);

    // 8's transaction was open from offset 2 when 7's first one aborted
    assertThat(log.abortedTransactions(0, 7))
        .containsExactly(new AbortedTxn(7, 0, 3, 2), new AbortedTxn(7, 5, 6, 7));
    // a fetch sees those that overlap its range only
    assertThat(log.abortedTransactions(4, 5)).isEmpty();
    assertThat(log.abortedTransactions(4, 6)).containsExactly(new AbortedTxn(7, 5, 6, 7));
    assertThat(Files.size(log.dir().resolve("00000000000000000000.txnindex"))).isEqualTo(2 * 34);
    assertThat(log.lastStableOffset()).isEqualTo(7);
    assertThat(log.activeProducers())
        .extracting(ActiveProducer::producerId, ActiveProducer::coordinatorEpoch)
        .containsExactly(tuple(7L, 3), tuple(8L, 3));
  }

  @Test
  void aTransactionSpanningSegmentsIsFoundFromAnyOfThem() throws IOException {
    PartitionLog log = open(Map.of("segment.bytes", "200"), LoadState.NEW);
    for (int seq = 0; seq < 4; seq++) {
      log.append(transactional(7, (short) 0, seq, T0, "t" + seq), 0); // 0..3
    }
    log.appendMarker(7, (short) 0, abort(0), 0); // 4
    log.updateHighWatermark(5);
    assertThat(log.numberOfSegments()).isGreaterThan(2);

    // a fetch from the second segment still learns of the abort, recorded with the marker's
    for (long from = 0; from < 4; from++) {
      assertThat(log.abortedTransactions(from, 5)).containsExactly(new AbortedTxn(7, 0, 4, 5));
    }
  }

  @Test
  void aProducerMayNotLeaveItsTransactionWithoutAMarker() throws IOException {
    PartitionLog log = open(Map.of(), LoadState.NEW);
    log.append(transactional(7, (short) 0, 0, T0, "t"), 0);

    assertThrows(
        InvalidTxnStateException.class,
        () -> log.append(idempotent(7, (short) 0, 1, T0, "plain"), 0));

    log.appendMarker(7, (short) 0, commit(0), 0);
    assertThat(log.append(idempotent(7, (short) 0, 1, T0, "plain"), 0).firstOffset()).isEqualTo(2);
  }

  @Test
  void markersOfZombiesAreRefusedAsKafkaRefusesThem() throws IOException {
    PartitionLog log = open(Map.of(), LoadState.NEW);
    log.append(transactional(7, (short) 5, 0, T0, "t"), 0);

    // an older producer epoch
    assertThrows(
        InvalidProducerEpochException.class, () -> log.appendMarker(7, (short) 4, commit(0), 0));
    // KIP-890: the coordinator writes the marker with the epoch it bumped, which is taken
    log.appendMarker(7, (short) 6, commit(2), 0);
    // and the same marker again (the coordinator's retry)
    log.appendMarker(7, (short) 6, commit(2), 0);
    // a coordinator older than the last marker's is fenced
    assertThrows(
        TransactionCoordinatorFencedException.class,
        () -> log.appendMarker(7, (short) 7, commit(1), 0));
    assertThat(log.logEndOffset()).isEqualTo(3);
    // the producer's next transaction runs at the bumped epoch, from sequence 0
    log.append(transactional(7, (short) 6, 0, T0, "next"), 0);
    assertThat(log.lastStableOffset()).isZero();
  }

  @Test
  void anOpenTransactionSurvivesARestartAndOutlivesTheProducerExpiration() throws IOException {
    PartitionLog log = open(Map.of(), LoadState.NEW);
    log.append(batch(T0, "a"), 0); // 0
    log.append(transactional(7, (short) 0, 0, T0, "t"), 0); // 1
    log.close();
    opened.remove(log);

    PartitionLog reopened = open(Map.of(), new LoadState(2, 0, true));
    reopened.updateHighWatermark(2);
    assertThat(reopened.lastStableOffset()).isEqualTo(1);
    assertThat(reopened.activeProducers())
        .singleElement()
        .extracting(ActiveProducer::currentTxnStartOffset)
        .isEqualTo(1L);

    time.sleep(PartitionLog.PRODUCER_ID_EXPIRATION_MS + 1);
    reopened.deleteOldSegments();
    assertThat(reopened.activeProducers()).hasSize(1);

    reopened.appendMarker(7, (short) 0, abort(0), 0);
    time.sleep(PartitionLog.PRODUCER_ID_EXPIRATION_MS + 1);
    reopened.deleteOldSegments();
    assertThat(reopened.activeProducers()).isEmpty();
  }

  @Test
  void aCrashRebuildsTheAbortIndexAndATruncationReopensTheTransaction() throws IOException {
    Map<String, String> configs = Map.of("segment.bytes", "200");
    PartitionLog log = open(configs, LoadState.NEW);
    for (int seq = 0; seq < 3; seq++) {
      log.append(transactional(7, (short) 0, seq, T0, "t" + seq), 0); // 0..2
    }
    log.append(transactional(8, (short) 0, 0, T0, "u"), 0); // 3
    log.appendMarker(7, (short) 0, abort(0), 0); // 4
    long markerSegment = log.segments().baseOffsetHolding(4);
    for (int i = 0; i < 4; i++) {
      log.append(batch(T0, "later" + i), 0); // 5..8, rolling on: snapshots after the marker
    }
    assertThat(log.segments().active().baseOffset()).isGreaterThan(markerSegment);
    log.markOffline(); // a crash
    opened.remove(log);
    // whose page cache lost the transaction index
    Files.delete(LogSegment.file(log.dir(), markerSegment, LogSegment.TXN_INDEX_SUFFIX));

    PartitionLog recovered = open(configs, new LoadState(0, 0, false));
    recovered.updateHighWatermark(9);
    assertThat(recovered.abortedTransactions(0, 9)).containsExactly(new AbortedTxn(7, 0, 4, 3));
    assertThat(recovered.lastStableOffset()).isEqualTo(3); // 8's transaction is still open

    // A follower truncated below the marker: 7's transaction is open again, the index forgets it
    recovered.truncateTo(4);
    recovered.updateHighWatermark(4);
    assertThat(recovered.abortedTransactions(0, 4)).isEmpty();
    assertThat(recovered.lastStableOffset()).isEqualTo(0);
    // and a marker fetched from the new leader closes it again
    recovered.appendMarker(7, (short) 0, commit(1), 0);
    recovered.updateHighWatermark(5);
    assertThat(recovered.abortedTransactions(0, 5)).isEmpty();
    assertThat(recovered.lastStableOffset()).isEqualTo(3);
  }

  @Test
  void aFollowerTracksTransactionsFromTheBatchesItFetches() throws IOException {
    PartitionLog leader = open(Map.of(), LoadState.NEW);
    leader.append(transactional(7, (short) 0, 0, T0, "t"), 0);
    leader.appendMarker(7, (short) 0, abort(0), 0);
    leader.append(transactional(8, (short) 0, 0, T0, "u"), 0);

    PartitionLog follower =
        PartitionLog.open(
            logDir.resolve("follower-0"), LogConfig.parse(Map.of()), LoadState.NEW, services);
    opened.add(follower);
    follower.appendAsFollower(
        MemoryRecords.readableRecords(copy(leader.read(0, 10_000, Long.MAX_VALUE).records())));
    follower.updateHighWatermark(3);

    assertThat(follower.abortedTransactions(0, 3)).containsExactly(new AbortedTxn(7, 0, 1, 2));
    assertThat(follower.lastStableOffset()).isEqualTo(2);
  }

  private static ByteBuffer copy(Records records) throws IOException {
    ByteBuffer bytes = ByteBuffer.allocate(records.sizeInBytes());
    ((FileRecords) records).readInto(bytes, 0);
    return bytes;
  }
}
