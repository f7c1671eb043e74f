package io.tidelog.e2e.faults;

import io.tidelog.e2e.faults.History.Fault;
import io.tidelog.e2e.faults.History.Send;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * How long produce stopped succeeding after each fault: from the fault's injection until the next
 * fault's (or the last send of the run), the longest time in which some partition acknowledged
 * nothing, a window's start and end included. A run sends to every partition several times a
 * second, so in a healthy window that is tens of milliseconds; a leader that cannot commit shows as
 * the time until it can again, or the whole window if it never does within it.
 */
final class Unavailability {
  private Unavailability() {}

  /** For each kind of fault, the seconds of unavailability after each injection of it. */
  static Map<String, List<Double>> byKind(History history, int partitions) {
    List<Fault> faults =
        history.all(Fault.class).stream().sorted(Comparator.comparingLong(Fault::start)).toList();
    List<List<Long>> acks = new ArrayList<>();
    for (int p = 0; p < partitions; p++) {
      acks.add(new ArrayList<>());
    }
    for (Send send : history.all(Send.class)) {
      if (send.acked()) {
        acks.get(send.partition()).add(send.completed());
      }
    }
    acks.forEach(list -> list.sort(null));
    long lastSend = history.all(Send.class).stream().mapToLong(Send::invoked).max().orElse(0);
    Map<String, List<Double>> byKind = new TreeMap<>();
    for (int i = 0; i < faults.size(); i++) {
      long from = faults.get(i).start();
      long to = i + 1 < faults.size() ? faults.get(i + 1).start() : lastSend;
      long worst = 0;
      for (List<Long> partitionAcks : acks) {
        long previous = from;
        for (long ack : partitionAcks) {
          if (ack > from && ack <= to) {
            worst = Math.max(worst, ack - previous);
            previous = ack;
          }
        }
        worst = Math.max(worst, to - previous);
      }
      byKind.computeIfAbsent(faults.get(i).kind(), k -> new ArrayList<>()).add(worst / 1e9);
    }
    return byKind;
  }

  /** One line per kind: how many, the median and the maximum, in seconds. */
  static String report(History history, int partitions) {
    StringBuilder text = new StringBuilder();
    byKind(history, partitions)
        .forEach(
            (kind, values) -> {
              List<Double> sorted = values.stream().sorted().toList();
              text.append(
                  String.format(
                      "  %-22s n=%d median %5.1f max %5.1f%n",
                      kind,
                      sorted.size(),
                      sorted.get((sorted.size() - 1) / 2),
                      sorted.get(sorted.size() - 1)));
            });
    return text.toString();
  }
}
