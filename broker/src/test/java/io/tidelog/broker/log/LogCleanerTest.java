package io.tidelog.broker.log;

import static org.assertj.core.api.Assertions.assertThat;

import io.tidelog.broker.log.PartitionLog.LoadState;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.ControlRecordType;
import org.apache.kafka.common.record.EndTransactionMarker;
import org.apache.kafka.common.record.FileRecords;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.Record;
import org.apache.kafka.common.record.RecordBatch;
import org.apache.kafka.common.record.SimpleRecord;
import org.apache.kafka.common.utils.MockTime;
import org.apache.kafka.storage.internals.log.AbortedTxn;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Compaction of a real log on disk: plan, clean and swap, then read back. */
class LogCleanerTest {
  private static final long T0 = 1_700_000_000_000L;
  private static final long DAY_MS = 24 * 60 * 60 * 1000L;

  /**
   * One-batch segments, a pass whenever anything is dirty, and a minute of delete retention: for
   * tests that follow what each pass keeps.
   */
  private static final Map<String, String> PASS_BY_PASS =
      Map.of(
          "segment.bytes", "100",
          "delete.retention.ms", "60000",
          "min.cleanable.dirty.ratio", "0.01");

  @TempDir Path logDir;
  private final MockTime time = new MockTime(0, T0, 0);
  private final LogServices services = new LogServices(time, Runnable::run, (dir, e) -> {});
  private final LogCleaner cleaner = new LogCleaner(1024 * 1024, Double.MAX_VALUE, time);
  private final List<PartitionLog> opened = new ArrayList<>();

  @AfterEach
  void close() throws Exception {
    for (PartitionLog log : opened) {
      log.close();
    }
    cleaner.close();
  }

  private PartitionLog open(Map<String, String> configs) throws IOException {
    return open(configs, LoadState.NEW);
  }

  private PartitionLog open(Map<String, String> configs, LoadState state) throws IOException {
    Map<String, String> all = new LinkedHashMap<>(Map.of("cleanup.policy", "compact"));
    all.putAll(configs);
    PartitionLog log =
        PartitionLog.open(logDir.resolve("prices-0"), LogConfig.parse(all), state, services);
    opened.add(log);
    return log;
  }

  /** One batch per call: {@code "k=v"} writes v under k, {@code "k="} a tombstone for k. */
  private static MemoryRecords keyed(long timestampMs, String... entries) {
    SimpleRecord[] records = new SimpleRecord[entries.length];
    for (int i = 0; i < entries.length; i++) {
      String[] kv = entries[i].split("=", -1);
      records[i] =
          new SimpleRecord(
              timestampMs,
              kv[0].getBytes(StandardCharsets.UTF_8),
              kv[1].isEmpty() ? null : kv[1].getBytes(StandardCharsets.UTF_8));
    }
    return MemoryRecords.withRecords(Compression.NONE, records);
  }

  /** Every record left, as {@code offset:key=value} ({@code key=} for a tombstone). */
  private static List<String> contents(PartitionLog log) {
    List<String> all = new ArrayList<>();
    long offset = log.logStartOffset();
    while (offset < log.logEndOffset()) {
      LogReadInfo read = log.read(offset, Integer.MAX_VALUE, Long.MAX_VALUE);
      for (RecordBatch batch : read.records().batches()) {
        if (batch.isControlBatch()) {
          all.add(batch.baseOffset() + ":marker");
          continue;
        }
        for (Record r : batch) {
          all.add(
              r.offset()
                  + ":"
                  + StandardCharsets.UTF_8.decode(r.key())
                  + "="
                  + (r.hasValue() ? StandardCharsets.UTF_8.decode(r.value()) : ""));
        }
      }
      offset = read.nextOffset();
    }
    return all;
  }

  /** One whole pass, as the broker runs it; false when the log was not due. */
  private boolean cleanOnce(PartitionLog log) throws Exception {
    Optional<LogCleaner.Task> task = cleaner.plan(log, time.milliseconds());
    if (task.isEmpty()) {
      return false;
    }
    cleaner.swap(task.get(), cleaner.clean(task.get()).get());
    return true;
  }

  private static MemoryRecords keyedInTransaction(long producerId, int sequence, String entry) {
    String[] kv = entry.split("=", -1);
    return MemoryRecords.withTransactionalRecords(
        Compression.NONE,
        producerId,
        (short) 0,
        sequence,
        new SimpleRecord(
            T0, kv[0].getBytes(StandardCharsets.UTF_8), kv[1].getBytes(StandardCharsets.UTF_8)));
  }

  @Test
  void anAbortedTransactionsRecordsGoAndSupersedeNothing() throws Exception {
    PartitionLog log = open(Map.of("segment.bytes", "100"));
    log.append(keyed(T0, "a=1"), 0); // 0
    log.append(keyedInTransaction(7, 0, "a=2"), 0); // 1, aborted below
    log.appendMarker(7, (short) 0, new EndTransactionMarker(ControlRecordType.ABORT, 0), 0);
    log.append(keyed(T0, "b=1"), 0); // 3
    log.append(keyed(T0, "b=2"), 0); // 4
    log.append(keyed(T0, "c=1"), 0); // 5, active
    log.updateHighWatermark(6);

    assertThat(cleanOnce(log)).isTrue();

    // a=1 is still a's committed value: the aborted a=2 did not take its place, and went; its
    // abort marker stays, as the transaction index names it
    assertThat(contents(log)).containsExactly("0:a=1", "2:marker", "4:b=2", "5:c=1");
    assertThat(log.abortedTransactions(0, log.logEndOffset())).hasSize(1);
  }

  @Test
  void aCommitMarkerGoesAfterItsTransactionsRecordsAndTheDeleteRetention() throws Exception {
    PartitionLog log = open(PASS_BY_PASS);
    EndTransactionMarker commit = new EndTransactionMarker(ControlRecordType.COMMIT, 0);
    log.append(keyedInTransaction(8, 0, "b=1"), 0); // 0
    log.appendMarker(8, (short) 0, commit, 0); // 1
    log.append(keyedInTransaction(8, 1, "b=2"), 0); // 2: supersedes b=1, 8's last batch
    log.appendMarker(8, (short) 0, commit, 0); // 3
    log.append(keyed(T0, "c=1"), 0); // 4
    log.append(keyed(T0, "d=1"), 0); // 5, active
    log.updateHighWatermark(6);

    // The first pass removes b=1 but met its batch: its marker stays
    assertThat(cleanOnce(log)).isTrue();
    assertThat(contents(log)).containsExactly("1:marker", "2:b=2", "3:marker", "4:c=1", "5:d=1");

    // The next finds no record of that transaction: the marker gets a delete horizon and stays
    log.append(keyed(T0, "c=2"), 0); // 6
    log.append(keyed(T0, "e=1"), 0); // 7, active
    log.updateHighWatermark(8);
    assertThat(cleanOnce(log)).isTrue();
    assertThat(contents(log)).startsWith("1:marker", "2:b=2", "3:marker");

    // and goes in the pass after delete.retention.ms; the marker of 8's last batch stays
    time.sleep(60_001);
    assertThat(cleanOnce(log)).isTrue();
    assertThat(contents(log)).startsWith("2:b=2", "3:marker");
    assertThat(log.lastStableOffset()).isEqualTo(8);
  }

  @Test
  void anAbortMarkerGoesWithItsIndexEntryOnceItsRecordsAreGone() throws Exception {
    PartitionLog log = open(PASS_BY_PASS);
    log.append(keyedInTransaction(7, 0, "a=1"), 0); // 0, aborted
    log.appendMarker(7, (short) 0, new EndTransactionMarker(ControlRecordType.ABORT, 0), 0); // 1
    log.append(keyed(T0, "b=1"), 0); // 2
    log.append(keyedInTransaction(7, 1, "c=1"), 0); // 3: 7's next transaction, its last batch
    log.appendMarker(7, (short) 0, new EndTransactionMarker(ControlRecordType.COMMIT, 0), 0); // 4
    log.append(keyed(T0, "d=1"), 0); // 5, active
    log.updateHighWatermark(6);

    // The aborted record goes; its marker stays, named by the index, since the pass met it
    assertThat(cleanOnce(log)).isTrue();
    assertThat(contents(log)).containsExactly("1:marker", "2:b=1", "3:c=1", "4:marker", "5:d=1");
    assertThat(log.abortedTransactions(0, 6))
        .extracting(AbortedTxn::lastOffset)
        .containsExactly(1L);

    // The next pass meets no record of it: the index forgets it, the marker waits for its horizon
    log.append(keyed(T0, "b=2"), 0); // 6
    log.append(keyed(T0, "e=1"), 0); // 7, active
    log.updateHighWatermark(8);
    assertThat(cleanOnce(log)).isTrue();
    assertThat(contents(log)).startsWith("1:marker", "3:c=1", "4:marker");
    assertThat(log.abortedTransactions(0, 8)).isEmpty();

    // and goes after delete.retention.ms; what is left reads the same after a restart
    time.sleep(60_001);
    assertThat(cleanOnce(log)).isTrue();
    assertThat(contents(log)).startsWith("3:c=1", "4:marker", "5:d=1", "6:b=2");
    log.close();
    opened.remove(log);
    PartitionLog reopened = open(PASS_BY_PASS, new LoadState(8, 0, true));
    reopened.updateHighWatermark(8);
    assertThat(reopened.lastStableOffset()).isEqualTo(8);
    assertThat(reopened.abortedTransactions(0, 8)).isEmpty();
    assertThat(contents(reopened)).startsWith("3:c=1", "4:marker", "5:d=1", "6:b=2");
  }

  @Test
  void nothingFromAnUndecidedTransactionOnIsCleaned() throws Exception {
    PartitionLog log = open(Map.of("segment.bytes", "100"));
    log.append(keyed(T0, "a=1"), 0); // 0
    log.append(keyedInTransaction(7, 0, "a=2"), 0); // 1: open
    log.append(keyed(T0, "a=3"), 0); // 2
    log.append(keyed(T0, "a=4"), 0); // 3
    log.append(keyed(T0, "a=5"), 0); // 4, active
    log.updateHighWatermark(5);
    assertThat(log.numberOfSegments()).isGreaterThan(3);

    cleanOnce(log);

    // whether 7 commits or aborts decides a's value at 1: nothing from there on may go yet
    assertThat(contents(log)).containsExactly("0:a=1", "1:a=2", "2:a=3", "3:a=4", "4:a=5");
  }

  @Test
  void keepsTheLatestRecordOfEachKeyAtItsOffsetAndNeverTouchesTheActiveSegment() throws Exception {
    // Given overwrites and a tombstone over several one-batch segments, then an active segment
    PartitionLog log = open(Map.of("segment.bytes", "100"));
    log.append(keyed(T0, "a=1", "b=1"), 0); // 0, 1
    log.append(keyed(T0, "a=2", "c=1"), 0); // 2, 3
    log.append(keyed(T0, "b="), 0); // 4: b deleted
    log.append(keyed(T0, "a=3"), 0); // 5
    log.append(keyed(T0, "a=4"), 0); // 6, in the active segment
    assertThat(log.numberOfSegments()).isGreaterThan(2);

    // When the cleaner runs
    assertThat(cleanOnce(log)).isTrue();

    // Then each key keeps only its latest record, at its offset; the tombstone stays for now
    // (delete.retention.ms), and the active segment still has a=4 although a=3 is older
    assertThat(contents(log)).containsExactly("3:c=1", "4:b=", "5:a=3", "6:a=4");
    assertThat(log.logEndOffset()).isEqualTo(7);
    assertThat(log.firstDirtyOffset()).isEqualTo(6);
    // and consumers fetching from any offset in a gap get the next record
    assertThat(TestBatches.offsets(log.read(1, Integer.MAX_VALUE, Long.MAX_VALUE).records()))
        .startsWith(3L);
  }

  @Test
  void aFollowerCopiesACleanedLeaderLogAcrossItsGaps() throws Exception {
    // Given a leader log whose cleaning left gaps, from offset 0 on
    PartitionLog leader = open(Map.of("segment.bytes", "100"));
    leader.append(keyed(T0, "a=1"), 0);
    leader.append(keyed(T0, "b=1"), 0);
    leader.append(keyed(T0, "a=2"), 0);
    leader.append(keyed(T0, "c=1"), 0);
    assertThat(cleanOnce(leader)).isTrue();
    PartitionLog follower =
        PartitionLog.open(
            logDir.resolve("follower-0"),
            LogConfig.parse(Map.of("cleanup.policy", "compact", "segment.bytes", "100")),
            LoadState.NEW,
            services);
    opened.add(follower);

    // When the follower appends what it fetches, batch by batch
    long offset = 0;
    while (offset < leader.logEndOffset()) {
      LogReadInfo read = leader.read(offset, Integer.MAX_VALUE, Long.MAX_VALUE);
      java.nio.ByteBuffer bytes = java.nio.ByteBuffer.allocate(read.records().sizeInBytes());
      ((FileRecords) read.records()).readInto(bytes, 0);
      if (bytes.hasRemaining()) {
        follower.appendAsFollower(MemoryRecords.readableRecords(bytes));
      }
      offset = read.nextOffset();
    }

    // Then it holds the same records at the same offsets
    assertThat(contents(follower)).isEqualTo(contents(leader)).startsWith("1:b=1");
    assertThat(follower.logEndOffset()).isEqualTo(leader.logEndOffset());
  }

  @Test
  void tombstonesGoOnceDeleteRetentionHasPassedSinceTheyWereFirstCleaned() throws Exception {
    // Given a key written then deleted, cleaned once
    PartitionLog log = open(PASS_BY_PASS);
    log.append(keyed(T0, "a=1"), 0);
    log.append(keyed(T0, "a="), 0);
    log.append(keyed(T0, "b=1"), 0);
    log.append(keyed(T0, "c=1"), 0);
    assertThat(cleanOnce(log)).isTrue();
    assertThat(contents(log)).containsExactly("1:a=", "2:b=1", "3:c=1");

    // When delete.retention.ms passes and new writes make the log dirty again
    time.sleep(60_001);
    log.append(keyed(time.milliseconds(), "b=2"), 0);
    log.append(keyed(time.milliseconds(), "c=2"), 0);
    log.append(keyed(time.milliseconds(), "d=1"), 0);
    assertThat(cleanOnce(log)).isTrue();

    // Then the tombstone is gone with what it deleted
    assertThat(contents(log)).containsExactly("4:b=2", "5:c=2", "6:d=1");
  }

  @Test
  void aDirtyRecordOlderThanTheMaxCompactionLagIsCleanedWhateverTheRatio() throws Exception {
    // Given a log cleaned once, then one dirty segment in five, below a ratio of 0.9
    PartitionLog log =
        open(
            Map.of(
                "segment.bytes", "100",
                "min.cleanable.dirty.ratio", "0.9",
                "max.compaction.lag.ms", String.valueOf(DAY_MS)));
    for (int i = 0; i < 4; i++) {
      log.append(keyed(T0, "k" + i + "=v"), 0);
    }
    assertThat(cleanOnce(log)).isTrue();
    log.append(keyed(T0, "k0=w"), 0);
    log.append(keyed(T0, "x=1"), 0);
    assertThat(cleanOnce(log)).as("dirty for less than the lag").isFalse();

    // When the dirty record is older than max.compaction.lag.ms, it is cleaned
    time.sleep(DAY_MS + 1);
    assertThat(cleanOnce(log)).isTrue();
    assertThat(contents(log)).doesNotContain("0:k0=v");
  }

  @Test
  void theActiveSegmentOfACompactedTopicRollsWithinTheMaxCompactionLag() throws Exception {
    long hourMs = 3_600_000L;
    PartitionLog log = open(Map.of("max.compaction.lag.ms", String.valueOf(hourMs)));
    log.append(keyed(T0, "a=1"), 0);
    time.sleep(hourMs);
    log.append(keyed(T0 + hourMs, "a=2"), 0);
    assertThat(log.numberOfSegments()).as("within the lag: one segment").isEqualTo(1);
    time.sleep(1);
    log.append(keyed(T0 + hourMs + 1, "a=3"), 0);
    assertThat(log.numberOfSegments()).as("past the lag, though segment.ms is a week").isEqualTo(2);
  }

  @Test
  void honoursTheDirtyRatioAndTheCompactionLag() throws Exception {
    // Given a log cleaned once, then one more dirty segment out of four
    PartitionLog log = open(Map.of("segment.bytes", "100", "min.cleanable.dirty.ratio", "0.5"));
    for (int i = 0; i < 4; i++) {
      log.append(keyed(T0, "k" + i + "=v"), 0);
    }
    assertThat(cleanOnce(log)).isTrue();
    log.append(keyed(T0, "k0=w"), 0);
    log.append(keyed(T0, "x=1"), 0);

    // Then a dirty ratio of 1/4 is below 0.5: no pass
    assertThat(cleanOnce(log)).isFalse();

    // And with min.compaction.lag.ms, records younger than the lag are never cleaned
    PartitionLog lagging =
        PartitionLog.open(
            logDir.resolve("lagging-0"),
            LogConfig.parse(
                Map.of(
                    "cleanup.policy", "compact",
                    "segment.bytes", "100",
                    "min.compaction.lag.ms", String.valueOf(DAY_MS))),
            LoadState.NEW,
            services);
    opened.add(lagging);
    lagging.append(keyed(time.milliseconds(), "a=1"), 0);
    lagging.append(keyed(time.milliseconds(), "a=2"), 0);
    lagging.append(keyed(time.milliseconds(), "a=3"), 0);
    assertThat(cleanOnce(lagging)).isFalse();
    time.sleep(DAY_MS);
    assertThat(cleanOnce(lagging)).isTrue();
    assertThat(contents(lagging)).containsExactly("1:a=2", "2:a=3");
  }

  @Test
  void aSmallDedupeBufferCleansInSeveralPassesWithTheSameResult() throws Exception {
    // Given 3000 keys written twice, and a map that holds fewer keys than the log has
    PartitionLog log = open(Map.of("segment.bytes", "20000", "min.cleanable.dirty.ratio", "0.01"));
    for (int round = 0; round < 2; round++) {
      for (int batch = 0; batch < 30; batch++) {
        String[] entries = new String[100];
        for (int i = 0; i < 100; i++) {
          entries[i] = "key-" + (batch * 100 + i) + "=round-" + round;
        }
        log.append(keyed(T0, entries), 0);
      }
    }
    log.append(keyed(T0, "last=1"), 0);
    String[] fillers = new String[100];
    java.util.Arrays.fill(fillers, "filler=x");
    for (int i = 0; i < 30; i++) {
      log.append(keyed(T0, fillers), 0); // rolls, so that round 1 is all cleanable
    }
    try (LogCleaner small = new LogCleaner(1024 * 1024 / 16, Double.MAX_VALUE, time)) {
      // When it cleans until nothing is due, at most 20 passes
      int passes = 0;
      while (passes < 20) {
        Optional<LogCleaner.Task> task = small.plan(log, time.milliseconds());
        if (task.isEmpty()) {
          break;
        }
        small.swap(task.get(), small.clean(task.get()).get());
        passes++;
      }

      // Then it took more than one pass, and only round 1 remains
      assertThat(passes).isGreaterThan(1);
    }
    List<String> left = contents(log).stream().filter(r -> !r.contains(":filler=")).toList();
    assertThat(left).hasSize(3001).allMatch(r -> r.endsWith("round-1") || r.endsWith("last=1"));
  }

  @Test
  void retentionDeletesOldSegmentsOnlyWhenThePolicyAlsoSaysDelete() throws Exception {
    // Given a compacted log and a compact,delete log, each with segments past retention.ms
    PartitionLog compacted = open(Map.of("segment.bytes", "100", "retention.ms", "1000"));
    PartitionLog both =
        PartitionLog.open(
            logDir.resolve("both-0"),
            LogConfig.parse(
                Map.of(
                    "cleanup.policy", "compact,delete",
                    "segment.bytes", "100",
                    "retention.ms", "1000")),
            LoadState.NEW,
            services);
    opened.add(both);
    for (PartitionLog log : List.of(compacted, both)) {
      log.append(keyed(T0, "a=1"), 0);
      log.append(keyed(T0, "b=1"), 0);
      log.append(keyed(T0, "c=1"), 0);
    }

    // When retention runs after retention.ms
    time.sleep(2000);
    compacted.deleteOldSegments();
    both.deleteOldSegments();

    // Then only compact,delete lost its old segments (never the active one)
    assertThat(contents(compacted)).containsExactly("0:a=1", "1:b=1", "2:c=1");
    assertThat(contents(both)).containsExactly("2:c=1");
  }

  @Test
  void cleaningIsThrottled() throws Exception {
    // Given about 20 KB of dirty segments and a cleaner limited to 10 KB/s
    PartitionLog log = open(Map.of("segment.bytes", "1000"));
    for (int i = 0; i < 300; i++) {
      log.append(keyed(T0, "k" + (i % 10) + "=v" + i), 0);
    }
    try (LogCleaner throttled = new LogCleaner(1024 * 1024, 10_000, time)) {
      LogCleaner.Task task = throttled.plan(log, time.milliseconds()).orElseThrow();
      long before = time.milliseconds();

      // When it cleans (the mock clock advances only by the throttle's waits)
      throttled.swap(task, throttled.clean(task).get());

      // Then reading the segments twice (map, then copy) took at least their size at 10 KB/s
      assertThat(time.milliseconds() - before).isGreaterThanOrEqualTo(2 * task.dirtyBytes / 10 - 1);
    }
  }

  @Test
  void theCheckpointAndAnUnfinishedPassSurviveARestart() throws Exception {
    // Given a cleaned log whose directory also holds a pass that did not finish
    Path dir = logDir.resolve("restart");
    LogManager manager =
        LogManager.start(
            List.of(dir),
            topic -> LogConfig.parse(Map.of("cleanup.policy", "compact", "segment.bytes", "100")),
            1,
            time);
    PartitionLog log =
        manager.getOrCreateLog(
            new org.apache.kafka.common.TopicPartition("prices", 0),
            org.apache.kafka.common.Uuid.randomUuid(),
            LogConfig.parse(Map.of("cleanup.policy", "compact", "segment.bytes", "100")));
    log.append(keyed(T0, "a=1"), 0);
    log.append(keyed(T0, "a=2"), 0);
    log.append(keyed(T0, "b=1"), 0);
    assertThat(cleanOnce(log)).isTrue();
    long checkpoint = log.firstDirtyOffset();
    Files.createDirectories(log.dir().resolve(LogCleaner.CLEANED_DIR));
    Files.writeString(log.dir().resolve(LogCleaner.CLEANED_DIR + "/00000000000000000000.log"), "x");
    manager.close();

    // When the broker restarts
    LogManager again =
        LogManager.start(
            List.of(dir),
            topic -> LogConfig.parse(Map.of("cleanup.policy", "compact", "segment.bytes", "100")),
            1,
            time);
    try {
      PartitionLog reloaded =
          again.getLog(new org.apache.kafka.common.TopicPartition("prices", 0)).orElseThrow();

      // Then the cleaner resumes where it stopped, the leftover is gone, and the data is intact
      assertThat(reloaded.firstDirtyOffset()).isEqualTo(checkpoint).isPositive();
      assertThat(reloaded.dir().resolve(LogCleaner.CLEANED_DIR)).doesNotExist();
      assertThat(contents(reloaded)).containsExactly("1:a=2", "2:b=1");
    } finally {
      again.close();
    }
  }
}
