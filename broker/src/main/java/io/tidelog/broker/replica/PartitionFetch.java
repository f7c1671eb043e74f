package io.tidelog.broker.replica;

import org.apache.kafka.common.TopicPartition;

/**
 * What a Fetch asks of one partition.
 *
 * @param lastFetchedEpoch a follower's epoch of its last fetched batch, or -1
 * @param currentLeaderEpoch the epoch the fetcher believes current, or -1 for any
 * @param maxBytes the most record bytes from this partition (but a first batch that is larger)
 */
public record PartitionFetch(
    TopicPartition tp,
    long fetchOffset,
    int lastFetchedEpoch,
    int currentLeaderEpoch,
    int maxBytes) {}
