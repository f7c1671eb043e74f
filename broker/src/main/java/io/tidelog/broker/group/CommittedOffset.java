package io.tidelog.broker.group;

/**
 * A group's committed position in one partition.
 *
 * @param offset the next offset the group reads
 * @param leaderEpoch the leader epoch of the last record read, or -1
 * @param metadata the consumer's string, {@code ""} when none
 * @param commitTimestampMs when the coordinator took the commit
 */
public record CommittedOffset(
    long offset, int leaderEpoch, String metadata, long commitTimestampMs) {}
