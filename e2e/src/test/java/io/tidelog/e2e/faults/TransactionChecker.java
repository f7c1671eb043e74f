package io.tidelog.e2e.faults;

import io.tidelog.e2e.faults.History.Committed;
import io.tidelog.e2e.faults.History.Read;
import io.tidelog.e2e.faults.History.Reset;
import io.tidelog.e2e.faults.History.Transaction;
import io.tidelog.e2e.faults.History.Transaction.Outcome;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Deque;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * Checks the history of the {@link TransactionalWorkload} against what Kafka promises to {@code
 * read_committed} consumers, after Jepsen's transactional Kafka checker:
 *
 * <ul>
 *   <li>{@link Anomaly#ABORTED_READ} (Adya's G1a): a read of a value whose transaction aborted;
 *   <li>{@link Anomaly#LOST}: a value of a committed transaction that the final read does not
 *       return;
 *   <li>{@link Anomaly#TORN}: a transaction of which the final read returns some values but not all
 *       (atomicity; a transaction whose commit failed may be all there or not at all);
 *   <li>{@link Anomaly#DUPLICATE}: one value at two offsets;
 *   <li>{@link Anomaly#INCONSISTENT_OFFSET}: two values at one offset of a partition;
 *   <li>{@link Anomaly#NONMONOTONIC_POLL}: a consumer's read at or below its previous offset of the
 *       partition, without having been moved back to its group's committed offset in between;
 *   <li>{@link Anomaly#REPROCESSED}: a value two committed transactions of one client read (the
 *       offsets the first committed did not hold);
 *   <li>{@link Anomaly#UNPROCESSED}: a value below a client's final committed offset that none of
 *       its committed transactions read (offsets that an aborted transaction committed held);
 *   <li>{@link Anomaly#COMMITTED_OFFSETS}: a client's group's final committed offsets other than
 *       those its last committed transaction sent;
 *   <li>{@link Anomaly#CYCLE} (G1c over write-read dependencies): transactions that each read what
 *       the next one wrote, round a cycle. {@code read_committed} forbids it: a transaction reads
 *       another's write only after that one committed, so around a cycle each would have committed
 *       before itself.
 * </ul>
 *
 * <p>A transaction whose commit failed counts as committed when the final read returns its values.
 *
 * <p>What Kafka allows is not an anomaly, but is counted: a cycle of write-write dependencies (G0),
 * where one transaction's value precedes another's in one partition and follows it in another.
 * Kafka orders concurrent transactions' records per partition by arrival and takes no locks, so two
 * transactions writing the same partitions at the same time make such cycles; the same holds for
 * cycles mixing write-write and write-read dependencies, which this checker therefore does not look
 * for.
 */
final class TransactionChecker {
  enum Anomaly {
    ABORTED_READ,
    LOST,
    TORN,
    DUPLICATE,
    INCONSISTENT_OFFSET,
    NONMONOTONIC_POLL,
    REPROCESSED,
    UNPROCESSED,
    COMMITTED_OFFSETS,
    CYCLE
  }

  /** What the checker found: for each kind the first cases, and the write cycles (G0) seen. */
  record Result(
      Map<Outcome, Integer> outcomes,
      int readDependencies,
      Map<Anomaly, List<String>> anomalies,
      List<String> g0) {
    long count() {
      return anomalies.values().stream().mapToLong(List::size).sum();
    }

    String summary() {
      StringBuilder text =
          new StringBuilder(
              String.format(
                  "  transactions: %s; %d write-read dependencies between them%n",
                  outcomes, readDependencies));
      text.append(Checker.counts(Anomaly.values(), anomalies));
      text.append(
          String.format(
              "  (not anomalies: %d write cycles (G0) between concurrent transactions)%n",
              g0.size()));
      g0.stream().limit(3).forEach(c -> text.append("      ").append(c).append('\n'));
      return text.toString();
    }
  }

  private final Map<Anomaly, List<String>> found = new EnumMap<>(Anomaly.class);
  private final Map<String, Transaction> writerOf = new HashMap<>();
  private final Map<String, Transaction> transactions = new LinkedHashMap<>();
  private int readDependencies;

  private TransactionChecker(List<Transaction> all) {
    for (Transaction txn : all) {
      transactions.put(txn.id(), txn);
      txn.writes().keySet().forEach(value -> writerOf.put(value, txn));
    }
  }

  static Result check(History history) {
    List<Transaction> all = history.all(Transaction.class);
    TransactionChecker checker = new TransactionChecker(all);
    List<Read> reads = history.all(Read.class);
    List<Read> finalRead =
        reads.stream().filter(r -> History.FINAL_READER.equals(r.reader())).toList();
    checker.checkReads(reads);
    checker.checkOffsets(reads);
    checker.checkAtomicity(finalRead);
    checker.checkPolls(history.ops());
    checker.checkExactlyOnce(finalRead, history.all(Committed.class));
    checker.checkReadCycles();
    Map<Outcome, Integer> outcomes = new EnumMap<>(Outcome.class);
    all.forEach(txn -> outcomes.merge(txn.outcome(), 1, Integer::sum));
    return new Result(
        outcomes, checker.readDependencies, checker.found, checker.writeCycles(finalRead));
  }

  private void report(Anomaly kind, String what) {
    found.computeIfAbsent(kind, k -> new ArrayList<>()).add(what);
  }

  private void checkReads(List<Read> reads) {
    for (Read read : reads) {
      Transaction writer = writerOf.get(read.value());
      if (writer != null && writer.outcome() == Outcome.ABORTED) {
        report(
            Anomaly.ABORTED_READ,
            read.reader()
                + " read "
                + read.value()
                + " at "
                + read.partition()
                + "@"
                + read.offset()
                + " of aborted "
                + writer.id());
      }
    }
  }

  private void checkOffsets(List<Read> reads) {
    Placements placements = new Placements();
    reads.forEach(read -> placements.add(read.partition(), read.offset(), read.value()));
    placements.inconsistentOffsets().forEach(c -> report(Anomaly.INCONSISTENT_OFFSET, c));
    placements.duplicates().forEach((value, at) -> report(Anomaly.DUPLICATE, value + " at " + at));
  }

  private void checkAtomicity(List<Read> finalRead) {
    Set<String> present = new HashSet<>();
    finalRead.forEach(read -> present.add(read.value()));
    for (Transaction txn : transactions.values()) {
      List<String> missing =
          txn.writes().keySet().stream().filter(v -> !present.contains(v)).sorted().toList();
      if (txn.outcome() == Outcome.COMMITTED && !missing.isEmpty()) {
        report(Anomaly.LOST, "committed " + txn.id() + " is missing " + missing);
      } else if (txn.outcome() == Outcome.UNKNOWN
          && !missing.isEmpty()
          && missing.size() < txn.writes().size()) {
        report(Anomaly.TORN, txn.id() + " (commit failed) is missing only " + missing);
      }
    }
  }

  private void checkPolls(List<History.Op> ops) {
    Map<String, Long> last = new HashMap<>();
    for (History.Op op : ops) {
      if (op instanceof Reset reset) {
        last.remove(reset.reader() + "/" + reset.partition());
      } else if (op instanceof Read read) {
        Long previous = last.put(read.reader() + "/" + read.partition(), read.offset());
        if (previous != null && read.offset() <= previous) {
          report(
              Anomaly.NONMONOTONIC_POLL,
              read.reader()
                  + " on partition "
                  + read.partition()
                  + ": offset "
                  + read.offset()
                  + " after "
                  + previous);
        }
      }
    }
  }

  /**
   * Each client's committed transactions read every value below its group's final committed offsets
   * once, and those offsets are what its last committed transaction sent.
   */
  private void checkExactlyOnce(List<Read> finalRead, List<Committed> committed) {
    Set<String> present = new HashSet<>();
    finalRead.forEach(read -> present.add(read.value()));
    Map<String, List<Transaction>> byClient = new TreeMap<>();
    for (Transaction txn : transactions.values()) {
      boolean done =
          txn.outcome() == Outcome.COMMITTED
              || txn.outcome() == Outcome.UNKNOWN
                  && txn.writes().keySet().stream().anyMatch(present::contains);
      List<Transaction> ofClient = byClient.computeIfAbsent(txn.client(), k -> new ArrayList<>());
      if (done) {
        ofClient.add(txn);
      }
    }
    byClient.forEach(
        (client, done) -> {
          Map<String, String> readBy = new HashMap<>();
          for (Transaction txn : done) {
            for (String value : txn.reads()) {
              String first = readBy.putIfAbsent(value, txn.id());
              if (first != null) {
                report(Anomaly.REPROCESSED, value + " read by " + first + " and " + txn.id());
              }
            }
          }
          Map<Integer, Long> offsets = new TreeMap<>();
          String group = TransactionalWorkload.group(client);
          committed.stream()
              .filter(c -> c.group().equals(group))
              .forEach(c -> offsets.put(c.partition(), c.offset()));
          Map<Integer, Long> sent = done.isEmpty() ? Map.of() : done.get(done.size() - 1).offsets();
          if (!offsets.equals(new TreeMap<>(sent))) {
            report(
                Anomaly.COMMITTED_OFFSETS,
                group + " committed " + offsets + ", its last committed transaction sent " + sent);
          }
          for (Read read : finalRead) {
            if (read.offset() < offsets.getOrDefault(read.partition(), 0L)
                && !readBy.containsKey(read.value())) {
              report(
                  Anomaly.UNPROCESSED,
                  client
                      + " committed past "
                      + read.value()
                      + " at "
                      + read.partition()
                      + "@"
                      + read.offset()
                      + " without reading it");
            }
          }
        });
  }

  /** Write-read edges between transactions that did not abort: writer to reader. */
  private void checkReadCycles() {
    Map<String, Set<String>> edges = new LinkedHashMap<>();
    for (Transaction reader : transactions.values()) {
      if (reader.outcome() == Outcome.ABORTED) {
        continue;
      }
      for (String value : reader.reads()) {
        Transaction writer = writerOf.get(value);
        if (writer != null && writer.outcome() != Outcome.ABORTED && writer != reader) {
          edges.computeIfAbsent(writer.id(), k -> new LinkedHashSet<>()).add(reader.id());
        }
      }
    }
    readDependencies = edges.values().stream().mapToInt(Set::size).sum();
    cycles(edges).forEach(cycle -> report(Anomaly.CYCLE, "write-read cycle " + cycle));
  }

  /**
   * Write-write edges from the final read: in each partition, from a transaction to the next
   * transaction whose value follows its value.
   */
  private List<String> writeCycles(List<Read> finalRead) {
    Map<String, Set<String>> edges = new LinkedHashMap<>();
    Map<Integer, Transaction> lastIn = new HashMap<>();
    for (Read read :
        finalRead.stream()
            .sorted(Comparator.comparingInt(Read::partition).thenComparingLong(Read::offset))
            .toList()) {
      Transaction writer = writerOf.get(read.value());
      if (writer == null) {
        continue;
      }
      Transaction previous = lastIn.put(read.partition(), writer);
      if (previous != null && previous != writer) {
        edges.computeIfAbsent(previous.id(), k -> new LinkedHashSet<>()).add(writer.id());
      }
    }
    return cycles(edges);
  }

  /**
   * The strongly connected components of more than one node (Tarjan's algorithm, without recursion,
   * so that long chains of transactions do not overflow the stack).
   */
  static List<String> cycles(Map<String, Set<String>> edges) {
    Map<String, Integer> index = new HashMap<>();
    Map<String, Integer> low = new HashMap<>();
    Deque<String> stack = new ArrayDeque<>();
    Set<String> onStack = new HashSet<>();
    List<String> components = new ArrayList<>();
    for (String root : edges.keySet()) {
      if (index.containsKey(root)) {
        continue;
      }
      Deque<Map.Entry<String, Iterator<String>>> work = new ArrayDeque<>();
      work.push(Map.entry(root, edges.getOrDefault(root, Set.of()).iterator()));
      index.put(root, index.size());
      low.put(root, index.get(root));
      stack.push(root);
      onStack.add(root);
      while (!work.isEmpty()) {
        String node = work.peek().getKey();
        Iterator<String> next = work.peek().getValue();
        if (next.hasNext()) {
          String to = next.next();
          if (!index.containsKey(to)) {
            index.put(to, index.size());
            low.put(to, index.get(to));
            stack.push(to);
            onStack.add(to);
            work.push(Map.entry(to, edges.getOrDefault(to, Set.of()).iterator()));
          } else if (onStack.contains(to)) {
            low.put(node, Math.min(low.get(node), index.get(to)));
          }
          continue;
        }
        work.pop();
        if (!work.isEmpty()) {
          String parent = work.peek().getKey();
          low.put(parent, Math.min(low.get(parent), low.get(node)));
        }
        if (low.get(node).equals(index.get(node))) {
          List<String> component = new ArrayList<>();
          String member;
          do {
            member = stack.pop();
            onStack.remove(member);
            component.add(member);
          } while (!member.equals(node));
          if (component.size() > 1) {
            component.sort(null);
            components.add(component.toString());
          }
        }
      }
    }
    return components;
  }
}
