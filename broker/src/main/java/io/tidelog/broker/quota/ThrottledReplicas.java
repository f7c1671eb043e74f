package io.tidelog.broker.quota;

import java.util.HashSet;
import java.util.Set;

/**
 * A topic's {@code leader.replication.throttled.replicas} or {@code
 * follower.replication.throttled.replicas} as one broker reads it, parsed once per change (the
 * lists {@code kafka-reassign-partitions} writes name every moving replica): {@code *} for every
 * replica, or the partitions of the {@code partition:broker} pairs that name this broker, as
 * Kafka's {@code ThrottledReplicaListValidator} accepts them.
 */
public record ThrottledReplicas(boolean all, Set<Integer> partitions) {
  public static final ThrottledReplicas NONE = new ThrottledReplicas(false, Set.of());

  public ThrottledReplicas {
    partitions = Set.copyOf(partitions);
  }

  /** {@code value} (null or blank for none) as broker {@code brokerId} reads it. */
  public static ThrottledReplicas parse(String value, int brokerId) {
    if (value == null || value.isBlank()) {
      return NONE;
    }
    if (value.strip().equals("*")) {
      return new ThrottledReplicas(true, Set.of());
    }
    Set<Integer> partitions = new HashSet<>();
    String suffix = ":" + brokerId;
    for (String pair : value.split(",")) {
      String entry = pair.strip();
      if (entry.endsWith(suffix)) {
        try {
          partitions.add(Integer.parseInt(entry.substring(0, entry.length() - suffix.length())));
        } catch (NumberFormatException e) {
          // not a pair of this broker's: the topic config's check refuses such values
        }
      }
    }
    return partitions.isEmpty() ? NONE : new ThrottledReplicas(false, partitions);
  }

  public boolean contains(int partition) {
    return all || partitions.contains(partition);
  }
}
