package io.tidelog.bench;

import io.tidelog.broker.log.LogConfig;
import io.tidelog.broker.log.LogReadInfo;
import io.tidelog.broker.log.LogServices;
import io.tidelog.broker.log.PartitionLog;
import io.tidelog.broker.log.PartitionLog.LoadState;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.FileRecords;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.MemoryRecordsBuilder;
import org.apache.kafka.common.record.SimpleRecord;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.common.utils.Utils;
import org.openjdk.jmh.annotations.AuxCounters;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Append and sequential-read throughput of {@link PartitionLog} with 1 KiB records, without fsync
 * (Kafka's default), reported as bytes per second through the {@code bytes} counter. {@code
 * bench/run-log-bench} runs it beside {@code dd} on the same disk.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(
    value = 1,
    jvmArgsAppend = {"-Xmx2g"})
public class LogBenchmark {
  private static final int RECORD_BYTES = 1024;
  private static final int READ_BYTES = 1 << 20;
  private static final long READ_LOG_BYTES = 1L << 30;

  /** What one sustained append shot writes; bench/run-log-bench has dd write the same. */
  static final long SUSTAINED_BYTES = 4L << 30;

  /** Where the logs go: a directory on the disk under test. */
  @State(Scope.Benchmark)
  public static class Disk {
    @Param("target/bench-data")
    public String dir;

    Path newLogDir(String name) throws IOException {
      Path base = Files.createDirectories(Path.of(dir));
      return Files.createTempDirectory(base, name).resolve("bench-0");
    }
  }

  /** Bytes moved, reported by JMH as a rate. */
  @State(Scope.Thread)
  @AuxCounters(AuxCounters.Type.OPERATIONS)
  public static class Bytes {
    public long bytes;

    @Setup(Level.Iteration)
    public void reset() {
      bytes = 0;
    }
  }

  /** A fresh log per iteration, and one batch reused for every append. */
  @State(Scope.Benchmark)
  public static class AppendState {
    @Param({"16384", "1048576"})
    public int batchBytes;

    ByteBuffer batch;
    PartitionLog log;

    @Setup(Level.Trial)
    public void buildBatch() {
      batch = directCopy(batchOf(recordsPerBatch(batchBytes)));
    }

    @Setup(Level.Iteration)
    public void openLog(Disk disk) throws IOException {
      log = open(disk.newLogDir("append"));
    }

    @TearDown(Level.Iteration)
    public void deleteLog() throws IOException, InterruptedException {
      log.close();
      Utils.delete(log.dir().getParent().toFile());
      // Start the next shot, like each dd run, with no dirty pages left over.
      new ProcessBuilder("sync").inheritIO().start().waitFor();
    }
  }

  /** A log of about 1 GiB of 16 KiB batches, read from start to end and around again. */
  @State(Scope.Benchmark)
  public static class ReadState {
    PartitionLog log;
    ByteBuffer sink = ByteBuffer.allocateDirect(2 * READ_BYTES);
    long offset;

    @Setup(Level.Trial)
    public void fill(Disk disk) throws IOException {
      log = open(disk.newLogDir("read"));
      ByteBuffer batch = directCopy(batchOf(recordsPerBatch(16384)));
      for (long written = 0; written < READ_LOG_BYTES; ) {
        written += log.append(MemoryRecords.readableRecords(batch.duplicate()), 0).sizeInBytes();
      }
      log.flush();
    }

    @TearDown(Level.Trial)
    public void delete() throws IOException {
      log.close();
      Utils.delete(log.dir().getParent().toFile());
    }
  }

  /**
   * Appends {@link #SUSTAINED_BYTES} to a fresh log in one shot: enough that the page cache's dirty
   * limit throttles the writer, as it does a log under steady load (a burst that fits the page
   * cache measures memory copies, not the disk). run-log-bench has dd write the same amount.
   */
  @Benchmark
  @BenchmarkMode(Mode.SingleShotTime)
  @OutputTimeUnit(TimeUnit.MILLISECONDS)
  @Warmup(iterations = 1, batchSize = 1)
  @Measurement(iterations = 3, batchSize = 1)
  public long appendSustained(AppendState state) {
    long written = 0;
    while (written < SUSTAINED_BYTES) {
      written +=
          state.log.append(MemoryRecords.readableRecords(state.batch.duplicate()), 0).sizeInBytes();
    }
    return written;
  }

  /** Reads the next 1 MiB region and copies it out of the page cache, as a non-sendfile reader. */
  @Benchmark
  public long sequentialRead(ReadState state, Bytes bytes) throws IOException {
    if (state.offset >= state.log.logEndOffset()) {
      state.offset = 0;
    }
    LogReadInfo read = state.log.read(state.offset, READ_BYTES, Long.MAX_VALUE);
    state.sink.clear();
    state.sink.limit(read.records().sizeInBytes());
    ((FileRecords) read.records()).readInto(state.sink, 0);
    bytes.bytes += read.records().sizeInBytes();
    state.offset = read.nextOffset();
    return state.offset;
  }

  /**
   * Rolled segments are fsynced off the appending thread, as the broker's LogManager does; an
   * inline flusher would put a whole segment's fsync into the measured appends.
   */
  private static final ExecutorService FLUSHER =
      Executors.newSingleThreadExecutor(
          runnable -> {
            Thread thread = new Thread(runnable, "bench-log-flusher");
            thread.setDaemon(true);
            return thread;
          });

  static PartitionLog open(Path dir) throws IOException {
    return PartitionLog.open(
        dir,
        LogConfig.parse(Map.of()),
        LoadState.NEW,
        new LogServices(
            Time.SYSTEM,
            FLUSHER,
            (d, e) -> {
              throw new IllegalStateException("log directory failed: " + d, e);
            }));
  }

  /** As many 1 KiB records as fit a batch of {@code batchBytes}, header and framing included. */
  static int recordsPerBatch(int batchBytes) {
    int batchHeaderBytes = 61;
    int recordFramingBytes = 11;
    return (batchBytes - batchHeaderBytes) / (RECORD_BYTES + recordFramingBytes);
  }

  static MemoryRecords batchOf(int records) {
    MemoryRecordsBuilder builder =
        MemoryRecords.builder(
            ByteBuffer.allocate(records * (RECORD_BYTES + 64) + 128),
            Compression.NONE,
            TimestampType.CREATE_TIME,
            0L);
    byte[] value = new byte[RECORD_BYTES];
    for (int i = 0; i < records; i++) {
      value[0] = (byte) i;
      builder.append(new SimpleRecord(System.currentTimeMillis(), null, value));
    }
    return builder.build();
  }

  /** Network buffers are direct (Netty), so the benchmark appends from direct memory too. */
  static ByteBuffer directCopy(MemoryRecords records) {
    ByteBuffer direct = ByteBuffer.allocateDirect(records.sizeInBytes());
    direct.put(records.buffer().duplicate()).flip();
    return direct;
  }
}
