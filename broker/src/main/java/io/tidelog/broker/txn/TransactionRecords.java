package io.tidelog.broker.txn;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.MessageUtil;
import org.apache.kafka.common.record.Record;
import org.apache.kafka.common.record.SimpleRecord;
import org.apache.kafka.coordinator.transaction.TransactionState;
import org.apache.kafka.coordinator.transaction.TxnTransitMetadata;
import org.apache.kafka.coordinator.transaction.generated.CoordinatorRecordType;
import org.apache.kafka.coordinator.transaction.generated.TransactionLogKey;
import org.apache.kafka.coordinator.transaction.generated.TransactionLogValue;
import org.apache.kafka.server.common.TransactionVersion;

/**
 * The records of {@code __transaction_state}, in Kafka's format, so that Kafka's tools read them: a
 * key is the 2-byte record type {@code 0} and a {@code TransactionLogKey} (the transactional id); a
 * value is a 2-byte version and a {@code TransactionLogValue}; a record without a value deletes the
 * id. Values are written at version 1, as Kafka writes them from {@code transaction.version} 1 on:
 * its tagged fields keep the previous and next producer ids and the producer's transaction
 * protocol, which a coordinator that takes over needs to finish a transaction of protocol 2.
 *
 * <p>Stateless; any thread.
 */
final class TransactionRecords {
  private static final TransactionVersion WRITTEN_VERSION = TransactionVersion.TV_2;

  /** A record read back; {@code value} null when the id was deleted. */
  record Entry(String transactionalId, TxnTransitMetadata value) {}

  private TransactionRecords() {}

  static SimpleRecord of(String transactionalId, TxnTransitMetadata state, long nowMs) {
    if (state.txnState() == TransactionState.EMPTY && !state.topicPartitions().isEmpty()) {
      throw new IllegalStateException("An Empty transaction has no partitions: " + state);
    }
    List<TransactionLogValue.PartitionsSchema> partitions = null;
    if (state.txnState() != TransactionState.EMPTY) {
      Map<String, List<Integer>> byTopic = new TreeMap<>();
      state
          .topicPartitions()
          .forEach(
              tp ->
                  byTopic.computeIfAbsent(tp.topic(), t -> new ArrayList<>()).add(tp.partition()));
      partitions = new ArrayList<>();
      for (Map.Entry<String, List<Integer>> e : byTopic.entrySet()) {
        partitions.add(
            new TransactionLogValue.PartitionsSchema()
                .setTopic(e.getKey())
                .setPartitionIds(e.getValue()));
      }
    }
    TransactionLogValue value =
        new TransactionLogValue()
            .setProducerId(state.producerId())
            .setPreviousProducerId(state.prevProducerId())
            .setNextProducerId(state.nextProducerId())
            .setProducerEpoch(state.producerEpoch())
            .setTransactionTimeoutMs(state.txnTimeoutMs())
            .setTransactionStatus(state.txnState().id())
            .setTransactionLastUpdateTimestampMs(state.txnLastUpdateTimestamp())
            .setTransactionStartTimestampMs(state.txnStartTimestamp())
            .setTransactionPartitions(partitions)
            .setClientTransactionVersion(state.clientTransactionVersion().featureLevel());
    return new SimpleRecord(
        nowMs,
        key(transactionalId),
        MessageUtil.toVersionPrefixedBytes(WRITTEN_VERSION.transactionLogValueVersion(), value));
  }

  static SimpleRecord tombstone(String transactionalId, long nowMs) {
    return new SimpleRecord(nowMs, key(transactionalId), null);
  }

  private static byte[] key(String transactionalId) {
    return MessageUtil.toCoordinatorTypePrefixedBytes(
        new TransactionLogKey().setTransactionalId(transactionalId));
  }

  /** The entry a record holds; empty for a record of another type. */
  static Optional<Entry> parse(Record record) {
    if (!record.hasKey()) {
      return Optional.empty();
    }
    ByteBuffer key = record.key();
    short type = key.getShort();
    if (type != CoordinatorRecordType.TRANSACTION_LOG.id()) {
      return Optional.empty();
    }
    String transactionalId =
        new TransactionLogKey(new ByteBufferAccessor(key), (short) 0).transactionalId();
    if (!record.hasValue()) {
      return Optional.of(new Entry(transactionalId, null));
    }
    ByteBuffer buffer = record.value();
    short version = buffer.getShort();
    if (version < TransactionLogValue.LOWEST_SUPPORTED_VERSION
        || version > TransactionLogValue.HIGHEST_SUPPORTED_VERSION) {
      throw new IllegalStateException("Unknown transaction log value version " + version);
    }
    TransactionLogValue value = new TransactionLogValue(new ByteBufferAccessor(buffer), version);
    TransactionState state = TransactionState.fromId(value.transactionStatus());
    List<TopicPartition> partitions = new ArrayList<>();
    if (state != TransactionState.EMPTY && value.transactionPartitions() != null) {
      value
          .transactionPartitions()
          .forEach(
              p ->
                  p.partitionIds()
                      .forEach(id -> partitions.add(new TopicPartition(p.topic(), id))));
    }
    return Optional.of(
        new Entry(
            transactionalId,
            new TxnTransitMetadata(
                value.producerId(),
                value.previousProducerId(),
                value.nextProducerId(),
                value.producerEpoch(),
                org.apache.kafka.common.record.RecordBatch.NO_PRODUCER_EPOCH,
                value.transactionTimeoutMs(),
                state,
                java.util.Set.copyOf(partitions),
                value.transactionStartTimestampMs(),
                value.transactionLastUpdateTimestampMs(),
                TransactionVersion.fromFeatureLevel(value.clientTransactionVersion()))));
  }
}
