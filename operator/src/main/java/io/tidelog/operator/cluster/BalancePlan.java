package io.tidelog.operator.cluster;

import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;

/**
 * The moves that spread partition replicas evenly, by count, over the Cluster's brokers ({@code
 * spec.rebalance: auto}), as after a scale-up: while a broker holds more than one replica more than
 * another, one of its replicas moves there (the most loaded first, to the least loaded it can), in
 * a partition that the other does not hold yet and whose racks stay spread (the new broker's rack
 * is the old one's or none of the partition's other replicas'). A partition may move more than one
 * replica at once. At most {@code maxMoves} partitions a step; done when no two brokers' loads
 * differ by more than one, or no such partition is left.
 */
record BalancePlan(Set<Integer> members, int maxMoves) implements ReplicaMoves.Plan {
  @Override
  public Map<TopicPartition, List<Integer>> targets(
      Collection<Node> brokers, List<BrokerView.PartitionView> partitions) {
    Map<Integer, String> racks = new HashMap<>();
    brokers.forEach(b -> racks.put(b.id(), b.rack()));
    Map<Integer, Integer> load = new TreeMap<>();
    members.forEach(id -> load.put(id, 0));
    partitions.forEach(
        p ->
            p.replicas().stream()
                .filter(members::contains)
                .forEach(r -> load.merge(r, 1, Integer::sum)));
    Map<TopicPartition, List<Integer>> now = new LinkedHashMap<>();
    partitions.forEach(p -> now.put(p.topicPartition(), p.replicas()));
    Map<TopicPartition, List<Integer>> targets = new HashMap<>();
    // each move narrows the spread of the loads; the replicas bound the loop all the same
    int replicas = load.values().stream().mapToInt(Integer::intValue).sum();
    for (int moves = 0; moves < replicas; moves++) {
      Optional<Move> move = nextMove(load, now, racks, targets.size() < maxMoves ? null : targets);
      if (move.isEmpty()) {
        break;
      }
      Move m = move.get();
      List<Integer> target = now.get(m.tp()).stream().map(r -> r == m.from() ? m.to() : r).toList();
      now.put(m.tp(), target);
      targets.put(m.tp(), target);
      load.merge(m.from(), -1, Integer::sum);
      load.merge(m.to(), 1, Integer::sum);
    }
    return targets;
  }

  private record Move(TopicPartition tp, int from, int to) {}

  /**
   * A replica move from a broker holding more than one replica more than another, to it: the most
   * loaded such pair that some partition allows. {@code within}, when not null, limits it to those
   * partitions (the step's bound is reached).
   */
  private static Optional<Move> nextMove(
      Map<Integer, Integer> load,
      Map<TopicPartition, List<Integer>> now,
      Map<Integer, String> racks,
      Map<TopicPartition, List<Integer>> within) {
    List<Integer> byLoad =
        load.keySet().stream()
            .sorted(Comparator.comparing((Integer id) -> load.get(id)).thenComparing(id -> id))
            .toList();
    for (int hi = byLoad.size() - 1; hi > 0; hi--) {
      int from = byLoad.get(hi);
      for (int lo = 0; lo < hi; lo++) {
        int to = byLoad.get(lo);
        if (load.get(from) - load.get(to) <= 1) {
          break;
        }
        for (Map.Entry<TopicPartition, List<Integer>> p : now.entrySet()) {
          List<Integer> replicas = p.getValue();
          if ((within == null || within.containsKey(p.getKey()))
              && replicas.contains(from)
              && !replicas.contains(to)
              && racksStaySpread(replicas, from, to, racks)) {
            return Optional.of(new Move(p.getKey(), from, to));
          }
        }
      }
    }
    return Optional.empty();
  }

  private static boolean racksStaySpread(
      List<Integer> replicas, int from, int to, Map<Integer, String> racks) {
    String rack = racks.get(to);
    return rack == null
        || Objects.equals(rack, racks.get(from))
        || replicas.stream().filter(r -> r != from).noneMatch(r -> rack.equals(racks.get(r)));
  }
}
