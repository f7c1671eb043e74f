package io.tidelog.broker.txn;

import java.util.Collection;
import java.util.HashMap;
import java.util.Map;
import org.apache.kafka.common.TopicPartition;

/**
 * The transactional ids kept in one partition of {@code __transaction_state}, on the broker that
 * leads it: first replayed from the partition's records while it loads, then served. Its leader
 * epoch is the coordinator epoch that the transactions' markers carry.
 *
 * <p>Not thread-safe: the loader builds it, then hands it to the coordinator's thread, which alone
 * uses it from then on.
 */
final class TransactionPartition {
  final TopicPartition tp;
  final int coordinatorEpoch;
  private final Map<String, TransactionMetadata> transactions = new HashMap<>();
  private boolean loaded;

  TransactionPartition(TopicPartition tp, int coordinatorEpoch) {
    this.tp = tp;
    this.coordinatorEpoch = coordinatorEpoch;
  }

  boolean isLoaded() {
    return loaded;
  }

  void completeLoad() {
    loaded = true;
  }

  /** Replays one record, in log order: the last record of an id wins, a tombstone removes it. */
  void replay(TransactionRecords.Entry entry) {
    if (entry.value() == null) {
      transactions.remove(entry.transactionalId());
    } else {
      transactions.put(
          entry.transactionalId(),
          TransactionMetadata.loaded(entry.transactionalId(), entry.value()));
    }
  }

  TransactionMetadata get(String transactionalId) {
    return transactions.get(transactionalId);
  }

  TransactionMetadata putIfAbsent(TransactionMetadata metadata) {
    TransactionMetadata existing = transactions.putIfAbsent(metadata.transactionalId, metadata);
    return existing != null ? existing : metadata;
  }

  /** Removes {@code metadata} if it is still the one kept for its id. */
  void remove(TransactionMetadata metadata) {
    transactions.remove(metadata.transactionalId, metadata);
  }

  Collection<TransactionMetadata> transactions() {
    return transactions.values();
  }
}
