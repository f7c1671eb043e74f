package io.tidelog.e2e.faults;

import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Where the history saw each value and what it saw at each offset of a partition: from reads, and
 * from the offsets acknowledgements gave. A log holds one value per offset and, with idempotent or
 * transactional producers, each value at one offset.
 */
final class Placements {
  private final Map<String, Set<String>> valuesAt = new TreeMap<>();
  private final Map<String, Set<String>> offsetsOf = new TreeMap<>();

  void add(int partition, long offset, String value) {
    String at = partition + "@" + offset;
    valuesAt.computeIfAbsent(at, k -> new TreeSet<>()).add(value);
    offsetsOf.computeIfAbsent(value, k -> new TreeSet<>()).add(at);
  }

  /** One line for each offset seen with two values or more. */
  List<String> inconsistentOffsets() {
    return valuesAt.entrySet().stream()
        .filter(e -> e.getValue().size() > 1)
        .map(e -> "partition@offset " + e.getKey() + " holds " + e.getValue())
        .toList();
  }

  /** Each value seen at two offsets or more, with those offsets ({@code partition@offset}). */
  Map<String, Set<String>> duplicates() {
    Map<String, Set<String>> duplicates = new TreeMap<>();
    offsetsOf.forEach(
        (value, at) -> {
          if (at.size() > 1) {
            duplicates.put(value, at);
          }
        });
    return duplicates;
  }
}
