package io.tidelog.broker.replica;

/**
 * Where a follower fetches a partition from: its log end offset, the epoch the log ends in (so that
 * the leader can report a diverging epoch), its log start, and the leader epoch it follows; and
 * whether the follower replication throttle holds it back: {@code throttled} when its topic's
 * {@code follower.replication.throttled.replicas} lists it, {@code inSync} when its last fetch
 * reached the leader's high watermark (Kafka never throttles such a replica, lest it leave the
 * ISR).
 */
public record FetchPosition(
    int leaderEpoch,
    long fetchOffset,
    int lastFetchedEpoch,
    long logStartOffset,
    boolean throttled,
    boolean inSync) {
  /** Whether the throttle, once exceeded, leaves this partition out of the next fetch. */
  boolean holdsBackWhenExceeded() {
    return throttled && !inSync;
  }
}
