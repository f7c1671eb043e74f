package io.tidelog.broker.txn;

import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.ProducerFencedException;
import org.apache.kafka.common.record.RecordBatch;
import org.apache.kafka.coordinator.transaction.TransactionState;
import org.apache.kafka.coordinator.transaction.TxnTransitMetadata;
import org.apache.kafka.server.common.TransactionVersion;

/**
 * One transactional id as its coordinator keeps it, Kafka's {@code TransactionMetadata}: the
 * producer id and epoch it hands out, the transaction's state, partitions and timestamps. A change
 * is prepared ({@code prepare...}, which sets the pending state and refuses another change until
 * then), written to {@code __transaction_state}, and applied when the write succeeded ({@link
 * #complete}) or dropped when it failed ({@link #abandon}).
 *
 * <p>Not thread-safe: only the coordinator's thread touches it.
 */
final class TransactionMetadata {
  final String transactionalId;
  long producerId;
  short producerEpoch;

  /** The epoch before the last bump the producer asked for, to answer its retry (KIP-360). */
  short lastProducerEpoch;

  /** The producer id before the last one, to answer the retry of an EndTxn that rotated it. */
  long previousProducerId = RecordBatch.NO_PRODUCER_ID;

  /**
   * The producer id a transaction ending with exhausted epochs moves to once its markers are
   * written (transaction protocol 2); -1 otherwise.
   */
  long nextProducerId = RecordBatch.NO_PRODUCER_ID;

  /** The transaction protocol of the producer's last change: 2 bumps the epoch at each end. */
  TransactionVersion clientTransactionVersion = TransactionVersion.TV_0;

  int timeoutMs;
  TransactionState state;
  final Set<TopicPartition> partitions = new HashSet<>();
  long startTimestampMs = -1;
  long lastUpdateTimestampMs;

  /** The state a prepared change moves to; null when none is in flight. */
  TransactionState pendingState;

  /** A fencing bump that could not be written: the next fence reuses its epoch. */
  boolean failedEpochFence;

  /** Completed once no change is in progress; null until asked for. */
  private CompletableFuture<Void> settled;

  TransactionMetadata(String transactionalId, long producerId, int timeoutMs, long nowMs) {
    this.transactionalId = transactionalId;
    this.producerId = producerId;
    this.producerEpoch = RecordBatch.NO_PRODUCER_EPOCH;
    this.lastProducerEpoch = RecordBatch.NO_PRODUCER_EPOCH;
    this.timeoutMs = timeoutMs;
    this.state = TransactionState.EMPTY;
    this.lastUpdateTimestampMs = nowMs;
  }

  /** The metadata a record of {@code __transaction_state} holds. */
  static TransactionMetadata loaded(String transactionalId, TxnTransitMetadata stored) {
    TransactionMetadata metadata =
        new TransactionMetadata(
            transactionalId,
            stored.producerId(),
            stored.txnTimeoutMs(),
            stored.txnLastUpdateTimestamp());
    metadata.producerEpoch = stored.producerEpoch();
    metadata.previousProducerId = stored.prevProducerId();
    metadata.nextProducerId = stored.nextProducerId();
    metadata.clientTransactionVersion = stored.clientTransactionVersion();
    metadata.state = stored.txnState();
    metadata.partitions.addAll(stored.topicPartitions());
    metadata.startTimestampMs = stored.txnStartTimestamp();
    return metadata;
  }

  static boolean isEpochExhausted(short epoch) {
    return epoch >= Short.MAX_VALUE - 1;
  }

  boolean isProducerEpochExhausted() {
    return isEpochExhausted(producerEpoch);
  }

  boolean hasPendingTransition() {
    return pendingState != null;
  }

  /** Bumps the epoch to fence the current producer before its transaction is aborted. */
  TxnTransitMetadata prepareFenceProducerEpoch() {
    if (producerEpoch == Short.MAX_VALUE) {
      throw new IllegalStateException("Cannot fence producer epoch " + producerEpoch);
    }
    Transition next = new Transition(TransactionState.PREPARE_EPOCH_FENCE);
    next.epoch = failedEpochFence ? producerEpoch : (short) (producerEpoch + 1);
    next.lastEpoch = RecordBatch.NO_PRODUCER_EPOCH;
    return prepare(next);
  }

  /**
   * InitProducerId on the same producer id: the next epoch, or for a retry of a bump that
   * succeeded, the current one again.
   *
   * @param expectedEpoch the producer's epoch, or -1 for a producer that names none
   * @throws ProducerFencedException when the producer's epoch is neither current nor the last one
   */
  TxnTransitMetadata prepareIncrementProducerEpoch(
      int newTimeoutMs, boolean hasExpected, short expectedEpoch, long nowMs) {
    if (isProducerEpochExhausted()) {
      throw new IllegalStateException("No epochs left for producer id " + producerId);
    }
    short bumped = (short) (producerEpoch + 1);
    Transition next = emptied(newTimeoutMs, nowMs);
    if (!hasExpected) {
      next.epoch = bumped;
      next.lastEpoch = RecordBatch.NO_PRODUCER_EPOCH;
    } else if (producerEpoch == RecordBatch.NO_PRODUCER_EPOCH || expectedEpoch == producerEpoch) {
      next.epoch = bumped;
      next.lastEpoch = producerEpoch;
    } else if (expectedEpoch == lastProducerEpoch) {
      next.epoch = producerEpoch;
      next.lastEpoch = lastProducerEpoch;
    } else {
      throw new ProducerFencedException(
          "Epoch "
              + expectedEpoch
              + " is neither the current epoch "
              + producerEpoch
              + " nor the last one "
              + lastProducerEpoch);
    }
    return prepare(next);
  }

  /** A new producer id at epoch 0, once the epochs of the current one are exhausted. */
  TxnTransitMetadata prepareProducerIdRotation(
      long newProducerId, int newTimeoutMs, long nowMs, boolean recordLastEpoch) {
    Transition next = emptied(newTimeoutMs, nowMs);
    next.producerId = newProducerId;
    next.epoch = 0;
    next.lastEpoch = recordLastEpoch ? producerEpoch : RecordBatch.NO_PRODUCER_EPOCH;
    return prepare(next);
  }

  /** The start of an InitProducerId's change: Empty, no partitions, the producer's timeout. */
  private Transition emptied(int newTimeoutMs, long nowMs) {
    Transition next = new Transition(TransactionState.EMPTY);
    next.timeoutMs = newTimeoutMs;
    next.partitions = Set.of();
    next.startMs = -1;
    next.updateMs = nowMs;
    return next;
  }

  TxnTransitMetadata prepareAddPartitions(
      Set<TopicPartition> added, long nowMs, TransactionVersion version) {
    Transition next = new Transition(TransactionState.ONGOING);
    next.startMs =
        switch (state) {
          case EMPTY, COMPLETE_ABORT, COMPLETE_COMMIT -> nowMs;
          default -> startTimestampMs;
        };
    Set<TopicPartition> all = new HashSet<>(partitions);
    all.addAll(added);
    next.partitions = Set.copyOf(all);
    next.updateMs = nowMs;
    next.version = version;
    return prepare(next);
  }

  /**
   * PrepareCommit or PrepareAbort. A producer of transaction protocol 2 gets the next epoch (its
   * markers carry it, which fences the transaction's late writes), and with the epochs exhausted,
   * {@code nextProducerId} to move to once the markers are written.
   *
   * @param noPartitionAdded an abort of protocol 2 that no partition joined: it starts now
   */
  TxnTransitMetadata prepareAbortOrCommit(
      TransactionState state,
      TransactionVersion version,
      long nextProducerId,
      long nowMs,
      boolean noPartitionAdded) {
    Transition next = new Transition(state);
    if (version.supportsEpochBump()) {
      next.epoch = (short) (producerEpoch + 1);
      next.lastEpoch = producerEpoch;
    }
    next.startMs = noPartitionAdded ? nowMs : startTimestampMs;
    next.nextProducerId = nextProducerId;
    next.updateMs = nowMs;
    next.version = version;
    return prepare(next);
  }

  /**
   * CompleteCommit or CompleteAbort, once the markers are written; a transaction of protocol 2 that
   * exhausted its epochs moves to its next producer id, at epoch 0.
   */
  TxnTransitMetadata prepareComplete(long nowMs) {
    failedEpochFence = false;
    Transition next =
        new Transition(
            state == TransactionState.PREPARE_COMMIT
                ? TransactionState.COMPLETE_COMMIT
                : TransactionState.COMPLETE_ABORT);
    if (clientTransactionVersion.supportsEpochBump()
        && nextProducerId != RecordBatch.NO_PRODUCER_ID) {
      next.producerId = nextProducerId;
      next.epoch = 0;
    }
    next.nextProducerId = RecordBatch.NO_PRODUCER_ID;
    next.partitions = Set.of();
    next.updateMs = nowMs;
    return prepare(next);
  }

  TxnTransitMetadata prepareDead() {
    Transition next = new Transition(TransactionState.DEAD);
    next.partitions = Set.of();
    return prepare(next);
  }

  /** A change being prepared: the current values, then what the change sets. */
  private final class Transition {
    final TransactionState state;
    long producerId = TransactionMetadata.this.producerId;
    long nextProducerId = TransactionMetadata.this.nextProducerId;
    short epoch = producerEpoch;
    short lastEpoch = lastProducerEpoch;
    int timeoutMs = TransactionMetadata.this.timeoutMs;
    Set<TopicPartition> partitions = Set.copyOf(TransactionMetadata.this.partitions);
    long startMs = startTimestampMs;
    long updateMs = lastUpdateTimestampMs;
    TransactionVersion version = clientTransactionVersion;

    Transition(TransactionState state) {
      this.state = state;
    }
  }

  private TxnTransitMetadata prepare(Transition next) {
    if (pendingState != null) {
      throw new IllegalStateException(
          transactionalId + " is already moving to " + pendingState + ", not to " + next.state);
    }
    if (!next.state.validPreviousStates().contains(state)) {
      throw new IllegalStateException(
          transactionalId + " cannot move from " + state + " to " + next.state);
    }
    pendingState = next.state;
    return new TxnTransitMetadata(
        next.producerId,
        producerId,
        next.nextProducerId,
        next.epoch,
        next.lastEpoch,
        next.timeoutMs,
        next.state,
        next.partitions,
        next.startMs,
        next.updateMs,
        next.version);
  }

  /**
   * Done once no change of the id is in progress: none is being written, and the transaction being
   * ended (PrepareCommit, PrepareAbort) has its markers written.
   */
  CompletableFuture<Void> settled() {
    if (isSettled()) {
      return CompletableFuture.completedFuture(null);
    }
    if (settled == null) {
      settled = new CompletableFuture<>();
    }
    return settled;
  }

  private boolean isSettled() {
    return pendingState == null
        && state != TransactionState.PREPARE_COMMIT
        && state != TransactionState.PREPARE_ABORT;
  }

  private void maybeSettle() {
    if (settled != null && isSettled()) {
      CompletableFuture<Void> waiting = settled;
      settled = null;
      waiting.complete(null);
    }
  }

  /** Applies a prepared change once {@code __transaction_state} has it. */
  void complete(TxnTransitMetadata transit) {
    if (pendingState != transit.txnState()) {
      throw new IllegalStateException(
          transactionalId + " completes " + transit.txnState() + " but prepared " + pendingState);
    }
    producerId = transit.producerId();
    previousProducerId = transit.prevProducerId();
    nextProducerId = transit.nextProducerId();
    clientTransactionVersion = transit.clientTransactionVersion();
    producerEpoch = transit.producerEpoch();
    lastProducerEpoch = transit.lastProducerEpoch();
    timeoutMs = transit.txnTimeoutMs();
    state = transit.txnState();
    partitions.clear();
    partitions.addAll(transit.topicPartitions());
    startTimestampMs = transit.txnStartTimestamp();
    lastUpdateTimestampMs = transit.txnLastUpdateTimestamp();
    pendingState = null;
    maybeSettle();
  }

  /** Drops a prepared change that could not be written. */
  void abandon() {
    pendingState = null;
    maybeSettle();
  }
}
