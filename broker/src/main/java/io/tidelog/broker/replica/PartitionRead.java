package io.tidelog.broker.replica;

import io.tidelog.broker.log.EpochEndOffset;
import io.tidelog.broker.log.LogReadInfo;
import java.util.List;
import org.apache.kafka.storage.internals.log.AbortedTxn;

/**
 * What a fetch gets from one partition: the records and the offsets that frame them.
 *
 * @param read the records, or null when nothing was read: the follower's log diverged, or the fetch
 *     had no bytes left for this partition
 * @param divergingEpoch for a follower whose log diverged: the epoch and end offset to truncate to
 * @param logEndOffset the log's end, or -1 when nothing was read
 * @param abortedTransactions for a {@code read_committed} consumer, the aborted transactions that
 *     overlap what was read; null for other reads
 */
public record PartitionRead(
    LogReadInfo read,
    EpochEndOffset divergingEpoch,
    long highWatermark,
    long logStartOffset,
    long logEndOffset,
    long lastStableOffset,
    List<AbortedTxn> abortedTransactions) {

  /** No records: only the offsets that frame the partition now. */
  static PartitionRead offsetsOnly(PartitionOffsets offsets) {
    return new PartitionRead(
        null,
        null,
        offsets.highWatermark(),
        offsets.logStartOffset(),
        -1,
        offsets.lastStableOffset(),
        null);
  }
}
