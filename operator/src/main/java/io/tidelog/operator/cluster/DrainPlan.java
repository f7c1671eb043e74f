package io.tidelog.operator.cluster;

import io.tidelog.operator.brokers.ReplicaPlacement;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;

/**
 * The moves that empty the brokers a scale-down removes: each replica on them goes to a broker that
 * stays, placed by {@link ReplicaPlacement}; the other replicas of the partition stay where they
 * are. Done when nothing is left on them.
 */
record DrainPlan(Set<Integer> removed) implements ReplicaMoves.Plan {
  @Override
  public Map<TopicPartition, List<Integer>> targets(
      Collection<Node> brokers, List<BrokerView.PartitionView> partitions) {
    List<Integer> staying =
        brokers.stream().map(Node::id).filter(id -> !removed.contains(id)).sorted().toList();
    ReplicaPlacement placement =
        new ReplicaPlacement(
            brokers, partitions.stream().map(BrokerView.PartitionView::replicas).toList());
    Map<TopicPartition, List<Integer>> targets = new HashMap<>();
    for (BrokerView.PartitionView p : partitions) {
      if (p.replicas().stream().anyMatch(removed::contains)) {
        List<Integer> kept = p.replicas().stream().filter(r -> !removed.contains(r)).toList();
        targets.put(
            p.topicPartition(), placement.extend(p.replicas(), kept, p.replicas().size(), staying));
      }
    }
    return targets;
  }
}
