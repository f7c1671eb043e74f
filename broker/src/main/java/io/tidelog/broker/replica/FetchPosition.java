package io.tidelog.broker.replica;

/**
 * Where a follower fetches a partition from: its log end offset, the epoch the log ends in (so that
 * the leader can report a diverging epoch), its log start, its high watermark, and the leader epoch
 * it follows; and whether the follower replication throttle holds it back: {@code throttled} when
 * its topic's {@code follower.replication.throttled.replicas} lists it, {@code inSync} when its
 * last fetch reached the leader's high watermark (Kafka never throttles such a replica, lest it
 * leave the ISR).
 */
public record FetchPosition(
    int leaderEpoch,
    long fetchOffset,
    int lastFetchedEpoch,
    long logStartOffset,
    long highWatermark,
    boolean throttled,
    boolean inSync) {
  /** Whether the throttle, once exceeded, leaves this partition out of the next fetch. */
  boolean holdsBackWhenExceeded() {
    return throttled && !inSync;
  }

  /**
   * Whether a leader's answer would leave the follower where this position found it: no records, no
   * diverging epoch, no log start past its own, the same high watermark, and as in sync as it was.
   * Then the answer need not be applied, and the position stands for the next fetch.
   */
  boolean unchangedBy(
      int recordBytes, boolean diverged, long leaderHighWatermark, long leaderLogStartOffset) {
    return recordBytes == 0
        && !diverged
        && leaderLogStartOffset <= logStartOffset
        && Math.min(leaderHighWatermark, fetchOffset) == highWatermark
        && (fetchOffset >= leaderHighWatermark) == inSync;
  }
}
