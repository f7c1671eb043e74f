package io.tidelog.broker.log;

import static io.tidelog.broker.log.TestBatches.batch;
import static io.tidelog.broker.log.TestBatches.values;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.KafkaStorageException;
import org.apache.kafka.common.utils.MockTime;
import org.apache.kafka.common.utils.Utils;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class LogManagerTest {
  private static final long T0 = 1_700_000_000_000L;
  private static final LogConfig CONFIG = LogConfig.parse(Map.of("segment.bytes", "400"));

  @TempDir Path root;
  private final MockTime time = new MockTime(0, T0, 0);

  private List<Path> dirs() {
    return List.of(root.resolve("a"), root.resolve("b"));
  }

  private LogManager start() throws IOException {
    return LogManager.start(dirs(), topic -> CONFIG, 2, time);
  }

  private static TopicPartition tp(int partition) {
    return new TopicPartition("events", partition);
  }

  @Test
  void logsSpreadOverDirectoriesAndSurviveACleanRestart() throws IOException {
    // Given 6 partitions with 10 records each; when the manager closes and starts again
    try (LogManager manager = start()) {
      for (int p = 0; p < 6; p++) {
        PartitionLog log = manager.getOrCreateLog(tp(p), CONFIG);
        for (int i = 0; i < 10; i++) {
          log.append(batch(T0, p + ":" + i), 0);
        }
      }
      assertThat(manager.logs().values())
          .filteredOn(log -> log.dir().startsWith(root.resolve("a")))
          .hasSize(3);
    }

    // Then each directory holds Kafka's checkpoints and the clean-shutdown marker
    assertThat(Files.readAllLines(root.resolve("a/recovery-point-offset-checkpoint")))
        .startsWith("0", "3")
        .contains("events 0 10");
    assertThat(Files.readAllLines(root.resolve("b/log-start-offset-checkpoint")))
        .startsWith("0", "3");
    assertThat(root.resolve("a/.kafka_cleanshutdown")).exists();

    try (LogManager manager = start()) {
      // and every log is back, the marker is consumed, and reads return what was written
      assertThat(manager.logs()).hasSize(6);
      assertThat(root.resolve("a/.kafka_cleanshutdown")).doesNotExist();
      PartitionLog log = manager.getLog(tp(4)).orElseThrow();
      assertThat(log.logEndOffset()).isEqualTo(10);
      assertThat(values(log.read(9, 1000, Long.MAX_VALUE).records())).containsExactly("4:9");
    }
  }

  @Test
  void aDirectoryThatFailsToLoadGoesOfflineAndTheOthersServe() throws IOException {
    // Given logs in both directories, and a segment in "b" that can no longer be opened
    try (LogManager manager = start()) {
      for (int p = 0; p < 4; p++) {
        manager.getOrCreateLog(tp(p), CONFIG).append(batch(T0, "x"), 0);
      }
    }
    Path broken = root.resolve("b/events-1/00000000000000000000.log");
    Files.delete(broken);
    Files.createDirectory(broken);

    // When the manager starts
    try (LogManager manager = start()) {
      // Then "b" is offline, "a" serves, and new partitions go to "a"
      assertThat(manager.offlineDirs()).containsExactly(root.resolve("b"));
      assertThat(manager.liveDirs()).containsExactly(root.resolve("a"));
      assertThat(values(manager.getLog(tp(0)).orElseThrow().read(0, 100, Long.MAX_VALUE).records()))
          .containsExactly("x");
      assertThat(manager.getLog(tp(1))).isEmpty();
      assertThat(manager.getOrCreateLog(tp(9), CONFIG).dir().getParent())
          .isEqualTo(root.resolve("a"));
    }
  }

  @Test
  void anIoErrorAtRunTimeTakesOnlyThatDirectoryOffline() throws IOException {
    // Given partitions in both directories
    try (LogManager manager = start()) {
      PartitionLog inA = manager.getOrCreateLog(tp(0), CONFIG);
      PartitionLog inB = manager.getOrCreateLog(tp(1), CONFIG);
      manager.getOrCreateLog(tp(2), CONFIG);
      PartitionLog alsoInB = manager.getOrCreateLog(tp(3), CONFIG);
      assertThat(inB.dir().getParent()).isEqualTo(root.resolve("b"));
      assertThat(alsoInB.dir().getParent()).isEqualTo(root.resolve("b"));
      // When the partition directory vanishes under the broker and the next roll cannot create
      // files
      Utils.delete(inB.dir().toFile());
      KafkaStorageException failure =
          assertThrows(
              KafkaStorageException.class,
              () -> {
                for (int i = 0; i < 20; i++) {
                  inB.append(batch(T0, "y".repeat(100)), 0);
                }
              });

      // Then "b" is offline and its partitions fail with a storage error, while "a" serves on
      assertThat(failure.getMessage()).contains("events-1");
      assertThat(manager.offlineDirs()).containsExactly(root.resolve("b"));
      assertThrows(KafkaStorageException.class, () -> alsoInB.read(0, 100, Long.MAX_VALUE));
      assertThrows(KafkaStorageException.class, () -> alsoInB.append(batch(T0, "z"), 0));
      for (int i = 0; i < 20; i++) {
        inA.append(batch(T0, "y".repeat(100)), 0);
      }
      assertThat(inA.logEndOffset()).isEqualTo(20);
      assertThat(manager.getOrCreateLog(tp(7), CONFIG).dir().getParent())
          .isEqualTo(root.resolve("a"));
    }
  }

  @Test
  void aSecondManagerCannotTakeLockedDirectories() throws IOException {
    try (LogManager first = start()) {
      IOException e = assertThrows(IOException.class, this::start);
      assertThat(e.getMessage()).contains("none of the log directories");
      assertThat(first.liveDirs()).hasSize(2);
    }
  }

  @Test
  void highWatermarksSurviveARestartWithinTheLog() throws IOException {
    try (LogManager manager = start()) {
      PartitionLog log = manager.getOrCreateLog(tp(0), CONFIG);
      for (int i = 0; i < 10; i++) {
        log.append(batch(T0, "v" + i), 0);
      }
      log.updateHighWatermark(7);
      manager.getOrCreateLog(tp(1), CONFIG).updateHighWatermark(100);
    }
    assertThat(Files.readAllLines(root.resolve("a/replication-offset-checkpoint")))
        .contains("events 0 7");

    try (LogManager manager = start()) {
      assertThat(manager.getLog(tp(0)).orElseThrow().highWatermark()).isEqualTo(7);
      // Never past the log's end
      assertThat(manager.getLog(tp(1)).orElseThrow().highWatermark()).isZero();
    }
  }

  @Test
  void deleteLogRemovesItsDirectory() throws IOException {
    try (LogManager manager = start()) {
      PartitionLog log = manager.getOrCreateLog(tp(0), CONFIG);
      log.append(batch(T0, "x"), 0);

      manager.deleteLog(tp(0));

      assertThat(log.dir()).doesNotExist();
      assertThat(manager.getLog(tp(0))).isEmpty();
    }
  }

  @Test
  void aLogLeftByAnEarlierTopicOfTheSameNameIsDeletedNotAdopted() throws IOException {
    Uuid first = Uuid.randomUuid();
    try (LogManager manager = start()) {
      manager.getOrCreateLog(tp(0), first, CONFIG).append(batch(T0, "old"), 0);
      assertThat(manager.getOrCreateLog(tp(0), first, CONFIG).logEndOffset()).isEqualTo(1);
    }

    // The topic is deleted and created again while this broker is down
    Uuid second = Uuid.randomUuid();
    try (LogManager manager = start()) {
      PartitionLog log = manager.getOrCreateLog(tp(0), second, CONFIG);

      assertThat(log.logEndOffset()).isZero();
      log.append(batch(T0, "new"), 0);
    }
    try (LogManager manager = start()) {
      PartitionLog log = manager.getOrCreateLog(tp(0), second, CONFIG);
      assertThat(values(log.read(0, 1000, Long.MAX_VALUE).records())).containsExactly("new");
    }
  }

  @Test
  void strayFilesAndBadNamesAreIgnoredOrCleanedAtLoad() throws IOException {
    try (LogManager manager = start()) {
      manager.getOrCreateLog(tp(0), CONFIG).append(batch(T0, "x"), 0);
    }
    Files.createDirectories(root.resolve("a/not-a-partition"));
    Files.write(root.resolve("a/events-0/00000000000000000000.log.deleted"), new byte[] {1});
    Files.write(root.resolve("a/events-0/00000000000000000077.index"), new byte[8]);
    Files.write(root.resolve("a/events-0/notes.log"), new byte[] {1});

    try (LogManager manager = start()) {
      assertThat(manager.logs()).containsOnlyKeys(tp(0));
      assertThat(root.resolve("a/events-0/00000000000000000000.log.deleted")).doesNotExist();
      assertThat(root.resolve("a/events-0/00000000000000000077.index")).doesNotExist();
      assertThat(manager.getLog(tp(0)).orElseThrow().logEndOffset()).isEqualTo(1);
    }
  }

  /** Fills {@code future} with the batches of {@code current}, as a move's copy does. */
  private static void copy(PartitionLog current, PartitionLog future) {
    while (future.logEndOffset() < current.logEndOffset()) {
      var read = current.read(future.logEndOffset(), 1000, Long.MAX_VALUE);
      java.nio.ByteBuffer buffer = java.nio.ByteBuffer.allocate(read.records().sizeInBytes());
      try {
        ((org.apache.kafka.common.record.FileRecords) read.records()).readInto(buffer, 0);
      } catch (IOException e) {
        throw new java.io.UncheckedIOException(e);
      }
      future.appendAsFollower(org.apache.kafka.common.record.MemoryRecords.readableRecords(buffer));
    }
  }

  @Test
  void aFutureLogReplacesTheCurrentOneInAnotherDirectory() throws IOException {
    // Given a log in "a" and its future log in "b" that holds as much
    Uuid topicId = Uuid.randomUuid();
    try (LogManager manager = start()) {
      PartitionLog current = manager.getOrCreateLog(tp(0), topicId, CONFIG);
      assertThat(current.dir().getParent()).isEqualTo(root.resolve("a"));
      for (int i = 0; i < 30; i++) {
        current.append(batch(T0, "r" + i), 0);
      }
      current.updateHighWatermark(25);
      PartitionLog future = manager.createFutureLog(tp(0), root.resolve("b"), topicId, CONFIG);
      assertThat(future.dir().getFileName().toString()).startsWith("events-0.").endsWith("-future");
      copy(current, future);

      // When it takes the current log's place
      PartitionLog moved = manager.replaceWithFutureLog(tp(0));

      // Then the partition's log is in "b", with every record and the high watermark, and "a" has
      // none
      assertThat(moved.dir()).isEqualTo(root.resolve("b/events-0"));
      assertThat(manager.getLog(tp(0))).containsSame(moved);
      assertThat(manager.futureLogs()).isEmpty();
      assertThat(moved.highWatermark()).isEqualTo(25);
      assertThat(values(moved.read(29, 1000, Long.MAX_VALUE).records())).containsExactly("r29");
      assertThat(moved.topicId()).contains(topicId.toString());
      assertThat(root.resolve("a/events-0")).doesNotExist();
      moved.append(batch(T0, "after"), 0);
    }
    try (LogManager manager = start()) {
      PartitionLog log = manager.getLog(tp(0)).orElseThrow();
      assertThat(log.dir()).isEqualTo(root.resolve("b/events-0"));
      assertThat(values(log.read(30, 1000, Long.MAX_VALUE).records())).containsExactly("after");
    }
  }

  @Test
  void aStartDeletesAFutureLogThatHadNotCaughtUpAndFinishesAMovedOne() throws IOException {
    // Given partition 0 stopped while its copy to "b" was unfinished, and partition 1 right after
    // its future log was renamed -moved (a crash before the current log was deleted)
    try (LogManager manager = start()) {
      for (int p = 0; p < 2; p++) {
        PartitionLog current = manager.getOrCreateLog(tp(p), CONFIG);
        for (int i = 0; i < 20; i++) {
          current.append(batch(T0, p + ":" + i), 0);
        }
      }
      Path dirOf1 = manager.getLog(tp(1)).orElseThrow().dir().getParent();
      Path other = dirOf1.equals(root.resolve("a")) ? root.resolve("b") : root.resolve("a");
      Path dirOf0 = manager.getLog(tp(0)).orElseThrow().dir().getParent();
      Path otherOf0 = dirOf0.equals(root.resolve("a")) ? root.resolve("b") : root.resolve("a");
      manager.createFutureLog(tp(0), otherOf0, Uuid.randomUuid(), CONFIG);
      PartitionLog future = manager.createFutureLog(tp(1), other, Uuid.randomUuid(), CONFIG);
      copy(manager.getLog(tp(1)).orElseThrow(), future);
      future.append(batch(T0, "only in the moved log"), 0);
    }
    Path moving =
        Files.list(root.resolve("a"))
            .filter(d -> d.getFileName().toString().startsWith("events-1."))
            .findFirst()
            .orElseGet(
                () -> {
                  try (var b = Files.list(root.resolve("b"))) {
                    return b.filter(d -> d.getFileName().toString().startsWith("events-1."))
                        .findFirst()
                        .orElseThrow();
                  } catch (IOException e) {
                    throw new java.io.UncheckedIOException(e);
                  }
                });
    String name = moving.getFileName().toString();
    Files.move(moving, moving.resolveSibling(name.replace("-future", "-moved")));

    // When the manager starts again
    try (LogManager manager = start()) {
      // Then partition 0 is where it was, its future log gone; partition 1 is the moved log
      PartitionLog zero = manager.getLog(tp(0)).orElseThrow();
      assertThat(zero.logEndOffset()).isEqualTo(20);
      assertThat(manager.futureLogs()).isEmpty();
      PartitionLog one = manager.getLog(tp(1)).orElseThrow();
      assertThat(one.dir().getParent()).isEqualTo(moving.getParent());
      assertThat(values(one.read(20, 1000, Long.MAX_VALUE).records()))
          .containsExactly("only in the moved log");
      for (Path dir : dirs()) {
        try (var children = Files.list(dir)) {
          assertThat(children.map(c -> c.getFileName().toString()))
              .noneMatch(c -> c.endsWith("-future") || c.endsWith("-moved"));
        }
      }
      assertThat(
              Files.exists(root.resolve("a/events-1")) && Files.exists(root.resolve("b/events-1")))
          .isFalse();
    }
  }
}
