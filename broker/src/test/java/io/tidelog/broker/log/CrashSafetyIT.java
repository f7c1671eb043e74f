package io.tidelog.broker.log;

import static org.assertj.core.api.Assertions.assertThat;

import io.tidelog.broker.log.PartitionLog.LoadState;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import org.apache.kafka.common.record.Record;
import org.apache.kafka.common.record.RecordBatch;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.common.utils.Utils;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Kills a child JVM that appends in a loop with SIGKILL at random moments and checks, after each
 * round, that recovery yields a log in which every batch passes its CRC, the log is a prefix of
 * what was written, nothing appears that was never written, and nothing acknowledged is lost (the
 * page cache survives a killed process).
 */
class CrashSafetyIT {
  private static final int ROUNDS = Integer.getInteger("tidelog.crash.rounds", 24);
  private static final long[] FLUSH_MESSAGES = {Long.MAX_VALUE, 1, 50};

  @TempDir Path root;

  @Test
  void recoveryAfterSigkillYieldsAValidPrefixOfWhatWasWritten() throws Exception {
    Random random = new Random(20261129);
    Path dir = root.resolve("logs");
    Path partitionDir = dir.resolve("crash-0");
    long previousEnd = 0;
    for (int round = 0; round < ROUNDS; round++) {
      // Given a child appending, with fsync never, on every append, or every 50 messages
      long flushMessages = FLUSH_MESSAGES[round % FLUSH_MESSAGES.length];
      long ackedEnd = runAndKill(dir, flushMessages, 50 + random.nextInt(450));

      // When the log is recovered (on a copy, so the next child recovers the original itself)
      long end = recoverAndVerify(dir, partitionDir, flushMessages, round);

      // Then nothing acknowledged was lost and the log did not go backwards
      assertThat(end)
          .as("round %d: log end vs last acknowledged", round)
          .isGreaterThanOrEqualTo(ackedEnd);
      assertThat(end)
          .as("round %d: log end vs previous round", round)
          .isGreaterThanOrEqualTo(previousEnd);
      previousEnd = end;
    }
    assertThat(previousEnd).as("the children appended something").isPositive();
  }

  private static long runAndKill(Path dir, long flushMessages, int runMs) throws Exception {
    Path java = Path.of(System.getProperty("java.home"), "bin", "java");
    Process child =
        new ProcessBuilder(
                java.toString(),
                "-Xmx256m",
                "-cp",
                System.getProperty("java.class.path"),
                CrashAppender.class.getName(),
                dir.toString(),
                String.valueOf(flushMessages))
            .redirectError(ProcessBuilder.Redirect.INHERIT)
            .start();
    CountDownLatch ready = new CountDownLatch(1);
    AtomicLong acked = new AtomicLong();
    Thread reader =
        new Thread(
            () -> {
              try (BufferedReader lines =
                  new BufferedReader(
                      new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8))) {
                for (String line = lines.readLine(); line != null; line = lines.readLine()) {
                  if (line.startsWith("ready ")) {
                    acked.set(Long.parseLong(line.substring(6)));
                    ready.countDown();
                  } else if (line.startsWith("acked ")) {
                    acked.set(Long.parseLong(line.substring(6)));
                  }
                }
              } catch (IOException e) {
                // The child was killed mid-line.
              }
            });
    reader.start();
    try {
      assertThat(ready.await(30, TimeUnit.SECONDS)).as("child started").isTrue();
      Thread.sleep(runMs);
    } finally {
      child.destroyForcibly(); // SIGKILL on Linux
      assertThat(child.waitFor(30, TimeUnit.SECONDS)).isTrue();
      reader.join(10_000);
    }
    return acked.get();
  }

  private static long recoverAndVerify(Path dir, Path partitionDir, long flushMessages, int round)
      throws IOException {
    Path copy =
        Files.createTempDirectory(dir.getParent(), "copy").resolve(partitionDir.getFileName());
    copyDir(partitionDir, copy);
    long recoveryPoint = checkpointed(dir, LogManager.RECOVERY_POINT_CHECKPOINT);
    LogServices services = new LogServices(Time.SYSTEM, Runnable::run, (d, e) -> {});
    try (PartitionLog log =
        PartitionLog.open(
            copy,
            CrashAppender.config(flushMessages),
            new LoadState(recoveryPoint, 0, false),
            services)) {
      long offset = 0;
      long batchIndex = 0;
      while (offset < log.logEndOffset()) {
        LogReadInfo read = log.read(offset, 1 << 20, Long.MAX_VALUE);
        for (RecordBatch batch : read.records().batches()) {
          batch.ensureValid();
          assertThat(batch.baseOffset())
              .as("round %d batch %d", round, batchIndex)
              .isEqualTo(CrashAppender.firstOffsetOf(batchIndex));
          int i = 0;
          for (Record record : batch) {
            assertThat(StandardCharsets.UTF_8.decode(record.value()).toString())
                .as("round %d offset %d", round, record.offset())
                .isEqualTo(CrashAppender.value(batchIndex, i++));
          }
          assertThat(i).isEqualTo(batchIndex % 5 + 1);
          batchIndex++;
        }
        offset = read.nextOffset();
      }
      assertThat(CrashAppender.firstOffsetOf(batchIndex)).isEqualTo(log.logEndOffset());
      return log.logEndOffset();
    } finally {
      Utils.delete(copy.getParent().toFile());
    }
  }

  private static long checkpointed(Path dir, String file) throws IOException {
    List<String> entries = new CheckpointFile(dir.resolve(file)).read();
    return entries.isEmpty() ? 0 : Long.parseLong(entries.get(0).split(" ")[2]);
  }

  private static void copyDir(Path from, Path to) throws IOException {
    Files.createDirectories(to);
    try (Stream<Path> files = Files.list(from)) {
      for (Path file : files.toList()) {
        Files.copy(file, to.resolve(file.getFileName()));
      }
    }
  }
}
