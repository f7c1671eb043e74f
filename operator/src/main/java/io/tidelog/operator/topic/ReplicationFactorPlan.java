package io.tidelog.operator.topic;

import io.tidelog.operator.brokers.ReplicaPlacement;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartitionInfo;

/**
 * The replicas each partition of a topic moves to when its replication factor changes: the
 * partitions whose replica count differs from the factor, each with its target replicas. Going up,
 * a partition keeps its replicas and gains brokers as {@link ReplicaPlacement} places them. Going
 * down, it keeps its leader, then the replicas in its ISR, in their order, so that the replicas
 * removed are the least in sync and no leader moves. Either way the first replica kept stays the
 * preferred leader.
 */
final class ReplicationFactorPlan {
  private ReplicationFactorPlan() {}

  /**
   * @param partitions the topic's partitions, by partition id
   * @param brokers the cluster's brokers
   * @param factor the replication factor to reach
   * @return each partition that must move, with its target replicas
   * @throws TopicChanges.Refused when there are fewer brokers than {@code factor}
   */
  static Map<Integer, List<Integer>> targets(
      List<TopicPartitionInfo> partitions, Collection<Node> brokers, int factor)
      throws TopicChanges.Refused {
    if (brokers.size() < factor) {
      throw new TopicChanges.Refused(
          "InvalidSpec",
          ("spec.replicas: Unable to replicate the partition %d time(s): The target replication"
                  + " factor of %d cannot be reached because only %d broker(s) are registered.")
              .formatted(factor, factor, brokers.size()));
    }
    ReplicaPlacement placement =
        new ReplicaPlacement(
            brokers,
            partitions.stream().map(p -> p.replicas().stream().map(Node::id).toList()).toList());
    List<Integer> all = brokers.stream().map(Node::id).toList();
    Map<Integer, List<Integer>> targets = new TreeMap<>();
    for (TopicPartitionInfo partition : partitions) {
      List<Integer> replicas = partition.replicas().stream().map(Node::id).toList();
      if (replicas.size() == factor) {
        continue;
      }
      List<Integer> kept =
          replicas.size() < factor ? replicas : shrunk(partition, replicas, factor);
      targets.put(partition.partition(), placement.extend(replicas, kept, factor, all));
    }
    return targets;
  }

  private static List<Integer> shrunk(
      TopicPartitionInfo partition, List<Integer> replicas, int factor) {
    int leader = partition.leader() == null ? -1 : partition.leader().id();
    Set<Integer> isr = new HashSet<>();
    partition.isr().forEach(r -> isr.add(r.id()));
    Set<Integer> kept = new HashSet<>();
    replicas.stream()
        .sorted(
            Comparator.comparing((Integer r) -> r != leader)
                .thenComparing(r -> !isr.contains(r))
                .thenComparing(replicas::indexOf))
        .limit(factor)
        .forEach(kept::add);
    return replicas.stream().filter(kept::contains).toList();
  }
}
