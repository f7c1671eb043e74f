package io.tidelog.broker.replica;

/**
 * What a Fetch asks of all its partitions.
 *
 * @param replicaId the fetching follower's broker id, or negative for a consumer
 * @param maxWaitMs how long to wait for {@code minBytes}
 * @param minBytes the bytes worth answering with before {@code maxWaitMs}
 * @param maxBytes the most record bytes in the answer (but a first batch that is larger)
 */
public record FetchParams(int replicaId, int maxWaitMs, int minBytes, int maxBytes) {
  boolean byFollower() {
    return replicaId >= 0;
  }

  boolean mayWait() {
    return maxWaitMs > 0 && minBytes > 0;
  }
}
