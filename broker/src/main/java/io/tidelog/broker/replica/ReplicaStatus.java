package io.tidelog.broker.replica;

import java.util.List;
import org.apache.kafka.common.TopicPartition;

/**
 * A snapshot of one replica on this broker, as the metadata and its log stand.
 *
 * @param leader the partition's leader by the metadata, or -1 when it has none
 * @param replicas the partition's assigned replicas
 * @param minInsyncReplicas the topic's {@code min.insync.replicas}
 * @param lastStableOffset the log's last stable offset: {@code read_committed} consumers read below
 *     it; the high watermark, or the first offset of a transaction not yet ended
 * @param sizeBytes the size of the replica's log on disk
 * @param logDir the absolute path of the log directory that holds it (one of {@code log.dirs})
 */
public record ReplicaStatus(
    TopicPartition tp,
    boolean isLeader,
    int leader,
    int leaderEpoch,
    List<Integer> replicas,
    List<Integer> isr,
    int minInsyncReplicas,
    long logStartOffset,
    long highWatermark,
    long logEndOffset,
    long lastStableOffset,
    long sizeBytes,
    String logDir) {

  /** Leads, and some assigned replica is out of the ISR (Kafka's UnderReplicatedPartitions). */
  public boolean isUnderReplicated() {
    return isLeader && isr.size() < replicas.size();
  }

  /** Leads with fewer in-sync replicas than {@code min.insync.replicas}: acks=all fails. */
  public boolean isUnderMinIsr() {
    return isLeader && isr.size() < minInsyncReplicas;
  }
}
