package io.tidelog.broker.replica;

import org.apache.kafka.common.IsolationLevel;

/**
 * What a Fetch asks of all its partitions.
 *
 * @param replicaId the fetching follower's broker id, or negative for a consumer
 * @param maxWaitMs how long to wait for {@code minBytes}
 * @param minBytes the bytes worth answering with before {@code maxWaitMs}
 * @param maxBytes the most record bytes in the answer (but a first batch that is larger)
 * @param isolation a consumer's: {@code READ_COMMITTED} reads below the last stable offset, with
 *     the aborted transactions of what it read; {@code READ_UNCOMMITTED} below the high watermark
 */
public record FetchParams(
    int replicaId, int maxWaitMs, int minBytes, int maxBytes, IsolationLevel isolation) {
  boolean byFollower() {
    return replicaId >= 0;
  }

  boolean mayWait() {
    return maxWaitMs > 0 && minBytes > 0;
  }
}
