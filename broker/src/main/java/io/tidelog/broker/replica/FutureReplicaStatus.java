package io.tidelog.broker.replica;

import org.apache.kafka.common.TopicPartition;

/**
 * A snapshot of a replica moving to another log directory of this broker: its future log.
 *
 * @param logDir the log directory it moves to
 * @param sizeBytes the size of the future log on disk
 * @param offsetLag how far the future log's end is below the current log's, as Kafka's
 *     DescribeLogDirs gives it for a future replica; -1 when unknown
 */
public record FutureReplicaStatus(
    TopicPartition tp, String logDir, long sizeBytes, long offsetLag) {}
