package io.tidelog.e2e.faults;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tidelog.e2e.faults.Checker.Anomaly;
import io.tidelog.e2e.faults.History.Committed;
import io.tidelog.e2e.faults.History.Fault;
import io.tidelog.e2e.faults.History.Read;
import io.tidelog.e2e.faults.History.Reset;
import io.tidelog.e2e.faults.History.Send;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CheckerTest {
  private final History history = new History();
  private long clock;

  private void acked(String value, int partition, long offset) {
    history.add(new Send("p", value, partition, clock++, clock++, true, offset, null));
  }

  private void read(String reader, int partition, long offset, String value) {
    history.add(new Read(reader, clock++, partition, offset, value));
  }

  /** Two records acknowledged and read by a consumer and by the final read: nothing wrong. */
  private void cleanRun() {
    acked("a", 0, 0);
    acked("b", 0, 1);
    read("r", 0, 0, "a");
    read("r", 0, 1, "b");
    read(History.FINAL_READER, 0, 0, "a");
    read(History.FINAL_READER, 0, 1, "b");
  }

  private Map<Anomaly, ?> anomalies() {
    return Checker.check(history).anomalies();
  }

  @Test
  void aCleanHistoryHasNoAnomaly() {
    cleanRun();
    // What Kafka allows: an unacknowledged send that was not written, one that was, and a group
    // member reading a partition again from its committed offset after an assignment.
    history.add(new Send("p", "c", 0, clock++, clock++, false, -1, "TimeoutException"));
    history.add(new Send("p", "d", 0, clock++, clock++, false, -1, "TimeoutException"));
    read(History.FINAL_READER, 0, 2, "d");
    history.add(new Reset("r", clock++, 0));
    read("r", 0, 1, "b");
    history.add(new Committed("g", clock++, 0, 1));
    history.add(new Committed("g", clock++, 0, 1));
    history.add(new Committed("g", clock++, 0, 2));

    Checker.Result result = Checker.check(history);

    assertThat(result.anomalies()).isEmpty();
    assertThat(result.count()).isZero();
    assertThat(result.operations()).isEqualTo(history.ops().size());
  }

  @Test
  void anAcknowledgedRecordMissingFromTheFinalReadIsLost() {
    cleanRun();
    acked("c", 0, 2);
    read("r", 0, 2, "c");

    assertThat(anomalies()).containsOnlyKeys(Anomaly.LOST);
  }

  @Test
  void anAcknowledgedRecordNoConsumerReadIsUnseen() {
    cleanRun();
    acked("c", 0, 2);
    read(History.FINAL_READER, 0, 2, "c");

    assertThat(anomalies()).containsOnlyKeys(Anomaly.UNSEEN);
  }

  @Test
  void oneValueAtTwoOffsetsIsADuplicate() {
    cleanRun();
    read(History.FINAL_READER, 0, 2, "b");

    assertThat(anomalies()).containsOnlyKeys(Anomaly.DUPLICATE);
  }

  /**
   * What the fault suite saw in a partition between brokers (seed 1796164599505): "a" timed out
   * while "b" was in flight, the client re-sent "b" under a new epoch, and "b" failed too.
   */
  @Test
  void aFailedSendTheClientResentAfterAnEarlierTimeoutIsNotAnAnomaly() {
    cleanRun();
    long aInvoked = clock++;
    long bInvoked = clock++;
    long aFailed = clock++;
    String timeout = "org.apache.kafka.common.errors.TimeoutException: Disconnected from node 2";
    history.add(new Send("p", "a2", 0, aInvoked, aFailed, false, -1, timeout));
    history.add(new Send("p", "b2", 0, bInvoked, clock++, false, -1, "TimeoutException: Expiring"));
    read(History.FINAL_READER, 0, 2, "a2");
    read(History.FINAL_READER, 0, 3, "b2");
    read(History.FINAL_READER, 0, 4, "b2");

    Checker.Result result = Checker.check(history);

    assertThat(result.anomalies()).isEmpty();
    assertThat(result.rewrittenByClient()).singleElement().asString().startsWith("b2 at");
  }

  @Test
  void aFailedSendWrittenTwiceWithoutAnEarlierTimeoutIsADuplicate() {
    cleanRun();
    history.add(new Send("p", "c", 0, clock++, clock++, false, -1, "TimeoutException"));
    // A timeout of another producer, or of this producer on another partition, or one after the
    // send completed, does not make the client re-send it.
    long cInvoked = clock - 2;
    history.add(new Send("q", "x", 0, cInvoked - 1, cInvoked + 1, false, -1, "TimeoutException"));
    history.add(new Send("p", "y", 1, cInvoked - 1, cInvoked + 1, false, -1, "TimeoutException"));
    history.add(new Send("p", "z", 0, cInvoked - 1, clock + 5, false, -1, "TimeoutException"));
    read(History.FINAL_READER, 0, 2, "c");
    read(History.FINAL_READER, 0, 3, "c");

    Checker.Result result = Checker.check(history);

    assertThat(result.anomalies()).containsOnlyKeys(Anomaly.DUPLICATE);
    assertThat(result.rewrittenByClient()).isEmpty();
  }

  @Test
  void twoValuesAtOneOffsetAreInconsistent() {
    cleanRun();
    history.add(new Send("p", "c", 0, clock++, clock++, false, -1, "timeout"));
    read("other", 0, 1, "c");

    assertThat(anomalies()).containsOnlyKeys(Anomaly.INCONSISTENT_OFFSET);
  }

  @Test
  void anAcknowledgedOffsetThatReadsAsAnotherValueIsInconsistent() {
    acked("a", 0, 0);
    acked("b", 0, 0);
    read("r", 0, 0, "a");
    read(History.FINAL_READER, 0, 0, "a");

    assertThat(anomalies()).containsKey(Anomaly.INCONSISTENT_OFFSET);
  }

  @Test
  void readingBackwardsWithoutAnAssignmentIsNonMonotonic() {
    cleanRun();
    read("r", 0, 1, "b");

    assertThat(anomalies()).containsOnlyKeys(Anomaly.NONMONOTONIC_POLL);
  }

  @Test
  void readingPastAnOffsetIsASkip() {
    acked("a", 0, 0);
    acked("b", 0, 1);
    acked("c", 0, 2);
    read("r", 0, 0, "a");
    read("r", 0, 2, "c");
    read("s", 0, 1, "b");
    read(History.FINAL_READER, 0, 0, "a");
    read(History.FINAL_READER, 0, 1, "b");
    read(History.FINAL_READER, 0, 2, "c");

    assertThat(anomalies()).containsOnlyKeys(Anomaly.SKIPPED_OFFSET);
  }

  @Test
  void aCommittedOffsetThatGoesBackIsReported() {
    cleanRun();
    history.add(new Committed("g", clock++, 0, 2));
    history.add(new Committed("g", clock++, 1, 1));
    history.add(new Committed("g", clock++, 0, 1));

    Checker.Result result = Checker.check(history);

    assertThat(result.anomalies()).containsOnlyKeys(Anomaly.COMMITTED_OFFSET_BACKWARDS);
    assertThat(result.summary()).contains("committed_offset_backwards  1", "g/0: 1 after 2");
  }

  @Test
  void unavailabilityIsTheLongestTimeWithoutAnAcknowledgement() {
    long second = 1_000_000_000L;
    history.add(new Fault("KILL_BROKER", "b1", 10 * second, 11 * second));
    for (long t = 0; t < 30; t++) {
      // partition 0 acknowledges every second; partition 1 acknowledges nothing from 9.5 s to 14 s
      history.add(new Send("p", "a" + t, 0, t * second, t * second, true, t, null));
      long ack = t < 10 ? t * second + second / 2 : (t + 4) * second;
      history.add(new Send("p", "b" + t, 1, t * second, ack, true, t, null));
    }
    history.add(new Fault("KILL_BROKER", "b2", 20 * second, 21 * second));
    // and from 30 s on, with a send at 35 s, partition 0 acknowledges nothing more
    history.add(new Fault("PAUSE_BROKER", "b3", 30 * second, 31 * second));
    history.add(new Send("p", "late", 1, 35 * second, 35 * second, true, 99, null));

    assertThat(Unavailability.byKind(history, 2))
        .containsExactly(
            Map.entry("KILL_BROKER", java.util.List.of(4.0, 1.0)),
            Map.entry("PAUSE_BROKER", java.util.List.of(5.0)));
    assertThat(Unavailability.report(history, 2))
        .contains("KILL_BROKER            n=2 median   1.0 max   4.0")
        .contains("PAUSE_BROKER           n=1 median   5.0 max   5.0");
  }

  @Test
  void aRunThatFailsMidwayStillWritesItsHistory(@TempDir Path dir) {
    Path file = dir.resolve("history.json");
    assertThatThrownBy(
            () ->
                history.writtenAfter(
                    file,
                    () -> {
                      cleanRun();
                      throw new IllegalStateException("an in-sync timeout, say");
                    }))
        .hasMessage("an in-sync timeout, say");
    assertThat(file).content().contains("\"type\":\"Send\"", "\"value\":\"a\"");
  }

  @Test
  void theHistoryIsWrittenAsJson(@TempDir Path dir) throws Exception {
    cleanRun();
    history.write(dir.resolve("history.json"));

    assertThat(Files.readString(dir.resolve("history.json")))
        .startsWith("[{")
        .contains(
            "\"type\":\"Send\"", "\"value\":\"a\"", "\"type\":\"Read\"", "\"reader\":\"final\"");
  }
}
