package io.tidelog.e2e.faults;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * Every operation of a run, in the order each client thread did them: what the checker reads and
 * what a run writes as JSON. Times are {@link System#nanoTime()} values.
 */
final class History {
  /** One operation. */
  sealed interface Op permits Send, Read, Reset, Committed, Fault, Transaction {}

  /**
   * A produce call and how it ended: {@code acked} with the offset the broker gave, or not (an
   * error or a timeout: the record may or may not have been written, as Kafka allows).
   */
  record Send(
      String producer,
      String value,
      int partition,
      long invoked,
      long completed,
      boolean acked,
      long offset,
      String error)
      implements Op {}

  /** One record a consumer's poll returned. {@code reader} "final" is the read after the run. */
  record Read(String reader, long time, int partition, long offset, String value) implements Op {}

  /**
   * The reader's position on the partition was set anew (the partition was assigned to it), so its
   * next read need not follow its last.
   */
  record Reset(String reader, long time, int partition) implements Op {}

  /** The group's committed offset for a partition, as the brokers reported it at {@code time}. */
  record Committed(String group, long time, int partition, long offset) implements Op {}

  /**
   * A transaction of the transactional workload: the values it sent (value to partition), the
   * values it read, the offsets it committed for its client's group (partition to offset), and how
   * it ended.
   */
  record Transaction(
      String client,
      String id,
      long invoked,
      long completed,
      Outcome outcome,
      Map<String, Integer> writes,
      List<String> reads,
      Map<Integer, Long> offsets,
      String error)
      implements Op {
    enum Outcome {
      /** {@code commitTransaction} returned. */
      COMMITTED,
      /** No commit was asked for, or an abort succeeded: none of its writes may be read. */
      ABORTED,
      /** A commit was asked for and failed: all of its writes or none. */
      UNKNOWN
    }
  }

  /** A fault: injected at {@code start}, healed at {@code end}. */
  record Fault(String kind, String target, long start, long end) implements Op {}

  static final String FINAL_READER = "final";
  private final ConcurrentLinkedQueue<Op> ops = new ConcurrentLinkedQueue<>();

  void add(Op op) {
    ops.add(op);
  }

  List<Op> ops() {
    return List.copyOf(ops);
  }

  <T extends Op> List<T> all(Class<T> type) {
    return ops.stream().filter(type::isInstance).map(type::cast).toList();
  }

  /** A run of the workload, which may throw. */
  interface Run {
    void run() throws Exception;
  }

  /**
   * Runs {@code run} and then writes the history to {@code file}, whether it returned or threw: a
   * failed run leaves its evidence too.
   */
  void writtenAfter(Path file, Run run) throws Exception {
    try {
      run.run();
    } finally {
      write(file);
    }
  }

  /** Writes the history as JSON: one object per operation, with its kind. */
  void write(Path file) throws IOException {
    new ObjectMapper()
        .writeValue(
            file.toFile(),
            ops.stream()
                .map(op -> Map.of("type", op.getClass().getSimpleName(), "op", op))
                .toList());
  }
}
