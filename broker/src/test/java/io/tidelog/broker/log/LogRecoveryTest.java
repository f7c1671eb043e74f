package io.tidelog.broker.log;

import static io.tidelog.broker.log.TestBatches.batch;
import static io.tidelog.broker.log.TestBatches.offsets;
import static io.tidelog.broker.log.TestBatches.readAllValues;
import static io.tidelog.broker.log.TestBatches.values;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.tidelog.broker.log.PartitionLog.LoadState;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.CorruptRecordException;
import org.apache.kafka.common.record.FileRecords;
import org.apache.kafka.common.record.RecordBatch;
import org.apache.kafka.common.utils.MockTime;
import org.apache.kafka.common.utils.Utils;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Recovery after a crash, and corruption found on disk. */
class LogRecoveryTest {
  private static final long T0 = 1_700_000_000_000L;
  private static final LogConfig SMALL_SEGMENTS = LogConfig.parse(Map.of("segment.bytes", "600"));

  @TempDir Path logDir;
  private final MockTime time = new MockTime(0, T0, 0);
  private final LogServices services = new LogServices(time, Runnable::run, (dir, e) -> {});

  /** Appends {@code count} one-record batches and abandons the log as a killed process would. */
  /** A log holding {@code count} one-record batches "v0", "v1", ... over several segments. */
  private PartitionLog writeBatches(int count) throws IOException {
    PartitionLog log =
        PartitionLog.open(logDir.resolve("t-0"), SMALL_SEGMENTS, LoadState.NEW, services);
    for (int i = 0; i < count; i++) {
      log.append(batch(T0, "v" + i), 0);
    }
    return log;
  }

  /** Abandons the log as a killed process would: nothing flushed, no checkpoint. */
  private Path writeAndCrash(int count) throws IOException {
    PartitionLog log = writeBatches(count);
    log.markOffline();
    return log.dir();
  }

  private Path writeAndClose(int count) throws IOException {
    try (PartitionLog log = writeBatches(count)) {
      return log.dir();
    }
  }

  private PartitionLog reopenAfterCrash(Path dir) throws IOException {
    return PartitionLog.open(dir, SMALL_SEGMENTS, new LoadState(0, 0, false), services);
  }

  private static Path activeSegment(Path dir) throws IOException {
    try (var files = Files.list(dir)) {
      return files
          .filter(f -> f.toString().endsWith(".log"))
          .sorted()
          .reduce((a, b) -> b)
          .orElseThrow();
    }
  }

  private static void writeAt(Path file, long position, byte[] bytes) throws IOException {
    try (FileChannel channel = FileChannel.open(file, StandardOpenOption.WRITE)) {
      channel.write(ByteBuffer.wrap(bytes), position);
    }
  }

  private static List<String> expectedPrefix(int count) {
    List<String> values = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      values.add("v" + i);
    }
    return values;
  }

  @ParameterizedTest
  @ValueSource(ints = {1, 7, 33, 200})
  void garbageAfterTheLastBatchIsTruncated(int garbageBytes) throws IOException {
    // Given 20 batches and random garbage appended to the active segment; when reopened after a
    // crash; then the garbage is gone, all 20 batches remain and appends carry on at offset 20.
    Path dir = writeAndCrash(20);
    Path active = activeSegment(dir);
    long validSize = Files.size(active);
    byte[] garbage = new byte[garbageBytes];
    new Random(garbageBytes).nextBytes(garbage);
    writeAt(active, validSize, garbage);

    PartitionLog log = reopenAfterCrash(dir);

    assertThat(Files.size(active)).isEqualTo(validSize);
    assertThat(readAllValues(log)).isEqualTo(expectedPrefix(20));
    assertThat(log.append(batch(T0, "v20"), 0).firstOffset()).isEqualTo(20);
    log.close();
  }

  @Test
  void bitFlipsInTheTailAreTruncatedBackToTheLastGoodBatch() throws IOException {
    // Given 50 rounds of a random bit flipped in one of the last batches of the active segment;
    // then recovery keeps exactly the batches before the damaged one, each passing its CRC.
    Random random = new Random(11);
    for (int round = 0; round < 50; round++) {
      Path dir = writeAndCrash(30);
      Path active = activeSegment(dir);
      List<Integer> starts = batchStarts(active);
      int victim = starts.size() - 1 - random.nextInt(Math.min(3, starts.size()));
      int batchStart = starts.get(victim);
      int batchEnd = victim + 1 < starts.size() ? starts.get(victim + 1) : (int) Files.size(active);
      // Anywhere but the base offset (bytes 0-7) and the partition leader epoch (12-15): the v2
      // format leaves them out of the CRC so that the broker can stamp them, as Kafka does.
      int position;
      do {
        position = batchStart + random.nextInt(batchEnd - batchStart);
      } while (position - batchStart < 8
          || position - batchStart >= 12 && position - batchStart < 16);
      flipBit(active, position, random.nextInt(8));
      long firstOffsetOfVictim = firstOffsetOfSegment(active) + victim;

      PartitionLog log = reopenAfterCrash(dir);

      assertThat(log.logEndOffset()).as("round %d", round).isLessThanOrEqualTo(firstOffsetOfVictim);
      assertThat(readAllValues(log)).isEqualTo(expectedPrefix((int) log.logEndOffset()));
      assertThat(Files.size(active)).isEqualTo(batchStart);
      log.truncateFullyAndStartAt(0);
      log.close();
      Utils.delete(dir.toFile());
    }
  }

  @Test
  void aCorruptBatchInAnOlderSegmentFailsOnlyItsReads() throws IOException {
    // Given two partitions, closed cleanly, and a payload byte flipped in the first segment of one
    LogConfig config = SMALL_SEGMENTS;
    List<Path> dirs = List.of(logDir.resolve("d"));
    TopicPartition damaged = new TopicPartition("t", 0);
    TopicPartition healthy = new TopicPartition("t", 1);
    try (LogManager manager = LogManager.start(dirs, topic -> config, 1, time)) {
      for (int i = 0; i < 30; i++) {
        manager.getOrCreateLog(damaged, config).append(batch(T0, "v" + i), 0);
        manager.getOrCreateLog(healthy, config).append(batch(T0, "v" + i), 0);
      }
    }
    Path firstSegment = logDir.resolve("d/t-0/00000000000000000000.log");
    List<Integer> starts = batchStarts(firstSegment);
    flipBit(firstSegment, starts.get(2) + 40, 3);

    // When the broker restarts (a clean shutdown: nothing is recovered) and reads
    try (LogManager manager = LogManager.start(dirs, topic -> config, 1, time)) {
      PartitionLog log = manager.getLog(damaged).orElseThrow();

      // Then the read that covers the damaged batch fails with a corruption error
      CorruptRecordException e =
          assertThrows(CorruptRecordException.class, () -> log.read(2, 100_000, Long.MAX_VALUE));
      assertThat(e.getMessage())
          .contains("00000000000000000000.log")
          .contains("position " + starts.get(2));
      assertThrows(CorruptRecordException.class, () -> log.read(0, 100_000, Long.MAX_VALUE));
      // and everything else keeps working: the batches before it, later segments, other partitions
      assertThat(values(log.read(0, 1, Long.MAX_VALUE).records())).containsExactly("v0");
      assertThat(values(log.read(29, 100_000, Long.MAX_VALUE).records())).containsExactly("v29");
      assertThat(readAllValues(manager.getLog(healthy).orElseThrow()))
          .isEqualTo(expectedPrefix(30));
      assertThat(log.append(batch(T0, "v30"), 0).firstOffset()).isEqualTo(30);
      assertThat(manager.offlineDirs()).isEmpty();
    }
  }

  @Test
  void rebuildingTheIndexOfADamagedFlushedSegmentKeepsTheSegmentsAfterIt() throws IOException {
    // Given a cleanly closed log whose first segment lost its index and has a corrupt batch
    Path dir = writeAndClose(30);
    Path firstSegment = dir.resolve("00000000000000000000.log");
    flipBit(firstSegment, batchStarts(firstSegment).get(5) + 40, 1);
    Files.delete(dir.resolve("00000000000000000000.index"));

    // When it is loaded, the rebuild truncates that segment at the damage
    try (PartitionLog log =
        PartitionLog.open(dir, SMALL_SEGMENTS, new LoadState(30, 0, true), services)) {
      // Then the later segments, flushed and intact, are all still there
      assertThat(log.logEndOffset()).isEqualTo(30);
      assertThat(values(log.read(0, 100_000, Long.MAX_VALUE).records()))
          .containsExactly("v0", "v1", "v2", "v3", "v4");
      assertThat(values(log.read(29, 100_000, Long.MAX_VALUE).records())).containsExactly("v29");
      assertThat(values(log.read(8, 100_000, Long.MAX_VALUE).records())).startsWith("v8");
    }
  }

  @Test
  void aBatchLengthRunningPastTheFileIsCorruptionNotTheEnd() throws IOException {
    // Given a clean log whose first segment has a batch length overwritten with a huge value
    Path dir = writeAndClose(20);
    Path firstSegment = dir.resolve("00000000000000000000.log");
    writeAt(
        firstSegment,
        batchStarts(firstSegment).get(1) + 8,
        ByteBuffer.allocate(4).putInt(1 << 20).array());

    try (PartitionLog log =
        PartitionLog.open(dir, SMALL_SEGMENTS, new LoadState(20, 0, true), services)) {
      // Then reading from it does not skip silently to the next segment
      assertThrows(CorruptRecordException.class, () -> log.read(1, 100_000, Long.MAX_VALUE));
      assertThat(offsets(log.read(0, 1, Long.MAX_VALUE).records())).containsExactly(0L);
    }
  }

  @Test
  void recoveryAfterACrashRebuildsIndexesAndKeepsEveryAppend() throws IOException {
    // Given 100 appends over many segments and a crash; then all are there and findable.
    Path dir = writeAndCrash(100);

    PartitionLog log = reopenAfterCrash(dir);

    assertThat(log.logEndOffset()).isEqualTo(100);
    assertThat(log.recoveryPoint()).isEqualTo(100);
    for (long offset = 0; offset < 100; offset += 7) {
      assertThat(offsets(log.read(offset, 1, Long.MAX_VALUE).records())).containsExactly(offset);
    }
    log.close();
  }

  static List<Integer> batchStarts(Path segment) throws IOException {
    List<Integer> starts = new ArrayList<>();
    try (FileRecords records = FileRecords.open(segment.toFile(), false)) {
      for (RecordBatch batch : records.batches()) {
        starts.add(
            ((org.apache.kafka.common.record.FileLogInputStream.FileChannelRecordBatch) batch)
                .position());
      }
    }
    return starts;
  }

  private static long firstOffsetOfSegment(Path segment) {
    String name = segment.getFileName().toString();
    return Long.parseLong(name.substring(0, name.indexOf('.')));
  }

  private static void flipBit(Path file, long position, int bit) throws IOException {
    try (FileChannel channel =
        FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
      ByteBuffer one = ByteBuffer.allocate(1);
      channel.read(one, position);
      one.put(0, (byte) (one.get(0) ^ (1 << bit)));
      channel.write(one.rewind(), position);
    }
  }
}
