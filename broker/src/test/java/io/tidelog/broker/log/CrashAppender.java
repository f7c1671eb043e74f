package io.tidelog.broker.log;

import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.MemoryRecordsBuilder;
import org.apache.kafka.common.record.SimpleRecord;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.utils.Time;

/**
 * The child process of {@link CrashSafetyIT}: opens a log directory through {@link LogManager}
 * (recovering it as a restarted broker would) and appends deterministic batches until it is killed,
 * printing the log end offset after every append returns.
 *
 * <p>Batch {@code k} holds {@code k % 5 + 1} records, so the offset where batch {@code k} starts is
 * a function of {@code k} alone, and any log prefix tells which batch comes next.
 */
public final class CrashAppender {
  static final TopicPartition PARTITION = new TopicPartition("crash", 0);
  private static final long APPENDS_MAX = 5_000_000;
  private static final long RUN_NANOS_MAX = 60_000_000_000L;

  private CrashAppender() {}

  static LogConfig config(long flushMessages) {
    return LogConfig.parse(
        Map.of(
            "segment.bytes", "65536",
            "index.interval.bytes", "1024",
            "flush.messages", String.valueOf(flushMessages)));
  }

  static long firstOffsetOf(long batchIndex) {
    long offset = 15 * (batchIndex / 5);
    for (long j = 0; j < batchIndex % 5; j++) {
      offset += j + 1;
    }
    return offset;
  }

  static long batchIndexAt(long offset) {
    long k = 5 * (offset / 15);
    while (firstOffsetOf(k) < offset) {
      k++;
    }
    if (firstOffsetOf(k) != offset) {
      throw new IllegalStateException("offset " + offset + " is not a batch boundary");
    }
    return k;
  }

  static String value(long batchIndex, int record) {
    int payloadChars = (int) (batchIndex * 37 % 300);
    return batchIndex + ":" + record + ":" + "p".repeat(payloadChars);
  }

  static MemoryRecords batch(long batchIndex) {
    int records = (int) (batchIndex % 5) + 1;
    MemoryRecordsBuilder builder =
        MemoryRecords.builder(
            ByteBuffer.allocate(2048), Compression.NONE, TimestampType.CREATE_TIME, 0L);
    for (int i = 0; i < records; i++) {
      builder.append(
          new SimpleRecord(
              1_700_000_000_000L + batchIndex,
              null,
              value(batchIndex, i).getBytes(StandardCharsets.UTF_8)));
    }
    return builder.build();
  }

  /** Arguments: the log directory and {@code flush.messages}. */
  public static void main(String[] args) throws Exception {
    Path dir = Path.of(args[0]);
    LogConfig config = config(Long.parseLong(args[1]));
    LogManager manager = LogManager.start(List.of(dir), topic -> config, 1, Time.SYSTEM);
    PartitionLog log = manager.getOrCreateLog(PARTITION, config);
    PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
    out.println("ready " + log.logEndOffset());
    long k = batchIndexAt(log.logEndOffset());
    long deadline = System.nanoTime() + RUN_NANOS_MAX;
    for (long n = 0; n < APPENDS_MAX && System.nanoTime() < deadline; n++, k++) {
      log.append(batch(k), 0);
      if (n % 64 == 0) {
        manager.checkpoint();
      }
      out.println("acked " + log.logEndOffset());
    }
  }
}
