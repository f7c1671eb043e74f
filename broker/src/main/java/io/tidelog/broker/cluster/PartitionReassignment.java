package io.tidelog.broker.cluster;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.apache.kafka.common.errors.InvalidReplicaAssignmentException;

/**
 * A partition's move to other replicas in progress (KIP-455), stored with its topic. While it
 * lasts, the partition's replicas are the target followed by the replicas it leaves: {@code adding}
 * are in the target and were not replicas, {@code removing} are replicas not in the target. The
 * adding replicas catch up as followers and join the ISR as any follower does; once the whole
 * target is in the ISR the move completes (Kafka's {@code maybeCompleteReassignment}): the replicas
 * become the target, the removing ones leave the ISR, and the leader moves if it was one of them.
 * Pure functions of the stored state, called by whoever writes it.
 */
public record PartitionReassignment(List<Integer> adding, List<Integer> removing) {
  public PartitionReassignment {
    adding = List.copyOf(adding);
    removing = List.copyOf(removing);
  }

  /** The replicas once the move is done: {@code replicas} without the removing ones. */
  public List<Integer> target(List<Integer> replicas) {
    return replicas.stream().filter(r -> !removing.contains(r)).toList();
  }

  /**
   * What a move to {@code target} from {@code replicas} (all of them, those of a move in progress
   * too, as Kafka computes it) writes.
   *
   * @param replicas the partition's replicas while the move lasts
   * @param reassignment the move, or null when there is nothing to move (a reorder is immediate)
   */
  public record Start(List<Integer> replicas, PartitionReassignment reassignment) {}

  public static Start start(List<Integer> replicas, List<Integer> target) {
    List<Integer> adding = target.stream().filter(r -> !replicas.contains(r)).toList();
    List<Integer> removing = replicas.stream().filter(r -> !target.contains(r)).toList();
    if (adding.isEmpty() && removing.isEmpty()) {
      return new Start(List.copyOf(target), null);
    }
    List<Integer> during = new ArrayList<>(target);
    during.addAll(removing);
    return new Start(during, new PartitionReassignment(adding, removing));
  }

  /**
   * The state that completes the move, when every target replica is in the ISR and a live one of
   * them can lead; empty while the move must go on. The leader stays unless it is leaving or not
   * live; then the first target replica in the ISR and live leads, with a new leader epoch.
   */
  public Optional<PartitionState> completion(
      List<Integer> replicas, PartitionState state, Set<Integer> live) {
    List<Integer> target = target(replicas);
    List<Integer> isr = state.isr().stream().filter(r -> !removing.contains(r)).toList();
    if (isr.isEmpty() || !isr.containsAll(target)) {
      return Optional.empty();
    }
    if (target.contains(state.leader()) && live.contains(state.leader())) {
      return Optional.of(state.withIsr(isr));
    }
    return target.stream()
        .filter(r -> isr.contains(r) && live.contains(r))
        .findFirst()
        .map(leader -> state.withLeader(leader, leaderFirst(leader, isr)));
  }

  /** The replicas when the move is cancelled: those it was adding leave, in order. */
  public List<Integer> revertedReplicas(List<Integer> replicas) {
    return replicas.stream().filter(r -> !adding.contains(r)).toList();
  }

  /**
   * The state when the move is cancelled (Kafka's {@code PartitionReassignmentRevert}): the adding
   * replicas leave the ISR; if the leader was one of them, the first live replica left in the ISR
   * leads. With none left, only an unclean election could give the partition a leader: refused
   * unless the topic allows one, then the partition goes offline for the controller to elect.
   *
   * @throws InvalidReplicaAssignmentException when the cancellation needs an unclean election that
   *     the topic does not allow
   */
  public PartitionState revertedState(
      TopicMetadata topic,
      int partition,
      PartitionState state,
      Set<Integer> live,
      boolean unclean) {
    List<Integer> isr = state.isr().stream().filter(r -> !adding.contains(r)).toList();
    if (isr.isEmpty()) {
      if (!unclean) {
        throw new InvalidReplicaAssignmentException(
            "Unable to revert partition assignment for "
                + topic.name()
                + ":"
                + partition
                + " because it would require an unclean leader election.");
      }
      return state.withLeader(PartitionState.NO_LEADER, List.of());
    }
    if (!adding.contains(state.leader()) && isr.contains(state.leader())) {
      return isr.equals(state.isr()) ? state : state.withIsr(isr);
    }
    int leader =
        revertedReplicas(topic.replicas(partition)).stream()
            .filter(r -> isr.contains(r) && live.contains(r))
            .findFirst()
            .orElse(PartitionState.NO_LEADER);
    return state.withLeader(leader, leaderFirst(leader, isr));
  }

  private static List<Integer> leaderFirst(int leader, List<Integer> isr) {
    List<Integer> ordered = new ArrayList<>();
    if (isr.contains(leader)) {
      ordered.add(leader);
    }
    isr.stream().filter(r -> r != leader).forEach(ordered::add);
    return ordered;
  }

  JsonObject toJson() {
    return new JsonObject()
        .put("adding", new JsonArray(adding))
        .put("removing", new JsonArray(removing));
  }

  static PartitionReassignment fromJson(JsonObject json) {
    return new PartitionReassignment(
        PartitionState.ints(json.getJsonArray("adding")),
        PartitionState.ints(json.getJsonArray("removing")));
  }
}
