package io.tidelog.operator.cluster;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;

/**
 * The moves that spread partition replicas evenly over the Cluster's brokers ({@code
 * spec.rebalance: auto}), as after a scale-up, by count and then by bytes.
 *
 * <ul>
 *   <li>By count: while a broker holds more than one replica more than another, one of its replicas
 *       moves there (the most loaded first, to the least loaded it can), of the partition whose
 *       size best evens the two brokers' bytes.
 *   <li>By bytes: then, while a broker holds more than {@value #TOLERANCE_PERCENT} % of the mean
 *       (and at least {@value #MIN_TOLERANCE_BYTES} bytes) more than another, a replica moves from
 *       the heavier to the lighter where that keeps the counts even, or two partitions swap a
 *       replica between them; each narrows their difference, so this ends.
 * </ul>
 *
 * <p>A move only goes to a broker that does not hold the partition yet and keeps its racks spread
 * (the new broker's rack is the old one's or none of the partition's other replicas'). A partition
 * may move more than one replica at once. At most {@code maxMoves} partitions a step.
 */
record BalancePlan(Set<Integer> members, int maxMoves) implements ReplicaMoves.Plan {
  static final int TOLERANCE_PERCENT = 10;
  static final long MIN_TOLERANCE_BYTES = 64L * 1024 * 1024;

  @Override
  public Map<TopicPartition, List<Integer>> targets(
      Collection<Node> brokers, List<BrokerView.PartitionView> partitions) {
    Loads loads = new Loads(members, brokers, partitions);
    Map<TopicPartition, List<Integer>> targets = new HashMap<>();
    // each move narrows a spread of counts or bytes; the replicas bound the loop all the same
    int bound = 2 * loads.count.values().stream().mapToInt(Integer::intValue).sum();
    for (int moves = 0; moves < bound; moves++) {
      Map<TopicPartition, List<Integer>> within = targets.size() < maxMoves ? null : targets;
      List<Move> next = loads.countMove(within);
      if (next.isEmpty()) {
        next = loads.byteMoves(within);
      }
      if (next.isEmpty()) {
        break;
      }
      next.forEach(m -> targets.put(m.tp(), loads.apply(m)));
    }
    targets.entrySet().removeIf(t -> t.getValue().equals(loads.before.get(t.getKey())));
    return targets;
  }

  private record Move(TopicPartition tp, int from, int to) {}

  /** The replicas, counts and bytes of each broker as the moves so far leave them. */
  private static final class Loads {
    final Map<Integer, Integer> count = new TreeMap<>();
    final Map<Integer, Long> bytes = new TreeMap<>();
    final Map<TopicPartition, List<Integer>> before = new LinkedHashMap<>();
    final Map<TopicPartition, List<Integer>> now = new LinkedHashMap<>();
    final Map<TopicPartition, Long> size = new HashMap<>();
    final Map<Integer, String> racks = new HashMap<>();

    Loads(Set<Integer> members, Collection<Node> brokers, List<BrokerView.PartitionView> views) {
      brokers.forEach(b -> racks.put(b.id(), b.rack()));
      members.forEach(
          id -> {
            count.put(id, 0);
            bytes.put(id, 0L);
          });
      for (BrokerView.PartitionView p : views) {
        before.put(p.topicPartition(), p.replicas());
        now.put(p.topicPartition(), p.replicas());
        size.put(p.topicPartition(), p.sizeBytes());
        p.replicas().stream()
            .filter(members::contains)
            .forEach(
                r -> {
                  count.merge(r, 1, Integer::sum);
                  bytes.merge(r, p.sizeBytes(), Long::sum);
                });
      }
    }

    List<Integer> apply(Move m) {
      List<Integer> target = now.get(m.tp()).stream().map(r -> r == m.from() ? m.to() : r).toList();
      now.put(m.tp(), target);
      long s = size.get(m.tp());
      count.merge(m.from(), -1, Integer::sum);
      count.merge(m.to(), 1, Integer::sum);
      bytes.merge(m.from(), -s, Long::sum);
      bytes.merge(m.to(), s, Long::sum);
      return target;
    }

    /**
     * A replica move from a broker holding more than one replica more than another, to it: the most
     * loaded such pair that some partition allows, of the partition that best evens their bytes.
     * {@code within}, when not null, limits it to those partitions.
     */
    List<Move> countMove(Map<TopicPartition, List<Integer>> within) {
      List<Integer> byCount = sorted(count);
      for (int hi = byCount.size() - 1; hi > 0; hi--) {
        int from = byCount.get(hi);
        for (int lo = 0; lo < hi; lo++) {
          int to = byCount.get(lo);
          if (count.get(from) - count.get(to) <= 1) {
            break;
          }
          long diff = bytes.get(from) - bytes.get(to);
          TopicPartition best = null;
          for (TopicPartition tp : movable(from, to, within)) {
            if (best == null
                || Math.abs(diff - 2 * size.get(tp)) < Math.abs(diff - 2 * size.get(best))) {
              best = tp;
            }
          }
          if (best != null) {
            return List.of(new Move(best, from, to));
          }
        }
      }
      return List.of();
    }

    /**
     * The move, or the swap of two partitions' replicas, between the heaviest and the lightest
     * brokers by bytes that some partitions allow, which best halves their difference while the
     * counts stay even; none when every broker is within the tolerance.
     */
    List<Move> byteMoves(Map<TopicPartition, List<Integer>> within) {
      long total = bytes.values().stream().mapToLong(Long::longValue).sum();
      long tolerance =
          Math.max(
              MIN_TOLERANCE_BYTES, total / Math.max(1, bytes.size()) * TOLERANCE_PERCENT / 100);
      List<Integer> byBytes = sorted(bytes);
      for (int hi = byBytes.size() - 1; hi > 0; hi--) {
        int from = byBytes.get(hi);
        for (int lo = 0; lo < hi; lo++) {
          int to = byBytes.get(lo);
          long diff = bytes.get(from) - bytes.get(to);
          if (diff <= tolerance) {
            break;
          }
          List<Move> best = List.of();
          long bestLeft = diff;
          List<TopicPartition> fromOnly = movable(from, to, within);
          if (count.get(from) > count.get(to)) {
            for (TopicPartition tp : fromOnly) {
              long left = Math.abs(diff - 2 * size.get(tp));
              if (left < bestLeft) {
                bestLeft = left;
                best = List.of(new Move(tp, from, to));
              }
            }
          }
          TreeMap<Long, TopicPartition> toOnly = new TreeMap<>();
          movable(to, from, within).forEach(tp -> toOnly.putIfAbsent(size.get(tp), tp));
          for (TopicPartition tp : fromOnly) {
            // the swap that best halves diff moves back a partition diff / 2 smaller
            long wanted = size.get(tp) - diff / 2;
            for (Map.Entry<Long, TopicPartition> back :
                new ArrayList<>(
                    java.util.stream.Stream.of(
                            toOnly.floorEntry(wanted), toOnly.ceilingEntry(wanted))
                        .filter(Objects::nonNull)
                        .toList())) {
              long left = Math.abs(diff - 2 * (size.get(tp) - back.getKey()));
              if (left < bestLeft) {
                bestLeft = left;
                best = List.of(new Move(tp, from, to), new Move(back.getValue(), to, from));
              }
            }
          }
          if (!best.isEmpty()) {
            return best;
          }
        }
      }
      return List.of();
    }

    /**
     * The partitions with a replica on {@code from} and none on {@code to} whose racks stay spread
     * if it moves there; of {@code within} only, when not null.
     */
    private List<TopicPartition> movable(
        int from, int to, Map<TopicPartition, List<Integer>> within) {
      List<TopicPartition> movable = new ArrayList<>();
      now.forEach(
          (tp, replicas) -> {
            if ((within == null || within.containsKey(tp))
                && replicas.contains(from)
                && !replicas.contains(to)
                && racksStaySpread(replicas, from, to)) {
              movable.add(tp);
            }
          });
      return movable;
    }

    private boolean racksStaySpread(List<Integer> replicas, int from, int to) {
      String rack = racks.get(to);
      return rack == null
          || Objects.equals(rack, racks.get(from))
          || replicas.stream().filter(r -> r != from).noneMatch(r -> rack.equals(racks.get(r)));
    }

    private static <N extends Comparable<N>> List<Integer> sorted(Map<Integer, N> load) {
      return load.keySet().stream()
          .sorted(Comparator.comparing((Integer id) -> load.get(id)).thenComparing(id -> id))
          .toList();
    }
  }
}
