package io.tidelog.bench;

import io.tidelog.broker.log.LogConfig;
import io.tidelog.broker.log.LogServices;
import io.tidelog.broker.log.PartitionLog;
import io.tidelog.broker.log.PartitionLog.LoadState;
import java.io.File;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.CompressionType;
import org.apache.kafka.common.record.FileRecords;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.RecordBatch;
import org.apache.kafka.common.record.SimpleRecord;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.utils.BufferSupplier;
import org.apache.kafka.common.utils.PrimitiveRef;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.common.utils.Utils;
import org.apache.kafka.storage.internals.log.AppendOrigin;
import org.apache.kafka.storage.internals.log.LogValidator;
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
 * What a topic's {@code compression.type} costs a produce, beside Apache Kafka's own code for the
 * same work in the same run: a producer's uncompressed batch of 100 records of 1 KiB (text that
 * compresses about as JSON does) appended to a topic of {@code codec}. Tidelog: {@link
 * PartitionLog#append} (validation, recompression, offsets, the write to the page cache). Kafka:
 * its {@link LogValidator} (validation, recompression, offsets) and {@link FileRecords#append} of
 * the result (the write). {@code producer} is the baseline without recompression. Batches per
 * second; {@code bench/run-recompression-bench} prints the ratios.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(
    value = 1,
    jvmArgsAppend = {"-Xmx2g"})
public class RecompressionBenchmark {
  private static final int RECORDS = 100;
  private static final int RECORD_BYTES = 1024;

  /** The producer's batch, and a fresh log of the topic's codec per iteration. */
  @State(Scope.Thread)
  public static class Append {
    @Param({"producer", "lz4", "zstd", "gzip"})
    public String codec;

    @Param("target/bench-data")
    public String dir;

    ByteBuffer sent;
    Path logs;
    PartitionLog tidelog;
    FileRecords kafka;
    Compression kafkaTarget;
    long kafkaOffset;
    final BufferSupplier buffers = BufferSupplier.create();

    @Setup(Level.Trial)
    public void buildBatch() {
      SimpleRecord[] records = new SimpleRecord[RECORDS];
      for (int i = 0; i < RECORDS; i++) {
        records[i] =
            new SimpleRecord(
                System.currentTimeMillis(),
                ("key-" + i).getBytes(StandardCharsets.UTF_8),
                text(i).getBytes(StandardCharsets.UTF_8));
      }
      MemoryRecords batch = MemoryRecords.withRecords(Compression.NONE, records);
      sent = ByteBuffer.allocate(batch.sizeInBytes());
      sent.put(batch.buffer().duplicate()).flip();
      kafkaTarget =
          switch (codec) {
            case "producer" -> Compression.NONE;
            case "lz4" -> Compression.lz4().build();
            case "zstd" -> Compression.zstd().build();
            case "gzip" -> Compression.gzip().build();
            default -> throw new IllegalArgumentException(codec);
          };
    }

    /** A record of about 1 KiB of varied, repetitive text, as JSON events are. */
    private static String text(int i) {
      StringBuilder text = new StringBuilder();
      for (int field = 0; text.length() < RECORD_BYTES; field++) {
        text.append("{\"event\":\"order-").append(i * 31 + field).append("\",\"status\":\"");
        text.append(field % 3 == 0 ? "created" : field % 3 == 1 ? "paid" : "shipped");
        text.append("\",\"amount\":").append((i * 7919 + field * 104729) % 100000).append("},");
      }
      return text.substring(0, RECORD_BYTES);
    }

    @Setup(Level.Iteration)
    public void openLogs() throws IOException {
      Path base = Files.createDirectories(Path.of(dir));
      logs = Files.createTempDirectory(base, "recompression");
      Map<String, String> config =
          Map.of("compression.type", codec, "segment.bytes", String.valueOf(1 << 30));
      tidelog =
          PartitionLog.open(
              logs.resolve("tidelog-0"),
              LogConfig.parse(config),
              LoadState.NEW,
              new LogServices(Time.SYSTEM, Runnable::run, (d, e) -> {}));
      File kafkaFile = logs.resolve("kafka-0.log").toFile();
      kafka = FileRecords.open(kafkaFile);
      kafkaOffset = 0;
    }

    @TearDown(Level.Iteration)
    public void deleteLogs() throws IOException {
      tidelog.close();
      kafka.close();
      Utils.delete(logs.toFile());
    }

    /** A copy of the producer's batch: both validators change it in place. */
    MemoryRecords batch() {
      ByteBuffer copy = ByteBuffer.allocate(sent.remaining());
      copy.put(sent.duplicate()).flip();
      return MemoryRecords.readableRecords(copy);
    }
  }

  @Benchmark
  public long tidelog(Append state) {
    return state.tidelog.append(state.batch(), 0).lastOffset();
  }

  @Benchmark
  public long kafka(Append state) throws IOException {
    PrimitiveRef.LongRef offset = PrimitiveRef.ofLong(state.kafkaOffset);
    LogValidator.ValidationResult validated =
        new LogValidator(
                state.batch(),
                new TopicPartition("kafka", 0),
                Time.SYSTEM,
                CompressionType.NONE,
                state.kafkaTarget,
                false,
                RecordBatch.MAGIC_VALUE_V2,
                TimestampType.CREATE_TIME,
                Long.MAX_VALUE,
                Long.MAX_VALUE,
                0,
                AppendOrigin.CLIENT)
            .validateMessagesAndAssignOffsets(offset, NO_METRICS, state.buffers);
    state.kafkaOffset = offset.value;
    state.kafka.append(validated.validatedRecords);
    return offset.value;
  }

  private static final LogValidator.MetricsRecorder NO_METRICS =
      new LogValidator.MetricsRecorder() {
        @Override
        public void recordInvalidMagic() {}

        @Override
        public void recordInvalidOffset() {}

        @Override
        public void recordInvalidSequence() {}

        @Override
        public void recordInvalidChecksums() {}

        @Override
        public void recordNoKeyCompactedTopic() {}
      };
}
