package io.tidelog.broker.log;

import static io.tidelog.broker.log.TestBatches.batch;
import static io.tidelog.broker.log.TestBatches.readAllValues;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tidelog.broker.Tmpfs;
import io.tidelog.broker.log.PartitionLog.LoadState;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.errors.KafkaStorageException;
import org.apache.kafka.common.utils.Time;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * On a full file system, an index entry that needs a new page of its memory-mapped, sparse file
 * fails as an I/O error (the log directory goes offline), not as a SIGBUS from the mapping.
 */
class FullDiskIndexTest {
  private static final long T0 = 1_700_000_000_000L;
  @TempDir Path dir;

  @Test
  void anIndexPageThatCannotBeAllocatedIsAnIoError() throws Exception {
    try (Tmpfs tmpfs = Tmpfs.mount(dir.resolve("disk"), 1024)) {
      Path disk = tmpfs.path;
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

      tmpfs.fill();
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
      tmpfs.free();
      PartitionLog reopened =
          PartitionLog.open(
              disk.resolve("t-0"),
              LogConfig.parse(Map.of("index.interval.bytes", "0")),
              new LoadState(0, 0, false),
              new LogServices(Time.SYSTEM, Runnable::run, (d, e) -> {}));
      assertThat(readAllValues(reopened)).startsWith(written.toArray(String[]::new));
      reopened.close();
    }
  }

  /** Values of one size: 73-byte batches, so that 513 of them leave 3511 bytes of a page free. */
  private static String value(int i) {
    return String.format("v%04d", i);
  }
}
