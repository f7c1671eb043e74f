package io.tidelog.broker.txn;

import java.util.HashSet;
import java.util.Set;
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

  int timeoutMs;
  TransactionState state;
  final Set<TopicPartition> partitions = new HashSet<>();
  long startTimestampMs = -1;
  long lastUpdateTimestampMs;

  /** The state a prepared change moves to; null when none is in flight. */
  TransactionState pendingState;

  /** A fencing bump that could not be written: the next fence reuses its epoch. */
  boolean failedEpochFence;

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
    short bumped = failedEpochFence ? producerEpoch : (short) (producerEpoch + 1);
    return prepare(
        TransactionState.PREPARE_EPOCH_FENCE,
        producerId,
        bumped,
        RecordBatch.NO_PRODUCER_EPOCH,
        timeoutMs,
        Set.copyOf(partitions),
        startTimestampMs,
        lastUpdateTimestampMs);
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
    short nextEpoch;
    short lastEpoch;
    if (!hasExpected) {
      nextEpoch = bumped;
      lastEpoch = RecordBatch.NO_PRODUCER_EPOCH;
    } else if (producerEpoch == RecordBatch.NO_PRODUCER_EPOCH || expectedEpoch == producerEpoch) {
      nextEpoch = bumped;
      lastEpoch = producerEpoch;
    } else if (expectedEpoch == lastProducerEpoch) {
      nextEpoch = producerEpoch;
      lastEpoch = lastProducerEpoch;
    } else {
      throw new ProducerFencedException(
          "Epoch "
              + expectedEpoch
              + " is neither the current epoch "
              + producerEpoch
              + " nor the last one "
              + lastProducerEpoch);
    }
    return prepare(
        TransactionState.EMPTY,
        producerId,
        nextEpoch,
        lastEpoch,
        newTimeoutMs,
        Set.of(),
        -1,
        nowMs);
  }

  /** A new producer id at epoch 0, once the epochs of the current one are exhausted. */
  TxnTransitMetadata prepareProducerIdRotation(
      long newProducerId, int newTimeoutMs, long nowMs, boolean recordLastEpoch) {
    return prepare(
        TransactionState.EMPTY,
        newProducerId,
        (short) 0,
        recordLastEpoch ? producerEpoch : RecordBatch.NO_PRODUCER_EPOCH,
        newTimeoutMs,
        Set.of(),
        -1,
        nowMs);
  }

  TxnTransitMetadata prepareAddPartitions(Set<TopicPartition> added, long nowMs) {
    long start =
        switch (state) {
          case EMPTY, COMPLETE_ABORT, COMPLETE_COMMIT -> nowMs;
          default -> startTimestampMs;
        };
    Set<TopicPartition> all = new HashSet<>(partitions);
    all.addAll(added);
    return prepare(
        TransactionState.ONGOING,
        producerId,
        producerEpoch,
        lastProducerEpoch,
        timeoutMs,
        Set.copyOf(all),
        start,
        nowMs);
  }

  TxnTransitMetadata prepareAbortOrCommit(TransactionState next, long nowMs) {
    return prepare(
        next,
        producerId,
        producerEpoch,
        lastProducerEpoch,
        timeoutMs,
        Set.copyOf(partitions),
        startTimestampMs,
        nowMs);
  }

  TxnTransitMetadata prepareComplete(long nowMs) {
    TransactionState next =
        state == TransactionState.PREPARE_COMMIT
            ? TransactionState.COMPLETE_COMMIT
            : TransactionState.COMPLETE_ABORT;
    failedEpochFence = false;
    return prepare(
        next,
        producerId,
        producerEpoch,
        lastProducerEpoch,
        timeoutMs,
        Set.of(),
        startTimestampMs,
        nowMs);
  }

  TxnTransitMetadata prepareDead() {
    return prepare(
        TransactionState.DEAD,
        producerId,
        producerEpoch,
        lastProducerEpoch,
        timeoutMs,
        Set.of(),
        startTimestampMs,
        lastUpdateTimestampMs);
  }

  private TxnTransitMetadata prepare(
      TransactionState next,
      long newProducerId,
      short newEpoch,
      short newLastEpoch,
      int newTimeoutMs,
      Set<TopicPartition> newPartitions,
      long newStartMs,
      long updateMs) {
    if (pendingState != null) {
      throw new IllegalStateException(
          transactionalId + " is already moving to " + pendingState + ", not to " + next);
    }
    if (!next.validPreviousStates().contains(state)) {
      throw new IllegalStateException(
          transactionalId + " cannot move from " + state + " to " + next);
    }
    pendingState = next;
    return new TxnTransitMetadata(
        newProducerId,
        RecordBatch.NO_PRODUCER_ID,
        RecordBatch.NO_PRODUCER_ID,
        newEpoch,
        newLastEpoch,
        newTimeoutMs,
        next,
        newPartitions,
        newStartMs,
        updateMs,
        TransactionVersion.TV_0);
  }

  /** Applies a prepared change once {@code __transaction_state} has it. */
  void complete(TxnTransitMetadata transit) {
    if (pendingState != transit.txnState()) {
      throw new IllegalStateException(
          transactionalId + " completes " + transit.txnState() + " but prepared " + pendingState);
    }
    producerId = transit.producerId();
    producerEpoch = transit.producerEpoch();
    lastProducerEpoch = transit.lastProducerEpoch();
    timeoutMs = transit.txnTimeoutMs();
    state = transit.txnState();
    partitions.clear();
    partitions.addAll(transit.topicPartitions());
    startTimestampMs = transit.txnStartTimestamp();
    lastUpdateTimestampMs = transit.txnLastUpdateTimestamp();
    pendingState = null;
  }

  /** Drops a prepared change that could not be written. */
  void abandon() {
    pendingState = null;
  }
}
