package io.tidelog.broker.cluster;

import java.util.Set;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;

/**
 * What changed from one published {@link ClusterImage} to the next, as Kafka's {@code
 * MetadataDelta}: listeners look at these keys only, so the work of a watch event is that of its
 * changes, however large the cluster.
 *
 * @param everything the image was read whole (at start, or after the watch was lost): any key may
 *     have changed, and the sets below are empty
 * @param brokers whether a broker registration came, went or changed
 * @param candidates whether a controller candidate came or went
 * @param scramCredentials whether a SCRAM credential was written or deleted
 * @param quotas whether a client quota was written or deleted
 * @param brokerConfigs whether a broker's dynamic configs, or the cluster default, changed
 * @param topics the topics created, changed or deleted
 * @param partitions the partitions whose state was written or deleted
 * @param acls the ACLs created or deleted
 */
public record MetadataDelta(
    boolean everything,
    boolean brokers,
    boolean candidates,
    boolean scramCredentials,
    boolean quotas,
    boolean brokerConfigs,
    Set<String> topics,
    Set<TopicPartition> partitions,
    Set<Uuid> acls) {
  /** The delta of an image read whole. */
  public static final MetadataDelta EVERYTHING =
      new MetadataDelta(true, true, true, true, true, true, Set.of(), Set.of(), Set.of());

  /** Whether {@code tp}'s state or its topic changed. */
  public boolean touches(TopicPartition tp) {
    return everything || partitions.contains(tp) || topics.contains(tp.topic());
  }
}
