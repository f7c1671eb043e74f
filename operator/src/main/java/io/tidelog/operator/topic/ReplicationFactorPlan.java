package io.tidelog.operator.topic;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
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
 * a partition keeps its replicas and gains brokers from racks it does not use yet, then those with
 * the fewest of the topic's replicas, then the lowest id. Going down, it keeps its leader, then the
 * replicas in its ISR, in their order, so that the replicas removed are the least in sync and no
 * leader moves. Either way the first replica kept stays the preferred leader.
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
    Map<Integer, Integer> load = new HashMap<>();
    for (TopicPartitionInfo partition : partitions) {
      partition.replicas().forEach(r -> load.merge(r.id(), 1, Integer::sum));
    }
    Map<Integer, List<Integer>> targets = new TreeMap<>();
    for (TopicPartitionInfo partition : partitions) {
      List<Integer> replicas = partition.replicas().stream().map(Node::id).toList();
      if (replicas.size() == factor) {
        continue;
      }
      List<Integer> target =
          replicas.size() < factor
              ? grown(partition, brokers, factor, load)
              : shrunk(partition, replicas, factor);
      replicas.forEach(r -> load.merge(r, -1, Integer::sum));
      target.forEach(r -> load.merge(r, 1, Integer::sum));
      targets.put(partition.partition(), target);
    }
    return targets;
  }

  private static List<Integer> grown(
      TopicPartitionInfo partition,
      Collection<Node> brokers,
      int factor,
      Map<Integer, Integer> load) {
    List<Integer> target = new ArrayList<>(partition.replicas().stream().map(Node::id).toList());
    Set<String> racks = new HashSet<>();
    partition.replicas().stream().filter(Node::hasRack).forEach(r -> racks.add(r.rack()));
    List<Node> candidates =
        new ArrayList<>(brokers.stream().filter(b -> !target.contains(b.id())).toList());
    while (target.size() < factor) {
      Node next =
          candidates.stream()
              .min(
                  Comparator.comparing((Node b) -> b.hasRack() && racks.contains(b.rack()))
                      .thenComparing(b -> load.getOrDefault(b.id(), 0))
                      .thenComparing(Node::id))
              .orElseThrow();
      candidates.remove(next);
      target.add(next.id());
      if (next.hasRack()) {
        racks.add(next.rack());
      }
    }
    return target;
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
