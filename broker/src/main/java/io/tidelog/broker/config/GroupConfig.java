package io.tidelog.broker.config;

/**
 * The group coordinator's settings, Kafka's broker configs of the same names.
 *
 * @param initialRebalanceDelayMs {@code group.initial.rebalance.delay.ms}
 * @param minSessionTimeoutMs {@code group.min.session.timeout.ms}
 * @param maxSessionTimeoutMs {@code group.max.session.timeout.ms}
 * @param maxSize {@code group.max.size}
 * @param offsetsTopicPartitions {@code offsets.topic.num.partitions}
 * @param offsetsTopicReplicationFactor {@code offsets.topic.replication.factor}
 * @param offsetsTopicSegmentBytes {@code offsets.topic.segment.bytes}
 * @param offsetsRetentionMs {@code offsets.retention.minutes}, in ms
 * @param offsetsRetentionCheckIntervalMs {@code offsets.retention.check.interval.ms}
 * @param offsetCommitTimeoutMs {@code offsets.commit.timeout.ms}
 * @param offsetMetadataMaxBytes {@code offset.metadata.max.bytes}
 */
public record GroupConfig(
    int initialRebalanceDelayMs,
    int minSessionTimeoutMs,
    int maxSessionTimeoutMs,
    int maxSize,
    int offsetsTopicPartitions,
    int offsetsTopicReplicationFactor,
    int offsetsTopicSegmentBytes,
    long offsetsRetentionMs,
    long offsetsRetentionCheckIntervalMs,
    int offsetCommitTimeoutMs,
    int offsetMetadataMaxBytes) {}
