package io.tidelog.broker.log;

import static io.tidelog.broker.log.TestBatches.batch;
import static io.tidelog.broker.log.TestBatches.readAllValues;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.tidelog.broker.log.PartitionLog.LoadState;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.common.errors.KafkaStorageException;
import org.apache.kafka.common.utils.Time;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * On a full file system, an index entry that needs a new page of its memory-mapped, sparse file
 * fails as an I/O error (the log directory goes offline), not as a SIGBUS from the mapping.
 */
class FullDiskIndexTest {
  private static final long T0 = 1_700_000_000_000L;
  @TempDir Path dir;
  private Path disk;

  @AfterEach
  void unmount() throws Exception {
    if (disk != null) {
      // lazily: the log that failed still holds its files open
      new ProcessBuilder("umount", "-l", disk.toString()).start().waitFor(30, TimeUnit.SECONDS);
    }
  }

  @Test
  void anIndexPageThatCannotBeAllocatedIsAnIoError() throws Exception {
    Path mountPoint = Files.createDirectories(dir.resolve("disk"));
    Process mount =
        new ProcessBuilder(
                "mount", "-t", "tmpfs", "-o", "size=1m", "tidelog-test", mountPoint.toString())
            .redirectErrorStream(true)
            .start();
    boolean mounted = mount.waitFor(30, TimeUnit.SECONDS) && mount.exitValue() == 0;
    if (!"true".equals(System.getenv("CI"))) {
      assumeTrue(mounted, "mounting a tmpfs needs root; the full-disk index test skipped");
    }
    assertThat(mounted).as("mount a tmpfs (root)").isTrue();
    disk = mountPoint;
    List<Path> failed = new ArrayList<>();
    LogServices services = new LogServices(Time.SYSTEM, Runnable::run, (d, e) -> failed.add(d));
    // An offset index entry for every batch after the first, all batches with one timestamp (one
    // time index entry): 513 batches fill the offset index's first page (512 entries of 8 bytes),
    // and leave room in the log's last page for more small batches.
    PartitionLog log =
        PartitionLog.open(
            disk.resolve("t-0"),
            LogConfig.parse(Map.of("index.interval.bytes", "0")),
            LoadState.NEW,
            services);
    List<String> written = new ArrayList<>();
    for (int i = 0; i < 513; i++) {
      log.append(batch(T0, value(i)), 0);
      written.add(value(i));
    }
    assertThat(log.logEndOffset()).isEqualTo(513);

    fill(disk);
    assertThatThrownBy(
            () -> {
              for (int i = 513; i < 600; i++) {
                log.append(batch(T0, value(i)), 0);
                written.add(value(i));
              }
            })
        .isInstanceOf(KafkaStorageException.class);
    assertThat(failed).containsExactly(disk);
    assertThat(written).hasSize(513); // the first append after the fill failed: its index page

    // With room again, the log reopens valid, with every record whose append returned.
    Files.delete(disk.resolve("filler"));
    PartitionLog reopened =
        PartitionLog.open(
            disk.resolve("t-0"),
            LogConfig.parse(Map.of("index.interval.bytes", "0")),
            new LoadState(0, 0, false),
            new LogServices(Time.SYSTEM, Runnable::run, (d, e) -> {}));
    assertThat(readAllValues(reopened)).startsWith(written.toArray(String[]::new));
    reopened.close();
  }

  /** Values of one size: 71-byte batches, so that 513 of them leave 441 bytes of a page free. */
  private static String value(int i) {
    return String.format("v%04d", i);
  }

  private static void fill(Path disk) throws IOException {
    byte[] chunk = new byte[4096];
    try (OutputStream out = Files.newOutputStream(disk.resolve("filler"))) {
      for (int i = 0; i < 1_000; i++) {
        out.write(chunk);
      }
      throw new IllegalStateException("the 1 MiB tmpfs took 4 MiB");
    } catch (IOException full) {
      assertThat(full).hasMessageContaining("No space left on device");
    }
  }
}
