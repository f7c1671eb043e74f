package io.tidelog.broker.cluster;

import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * An election an admin asks for (Kafka's ElectLeaders, {@code kafka-leader-election}), decided on a
 * partition's state as Kafka's controller decides it.
 *
 * <ul>
 *   <li>{@link Type#PREFERRED}: the first replica of the assignment leads, if it is live and in the
 *       ISR; not needed when it leads already.
 *   <li>{@link Type#UNCLEAN}: a partition with no live leader gets one, from the live ISR if it has
 *       one, else any live replica, which alone is the new ISR (records only the old ISR had are
 *       lost); not needed when a live leader leads.
 * </ul>
 */
public final class LeaderElection {
  private LeaderElection() {}

  /** Kafka's election types. */
  public enum Type {
    PREFERRED,
    UNCLEAN
  }

  /** How an election ends. */
  public enum Outcome {
    ELECTED,
    NOT_NEEDED,
    PREFERRED_LEADER_NOT_AVAILABLE,
    NO_ELIGIBLE_LEADER
  }

  /** The outcome, and the state to write when {@link Outcome#ELECTED}. */
  public record Result(Outcome outcome, Optional<PartitionState> next) {
    static Result of(Outcome outcome) {
      return new Result(outcome, Optional.empty());
    }
  }

  /**
   * @param replicas the partition's assignment, the preferred replica first
   * @param live the brokers that may lead (registered, not shutting down)
   */
  public static Result decide(
      Type type, PartitionState state, List<Integer> replicas, Set<Integer> live) {
    boolean led = state.leader() != PartitionState.NO_LEADER && live.contains(state.leader());
    List<Integer> liveIsr = state.isr().stream().filter(live::contains).toList();
    if (type == Type.PREFERRED) {
      int preferred = replicas.get(0);
      if (state.leader() == preferred) {
        return Result.of(Outcome.NOT_NEEDED);
      }
      if (!liveIsr.contains(preferred)) {
        return Result.of(Outcome.PREFERRED_LEADER_NOT_AVAILABLE);
      }
      return new Result(Outcome.ELECTED, Optional.of(state.withLeader(preferred, liveIsr)));
    }
    if (led) {
      return Result.of(Outcome.NOT_NEEDED);
    }
    Optional<Integer> clean = replicas.stream().filter(liveIsr::contains).findFirst();
    if (clean.isPresent()) {
      return new Result(Outcome.ELECTED, Optional.of(state.withLeader(clean.get(), liveIsr)));
    }
    return replicas.stream()
        .filter(live::contains)
        .findFirst()
        .map(r -> new Result(Outcome.ELECTED, Optional.of(state.withLeader(r, List.of(r)))))
        .orElse(Result.of(Outcome.NO_ELIGIBLE_LEADER));
  }
}
