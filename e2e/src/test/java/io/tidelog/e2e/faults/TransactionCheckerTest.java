package io.tidelog.e2e.faults;

import static org.assertj.core.api.Assertions.assertThat;

import io.tidelog.e2e.faults.History.Committed;
import io.tidelog.e2e.faults.History.Read;
import io.tidelog.e2e.faults.History.Reset;
import io.tidelog.e2e.faults.History.Transaction;
import io.tidelog.e2e.faults.History.Transaction.Outcome;
import io.tidelog.e2e.faults.TransactionChecker.Anomaly;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

class TransactionCheckerTest {
  private final History history = new History();
  private long clock;

  /**
   * A transaction of client "t" that read {@code reads}, committed no offsets, and wrote values
   * "id-0", "id-1"… to partitions.
   */
  private void txn(String id, Outcome outcome, List<String> reads, int... partitions) {
    txn(id, outcome, reads, Map.of(), partitions);
  }

  private void txn(
      String id,
      Outcome outcome,
      List<String> reads,
      Map<Integer, Long> offsets,
      int... partitions) {
    Map<String, Integer> writes = new LinkedHashMap<>();
    for (int i = 0; i < partitions.length; i++) {
      writes.put(id + "-" + i, partitions[i]);
    }
    history.add(new Transaction("t", id, clock++, clock++, outcome, writes, reads, offsets, null));
  }

  /** The final committed offset of client "t"'s group. */
  private void committed(int partition, long offset) {
    history.add(new Committed(TransactionalWorkload.group("t"), clock++, partition, offset));
  }

  private void read(String reader, int partition, long offset, String value) {
    history.add(new Read(reader, clock++, partition, offset, value));
  }

  private void finalRead(int partition, long offset, String value) {
    read(History.FINAL_READER, partition, offset, value);
  }

  /**
   * A committed transaction over two partitions, an aborted one, and a third that read the first:
   * nothing wrong, whichever order the markers leave between the offsets.
   */
  private void cleanRun() {
    txn("a", Outcome.COMMITTED, List.of(), 0, 1);
    txn("b", Outcome.ABORTED, List.of(), 0);
    read("r", 0, 0, "a-0");
    txn("c", Outcome.COMMITTED, List.of("a-0"), 1);
    finalRead(0, 0, "a-0");
    finalRead(1, 0, "a-1");
    finalRead(1, 4, "c-0");
  }

  private Map<Anomaly, List<String>> anomalies() {
    return TransactionChecker.check(history).anomalies();
  }

  @Test
  void aCleanHistoryHasNoAnomaly() {
    cleanRun();
    // A failed commit may have committed everything or nothing.
    txn("d", Outcome.UNKNOWN, List.of(), 0, 1);
    txn("e", Outcome.UNKNOWN, List.of(), 0, 1);
    finalRead(0, 6, "d-0");
    finalRead(1, 7, "d-1");
    // Moved back to the committed offsets after an abort, a consumer reads again.
    history.add(new Reset("r", clock++, 0));
    read("r", 0, 0, "a-0");

    TransactionChecker.Result result = TransactionChecker.check(history);

    assertThat(result.anomalies()).isEmpty();
    assertThat(result.count()).isZero();
    assertThat(result.outcomes())
        .containsEntry(Outcome.COMMITTED, 2)
        .containsEntry(Outcome.ABORTED, 1)
        .containsEntry(Outcome.UNKNOWN, 2);
  }

  @Test
  void readingAnAbortedValueIsAnAbortedRead() {
    cleanRun();
    read("r", 0, 2, "b-0");

    assertThat(anomalies()).containsOnlyKeys(Anomaly.ABORTED_READ);
  }

  @Test
  void aCommittedValueMissingFromTheFinalReadIsLost() {
    cleanRun();
    txn("d", Outcome.COMMITTED, List.of(), 2, 3);
    finalRead(2, 0, "d-0");

    assertThat(anomalies()).containsOnlyKeys(Anomaly.LOST);
  }

  @Test
  void aFailedCommitPartlyThereIsTorn() {
    cleanRun();
    txn("d", Outcome.UNKNOWN, List.of(), 2, 3);
    finalRead(3, 0, "d-1");

    assertThat(anomalies()).containsOnlyKeys(Anomaly.TORN);
  }

  @Test
  void oneValueAtTwoOffsetsIsADuplicate() {
    cleanRun();
    finalRead(0, 9, "a-0");

    assertThat(anomalies()).containsOnlyKeys(Anomaly.DUPLICATE);
  }

  @Test
  void twoValuesAtOneOffsetAreInconsistent() {
    cleanRun();
    txn("d", Outcome.COMMITTED, List.of(), 2);
    read("r", 1, 4, "d-0");
    finalRead(2, 0, "d-0");

    assertThat(anomalies()).containsOnlyKeys(Anomaly.INCONSISTENT_OFFSET, Anomaly.DUPLICATE);
  }

  @Test
  void aConsumerGoingBackIsNonmonotonic() {
    cleanRun();
    read("r", 0, 0, "a-0");

    assertThat(anomalies()).containsOnlyKeys(Anomaly.NONMONOTONIC_POLL);
  }

  @Test
  void aValueTwoCommittedTransactionsOfOneClientReadIsReprocessed() {
    cleanRun();
    txn("d", Outcome.COMMITTED, List.of("a-0"), 2);
    finalRead(2, 0, "d-0");

    assertThat(anomalies()).containsOnlyKeys(Anomaly.REPROCESSED);
  }

  @Test
  void aValueBelowTheCommittedOffsetThatNoCommittedTransactionReadIsUnprocessed() {
    cleanRun();
    txn("d", Outcome.COMMITTED, List.of(), Map.of(1, 5L), 2);
    finalRead(2, 0, "d-0");
    committed(1, 5);

    Map<Anomaly, List<String>> anomalies = anomalies();

    assertThat(anomalies).containsOnlyKeys(Anomaly.UNPROCESSED);
    assertThat(anomalies.get(Anomaly.UNPROCESSED)).hasSize(2);
  }

  @Test
  void committedOffsetsOtherThanTheLastCommittedTransactionsAreWrong() {
    cleanRun();
    txn("d", Outcome.COMMITTED, List.of(), Map.of(0, 1L), 2);
    txn("e", Outcome.ABORTED, List.of(), Map.of(0, 0L), 3);
    finalRead(2, 0, "d-0");
    committed(0, 0);

    assertThat(anomalies()).containsOnlyKeys(Anomaly.COMMITTED_OFFSETS);
  }

  @Test
  void transactionsReadingEachOthersWritesAreACycle() {
    cleanRun();
    txn("x", Outcome.COMMITTED, List.of("z-0"), 2);
    txn("y", Outcome.COMMITTED, List.of("x-0"), 3);
    txn("z", Outcome.UNKNOWN, List.of("y-0"), 2);
    finalRead(2, 0, "x-0");
    finalRead(3, 0, "y-0");
    finalRead(2, 1, "z-0");

    Map<Anomaly, List<String>> anomalies = anomalies();

    assertThat(anomalies).containsOnlyKeys(Anomaly.CYCLE);
    assertThat(anomalies.get(Anomaly.CYCLE)).containsExactly("write-read cycle [x, y, z]");
  }

  @Test
  void concurrentWritersInterleavingIsAWriteCycleKafkaAllows() {
    cleanRun();
    txn("x", Outcome.COMMITTED, List.of(), 2, 3);
    txn("y", Outcome.COMMITTED, List.of(), 2, 3);
    finalRead(2, 0, "x-0");
    finalRead(2, 1, "y-0");
    finalRead(3, 0, "y-1");
    finalRead(3, 1, "x-1");

    TransactionChecker.Result result = TransactionChecker.check(history);

    assertThat(result.anomalies()).isEmpty();
    assertThat(result.g0()).containsExactly("[x, y]");
  }

  @Test
  void cyclesFindsEveryComponentOfMoreThanOneNodeInLongChains() {
    Map<String, Set<String>> edges = new LinkedHashMap<>();
    for (int i = 0; i < 100_000; i++) {
      edges.put("n" + i, Set.of("n" + (i + 1)));
    }
    edges.put("n100000", Set.of("n99998"));
    edges.put("a", Set.of("b"));
    edges.put("b", Set.of("a", "n5"));

    assertThat(TransactionChecker.cycles(edges))
        .containsExactlyInAnyOrder("[n100000, n99998, n99999]", "[a, b]");
  }
}
