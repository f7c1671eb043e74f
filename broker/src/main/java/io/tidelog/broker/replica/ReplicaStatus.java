package io.tidelog.broker.replica;

import java.util.List;
import org.apache.kafka.common.TopicPartition;

/**
 * A snapshot of one replica on this broker, as the metadata and its log stand.
 *
 * @param leader the partition's leader by the metadata, or -1 when it has none
 */
public record ReplicaStatus(
    TopicPartition tp,
    boolean isLeader,
    int leader,
    int leaderEpoch,
    List<Integer> isr,
    long logStartOffset,
    long highWatermark,
    long logEndOffset) {}
