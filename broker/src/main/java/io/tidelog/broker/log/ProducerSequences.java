package io.tidelog.broker.log;

import java.util.HashMap;
import java.util.Map;
import org.apache.kafka.common.errors.InvalidProducerEpochException;
import org.apache.kafka.common.errors.OutOfOrderSequenceException;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.RecordBatch;

/**
 * The last sequence number appended by each idempotent producer to one partition, so that base
 * sequences are checked to be monotonic and gap-free within an epoch, as Kafka's producer state
 * does. Producers whose last append is older than the expiration are forgotten, which bounds the
 * table.
 *
 * <p>The table lives in memory: after a restart or a truncation a producer is unknown again and its
 * next sequence is accepted as is.
 *
 * <p>Not thread-safe: the owning {@link PartitionLog}'s thread calls it.
 */
final class ProducerSequences {
  private final Map<Long, LastAppend> lastAppends = new HashMap<>();

  /**
   * Checks the batches of one append and returns the table rows they would leave behind.
   *
   * @throws InvalidProducerEpochException when a batch carries an older producer epoch
   * @throws OutOfOrderSequenceException when a base sequence does not follow the last one
   */
  Map<Long, LastAppend> check(MemoryRecords records, long nowMs) {
    Map<Long, LastAppend> updates = new HashMap<>();
    for (RecordBatch batch : records.batches()) {
      if (!batch.hasProducerId()) {
        continue;
      }
      long producerId = batch.producerId();
      LastAppend last = updates.getOrDefault(producerId, lastAppends.get(producerId));
      if (last != null) {
        checkFollows(batch, last);
      }
      updates.put(producerId, new LastAppend(batch.producerEpoch(), batch.lastSequence(), nowMs));
    }
    return updates;
  }

  private static void checkFollows(RecordBatch batch, LastAppend last) {
    if (batch.producerEpoch() < last.epoch()) {
      throw new InvalidProducerEpochException(
          "Producer "
              + batch.producerId()
              + " epoch "
              + batch.producerEpoch()
              + " is older than the current epoch "
              + last.epoch());
    }
    int expected =
        batch.producerEpoch() > last.epoch()
            ? 0
            : last.sequence() == Integer.MAX_VALUE ? 0 : last.sequence() + 1;
    if (batch.baseSequence() != expected) {
      throw new OutOfOrderSequenceException(
          "Producer "
              + batch.producerId()
              + " epoch "
              + batch.producerEpoch()
              + " sent sequence "
              + batch.baseSequence()
              + " where "
              + expected
              + " was expected");
    }
  }

  void apply(Map<Long, LastAppend> updates) {
    lastAppends.putAll(updates);
  }

  void removeExpired(long nowMs, long expirationMs) {
    lastAppends.values().removeIf(last -> nowMs - last.appendedMs() >= expirationMs);
  }

  void clear() {
    lastAppends.clear();
  }

  /** A producer's epoch and last sequence, and when it last appended. */
  record LastAppend(short epoch, int sequence, long appendedMs) {}
}
