package io.tidelog.broker.cluster;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.kafka.common.errors.InvalidReplicationFactorException;

/**
 * Spreads partitions' replicas over brokers, round-robin as Kafka does: partition {@code p}'s
 * replicas are consecutive brokers starting at {@code start + p}. With racks, the broker list
 * alternates racks first, so that consecutive brokers, and hence a partition's replicas, sit in
 * different racks whenever there are enough of them.
 */
public final class ReplicaAssignment {
  private ReplicaAssignment() {}

  /**
   * @throws InvalidReplicationFactorException when fewer brokers than {@code replicationFactor} are
   *     given
   */
  public static List<List<Integer>> assign(
      Collection<BrokerInfo> brokers, int partitions, int replicationFactor, int start) {
    if (replicationFactor <= 0 || replicationFactor > brokers.size()) {
      throw new InvalidReplicationFactorException(
          "Replication factor "
              + replicationFactor
              + " is not between 1 and the "
              + brokers.size()
              + " live broker(s)");
    }
    List<Integer> order = rackAlternated(brokers);
    List<List<Integer>> assignment = new ArrayList<>();
    for (int p = 0; p < partitions; p++) {
      List<Integer> replicas = new ArrayList<>();
      for (int r = 0; r < replicationFactor; r++) {
        replicas.add(order.get(Math.floorMod(start + p + r, order.size())));
      }
      assignment.add(replicas);
    }
    return assignment;
  }

  /** Brokers by id within each rack, taking one from each rack in turn. */
  static List<Integer> rackAlternated(Collection<BrokerInfo> brokers) {
    Map<String, List<Integer>> byRack = new TreeMap<>();
    brokers.stream()
        .sorted(Comparator.comparingInt(BrokerInfo::id))
        .forEach(
            b ->
                byRack
                    .computeIfAbsent(b.rack() == null ? "" : b.rack(), k -> new ArrayList<>())
                    .add(b.id()));
    List<Integer> order = new ArrayList<>();
    for (int i = 0; order.size() < brokers.size(); i++) {
      for (List<Integer> rack : byRack.values()) {
        if (i < rack.size()) {
          order.add(rack.get(i));
        }
      }
    }
    return order;
  }
}
