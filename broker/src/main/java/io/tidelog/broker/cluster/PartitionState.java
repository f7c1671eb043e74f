package io.tidelog.broker.cluster;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.List;

/**
 * A partition's leadership as stored under {@code partitions/<topic>/<p>}.
 *
 * @param leader the leader's broker id, or -1 while the partition is offline
 * @param leaderEpoch bumped on every leader change
 * @param isr the in-sync replicas, the leader first when it is one
 * @param partitionEpoch bumped on every change, leader or ISR
 * @param modRevision the etcd revision that wrote this state; compare-and-swap writes compare it
 */
public record PartitionState(
    int leader, int leaderEpoch, List<Integer> isr, int partitionEpoch, long modRevision) {
  public static final int NO_LEADER = -1;

  public PartitionState {
    isr = List.copyOf(isr);
  }

  /** The next state with a new leader: both epochs move. */
  PartitionState withLeader(int newLeader, List<Integer> newIsr) {
    return new PartitionState(newLeader, leaderEpoch + 1, newIsr, partitionEpoch + 1, modRevision);
  }

  /** The next state with a new ISR under the same leader. */
  public PartitionState withIsr(List<Integer> newIsr) {
    return new PartitionState(leader, leaderEpoch, newIsr, partitionEpoch + 1, modRevision);
  }

  JsonObject toJson() {
    return new JsonObject()
        .put("leader", leader)
        .put("leaderEpoch", leaderEpoch)
        .put("isr", new JsonArray(isr))
        .put("partitionEpoch", partitionEpoch);
  }

  static PartitionState fromJson(JsonObject json, long modRevision) {
    return new PartitionState(
        json.getInteger("leader"),
        json.getInteger("leaderEpoch"),
        ints(json.getJsonArray("isr")),
        json.getInteger("partitionEpoch"),
        modRevision);
  }

  static List<Integer> ints(JsonArray array) {
    return array.stream().map(v -> ((Number) v).intValue()).toList();
  }
}
