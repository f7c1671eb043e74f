package io.tidelog.e2e.faults;

import io.tidelog.e2e.faults.History.Committed;
import io.tidelog.e2e.faults.History.Read;
import io.tidelog.e2e.faults.History.Reset;
import io.tidelog.e2e.faults.History.Send;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Checks a {@link History} against what Kafka promises for an idempotent producer with {@code
 * acks=all} and consumers that read from the beginning, after Jepsen's Kafka queue workload:
 *
 * <ul>
 *   <li>{@link Anomaly#LOST}: an acknowledged record that the final read of every partition, from
 *       its start to its end offset, does not return;
 *   <li>{@link Anomaly#UNSEEN}: an acknowledged record that no consumer read during the run;
 *   <li>{@link Anomaly#DUPLICATE}: one value at two offsets (with idempotence, a retried send must
 *       not be written twice);
 *   <li>{@link Anomaly#INCONSISTENT_OFFSET}: two values at one offset of a partition, in reads or
 *       in the offset an acknowledgement gave;
 *   <li>{@link Anomaly#NONMONOTONIC_POLL}: a consumer's read at or below its previous offset of the
 *       partition, without the partition having been assigned to it anew;
 *   <li>{@link Anomaly#SKIPPED_OFFSET}: a consumer's read past an offset it never read (no
 *       transactions and no compaction here, so the offsets of a partition have no gaps);
 *   <li>{@link Anomaly#COMMITTED_OFFSET_BACKWARDS}: a group's committed offset for a partition
 *       lower than one the brokers reported before.
 * </ul>
 *
 * <p>What Kafka allows is not an anomaly: a send that failed or timed out may or may not be in the
 * log (it is neither lost when absent nor a duplicate when present once); a consumer group's member
 * reads again from the committed offset after a rebalance (the same offset and value read twice is
 * a redelivery, not a duplicate); consumers lag behind producers until the end.
 *
 * <p>Nor is a duplicate the Kafka client writes itself (KAFKA-14034, open in kafka-clients 4.1):
 * when a batch fails because its delivery timeout ran out, the idempotent producer bumps its epoch
 * and gives the partition's batches still in flight new sequences from 0, so a batch the leader had
 * already appended is sent again as a new one, which no broker can tell from new records. Such a
 * duplicate is counted apart ({@link Result#rewrittenByClient}) when the value's own send failed
 * and another send of the same producer to the same partition, made before it, failed with a
 * timeout while it was pending. A duplicate of an acknowledged record is always an anomaly.
 */
final class Checker {
  enum Anomaly {
    LOST,
    UNSEEN,
    DUPLICATE,
    INCONSISTENT_OFFSET,
    NONMONOTONIC_POLL,
    SKIPPED_OFFSET,
    COMMITTED_OFFSET_BACKWARDS
  }

  /** What the checker found: for each kind, how many, and the first few cases. */
  record Result(
      int operations, Map<Anomaly, List<String>> anomalies, List<String> rewrittenByClient) {
    long count() {
      return anomalies.values().stream().mapToLong(List::size).sum();
    }

    String summary() {
      StringBuilder text = new StringBuilder(counts(Anomaly.values(), anomalies));
      text.append(
          String.format(
              "  (not anomalies: %d duplicates of failed sends the client re-sent under a new"
                  + " epoch, KAFKA-14034)%n",
              rewrittenByClient.size()));
      rewrittenByClient.stream()
          .limit(5)
          .forEach(c -> text.append("      ").append(c).append('\n'));
      return text.toString();
    }
  }

  /** Each kind's count, a line each, followed by its first five cases. */
  static <K extends Enum<K>> String counts(K[] kinds, Map<K, List<String>> anomalies) {
    StringBuilder text = new StringBuilder();
    for (K kind : kinds) {
      List<String> cases = anomalies.getOrDefault(kind, List.of());
      text.append(String.format("  %-27s %d", kind.name().toLowerCase(), cases.size()));
      cases.stream().limit(5).forEach(c -> text.append("\n      ").append(c));
      text.append('\n');
    }
    return text.toString();
  }

  private final Map<Anomaly, List<String>> found = new EnumMap<>(Anomaly.class);
  private final List<String> rewrittenByClient = new ArrayList<>();

  private Checker() {}

  static Result check(History history) {
    Checker checker = new Checker();
    List<Send> sends = history.all(Send.class);
    List<Read> reads = history.all(Read.class);
    checker.checkOffsets(sends, reads);
    checker.checkAcknowledged(sends, reads);
    checker.checkPolls(history);
    checker.checkCommits(history.all(Committed.class));
    return new Result(history.ops().size(), checker.found, checker.rewrittenByClient);
  }

  private void report(Anomaly kind, String what) {
    found.computeIfAbsent(kind, k -> new ArrayList<>()).add(what);
  }

  private void checkOffsets(List<Send> sends, List<Read> reads) {
    Placements placements = new Placements();
    for (Send send : sends) {
      if (send.acked()) {
        placements.add(send.partition(), send.offset(), send.value());
      }
    }
    reads.forEach(read -> placements.add(read.partition(), read.offset(), read.value()));
    placements.inconsistentOffsets().forEach(c -> report(Anomaly.INCONSISTENT_OFFSET, c));
    Map<String, Send> sendOf = new HashMap<>();
    sends.forEach(send -> sendOf.put(send.value(), send));
    placements
        .duplicates()
        .forEach(
            (value, at) -> {
              Send send = sendOf.get(value);
              if (send != null && rewrittenByClient(send, sends)) {
                rewrittenByClient.add(value + " at " + at + " (" + send.error() + ")");
              } else {
                report(Anomaly.DUPLICATE, value + " at " + at);
              }
            });
  }

  /**
   * Whether {@code send} failed and, while it was pending, an earlier send of its producer to its
   * partition failed with a timeout: the client's epoch bump then re-sent its batch under new
   * sequences (KAFKA-14034).
   */
  private static boolean rewrittenByClient(Send send, List<Send> sends) {
    return !send.acked()
        && sends.stream()
            .anyMatch(
                other ->
                    !other.acked()
                        && other.producer().equals(send.producer())
                        && other.partition() == send.partition()
                        && other.invoked() < send.invoked()
                        && other.completed() > send.invoked()
                        && other.completed() < send.completed()
                        && other.error() != null
                        && other.error().contains("TimeoutException"));
  }

  private void checkAcknowledged(List<Send> sends, List<Read> reads) {
    Set<String> finalRead = new HashSet<>();
    Set<String> seen = new HashSet<>();
    for (Read read : reads) {
      (History.FINAL_READER.equals(read.reader()) ? finalRead : seen).add(read.value());
    }
    for (Send send : sends) {
      if (send.acked() && !finalRead.contains(send.value())) {
        report(
            Anomaly.LOST,
            send.value() + " acknowledged at " + send.partition() + "@" + send.offset());
      }
      if (send.acked() && !seen.contains(send.value())) {
        report(
            Anomaly.UNSEEN,
            send.value() + " acknowledged at " + send.partition() + "@" + send.offset());
      }
    }
  }

  private void checkPolls(History history) {
    Map<String, Long> last = new HashMap<>();
    for (History.Op op : history.ops()) {
      if (op instanceof Reset reset) {
        last.remove(reset.reader() + "/" + reset.partition());
      } else if (op instanceof Read read) {
        Long previous = last.put(read.reader() + "/" + read.partition(), read.offset());
        if (previous == null) {
          continue;
        }
        String where = read.reader() + " on partition " + read.partition();
        if (read.offset() <= previous) {
          report(
              Anomaly.NONMONOTONIC_POLL,
              where + ": offset " + read.offset() + " after " + previous);
        } else if (read.offset() > previous + 1) {
          report(
              Anomaly.SKIPPED_OFFSET, where + ": offset " + read.offset() + " after " + previous);
        }
      }
    }
  }

  private void checkCommits(List<Committed> commits) {
    Map<String, Long> last = new HashMap<>();
    for (Committed commit : commits) {
      String key = commit.group() + "/" + commit.partition();
      Long previous = last.get(key);
      last.merge(key, commit.offset(), Math::max);
      if (previous != null && commit.offset() < previous) {
        report(
            Anomaly.COMMITTED_OFFSET_BACKWARDS,
            key + ": " + commit.offset() + " after " + previous);
      }
    }
  }
}
