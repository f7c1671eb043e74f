package io.tidelog.operator.brokers;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * The topic configs with which {@code kafka-reassign-partitions --throttle} marks the replicas of a
 * topic's moves (KIP-73): {@value #LEADER} names each moving partition's replicas as they are, and
 * {@value #FOLLOWER} the replicas its move adds, as {@code partition:broker} pairs. The rates are
 * the brokers' {@code leader.replication.throttled.rate} and {@code
 * follower.replication.throttled.rate}. One topic's; not thread-safe.
 */
public final class ReassignmentThrottles {
  public static final String LEADER = "leader.replication.throttled.replicas";
  public static final String FOLLOWER = "follower.replication.throttled.replicas";
  public static final Set<String> KEYS = Set.of(LEADER, FOLLOWER);

  private final List<String> leaders = new ArrayList<>();
  private final List<String> followers = new ArrayList<>();

  /** Marks the move of {@code partition} from {@code replicas} to {@code target}. */
  public void add(int partition, List<Integer> replicas, List<Integer> target) {
    replicas.forEach(r -> leaders.add(partition + ":" + r));
    target.stream()
        .filter(r -> !replicas.contains(r))
        .forEach(r -> followers.add(partition + ":" + r));
  }

  /** Each config to set with its value; a side with no replica is left out. */
  public Map<String, String> configs() {
    Map<String, String> configs = new TreeMap<>();
    if (!leaders.isEmpty()) {
      configs.put(LEADER, String.join(",", leaders));
    }
    if (!followers.isEmpty()) {
      configs.put(FOLLOWER, String.join(",", followers));
    }
    return configs;
  }
}
