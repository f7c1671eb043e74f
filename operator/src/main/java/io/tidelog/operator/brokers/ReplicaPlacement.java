package io.tidelog.operator.brokers;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.common.Node;

/**
 * Where a partition's new replicas go when the operator moves data, spread as Kafka's rack-aware
 * placement spreads them: brokers of racks the partition does not use yet first, then those holding
 * the fewest replicas, then the lowest id. It counts what it places, so that the partitions of one
 * plan spread among themselves too. Not thread-safe: one plan's.
 */
public final class ReplicaPlacement {
  private final Map<Integer, Node> brokers = new HashMap<>();
  private final Map<Integer, Integer> load = new HashMap<>();

  /**
   * @param brokers the brokers new replicas may go to, and those of the replicas kept
   * @param replicas every partition's replicas now, by broker id, to count each broker's load
   */
  public ReplicaPlacement(Collection<Node> brokers, Collection<List<Integer>> replicas) {
    brokers.forEach(b -> this.brokers.put(b.id(), b));
    replicas.forEach(r -> r.forEach(id -> load.merge(id, 1, Integer::sum)));
  }

  /**
   * {@code kept} followed by brokers of {@code allowed} until there are {@code factor}; the load
   * counts the change from {@code before}.
   *
   * @throws IllegalArgumentException when {@code allowed} has too few brokers
   */
  public List<Integer> extend(
      List<Integer> before, List<Integer> kept, int factor, Collection<Integer> allowed) {
    List<Integer> target = new ArrayList<>(kept);
    Set<String> racks = new HashSet<>();
    kept.stream()
        .map(brokers::get)
        .filter(b -> b != null && b.hasRack())
        .forEach(b -> racks.add(b.rack()));
    List<Node> candidates =
        new ArrayList<>(
            allowed.stream()
                .filter(id -> !kept.contains(id))
                .map(brokers::get)
                .filter(b -> b != null)
                .toList());
    while (target.size() < factor) {
      Node next =
          candidates.stream()
              .min(
                  Comparator.comparing((Node b) -> b.hasRack() && racks.contains(b.rack()))
                      .thenComparing(b -> load.getOrDefault(b.id(), 0))
                      .thenComparing(Node::id))
              .orElseThrow(
                  () ->
                      new IllegalArgumentException(
                          "only " + (kept.size() + candidates.size()) + " brokers for " + factor));
      candidates.remove(next);
      target.add(next.id());
      if (next.hasRack()) {
        racks.add(next.rack());
      }
    }
    before.forEach(r -> load.merge(r, -1, Integer::sum));
    target.forEach(r -> load.merge(r, 1, Integer::sum));
    return target;
  }
}
