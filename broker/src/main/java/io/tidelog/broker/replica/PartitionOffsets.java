package io.tidelog.broker.replica;

import org.apache.kafka.common.IsolationLevel;

/** The offsets that bound what a consumer can read from a partition. */
public record PartitionOffsets(long logStartOffset, long highWatermark, long lastStableOffset) {
  /** Where a consumer of {@code isolation} stops: the high watermark, or the last stable offset. */
  public long lastFetchableOffset(IsolationLevel isolation) {
    return isolation == IsolationLevel.READ_COMMITTED ? lastStableOffset : highWatermark;
  }
}
