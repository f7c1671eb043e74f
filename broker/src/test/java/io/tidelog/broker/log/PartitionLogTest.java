package io.tidelog.broker.log;

import static io.tidelog.broker.log.TestBatches.batch;
import static io.tidelog.broker.log.TestBatches.idempotent;
import static io.tidelog.broker.log.TestBatches.offsets;
import static io.tidelog.broker.log.TestBatches.readAllValues;
import static io.tidelog.broker.log.TestBatches.values;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.tidelog.broker.log.PartitionLog.LoadState;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.Executor;
import org.apache.kafka.common.InvalidRecordException;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.errors.CorruptRecordException;
import org.apache.kafka.common.errors.InvalidProducerEpochException;
import org.apache.kafka.common.errors.OffsetOutOfRangeException;
import org.apache.kafka.common.errors.OutOfOrderSequenceException;
import org.apache.kafka.common.errors.RecordBatchTooLargeException;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.apache.kafka.common.record.CompressionType;
import org.apache.kafka.common.record.DefaultRecordBatch;
import org.apache.kafka.common.record.FileRecords;
import org.apache.kafka.common.record.FileRecords.TimestampAndOffset;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.Record;
import org.apache.kafka.common.record.RecordBatch;
import org.apache.kafka.common.record.SimpleRecord;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.utils.MockTime;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PartitionLogTest {
  private static final long T0 = 1_700_000_000_000L;
  // Kafka's v2 batch layout: base offset (8), length (4), leader epoch (4), magic (1), crc (4), ...
  private static final int MAGIC_OFFSET = 16;
  private static final int ATTRIBUTES_OFFSET = 21;

  @TempDir Path logDir;
  private final MockTime time = new MockTime(0, T0, 0);
  private final LogServices services = new LogServices(time, Runnable::run, (dir, e) -> {});
  private final List<PartitionLog> opened = new ArrayList<>();

  @AfterEach
  void closeLogs() throws IOException {
    for (PartitionLog log : opened) {
      log.close();
    }
  }

  private PartitionLog open(Map<String, ?> configs) throws IOException {
    return open(configs, LoadState.NEW);
  }

  private PartitionLog open(Map<String, ?> configs, LoadState state) throws IOException {
    return open("orders-0", configs, state);
  }

  private PartitionLog open(String partition, Map<String, ?> configs, LoadState state)
      throws IOException {
    PartitionLog log =
        PartitionLog.open(logDir.resolve(partition), LogConfig.parse(configs), state, services);
    opened.add(log);
    return log;
  }

  @Test
  void appendAssignsOffsetsAndStampsTheLeaderEpoch() throws IOException {
    // Given an empty log; when two batches are appended; then offsets run on and the epoch is in.
    PartitionLog log = open(Map.of());

    LogAppendInfo first = log.append(batch(T0, "a", "b", "c"), 5);
    LogAppendInfo second = log.append(batch(T0 + 1, "d"), 5);

    assertThat(first.firstOffset()).isZero();
    assertThat(first.lastOffset()).isEqualTo(2);
    assertThat(second.firstOffset()).isEqualTo(3);
    assertThat(second.maxTimestamp()).isEqualTo(T0 + 1);
    assertThat(second.logAppendTimeMs()).isEqualTo(-1);
    assertThat(log.logEndOffset()).isEqualTo(4);
    LogReadInfo read = log.read(0, Integer.MAX_VALUE, Long.MAX_VALUE);
    assertThat(values(read.records())).containsExactly("a", "b", "c", "d");
    assertThat(offsets(read.records())).containsExactly(0L, 1L, 2L, 3L);
    assertThat(read.nextOffset()).isEqualTo(4);
    for (RecordBatch stored : read.records().batches()) {
      assertThat(stored.partitionLeaderEpoch()).isEqualTo(5);
      stored.ensureValid();
    }
  }

  @Test
  void readReturnsAFileRegionOfWholeBatchesWithinTheLimits() throws IOException {
    // Given three batches; when reads are bounded by bytes and by offset; then whole batches come.
    PartitionLog log = open(Map.of());
    int batchBytes = log.append(batch(T0, "a", "b"), 0).sizeInBytes();
    log.append(batch(T0, "c", "d"), 0);
    log.append(batch(T0, "e"), 0);

    LogReadInfo oneBatch = log.read(0, batchBytes + 1, Long.MAX_VALUE);
    LogReadInfo atLeastOne = log.read(2, 1, Long.MAX_VALUE);
    LogReadInfo belowHighWatermark = log.read(0, Integer.MAX_VALUE, 4);
    LogReadInfo midBatch = log.read(1, Integer.MAX_VALUE, Long.MAX_VALUE);
    LogReadInfo atEnd = log.read(5, Integer.MAX_VALUE, Long.MAX_VALUE);

    assertThat(values(oneBatch.records())).containsExactly("a", "b");
    assertThat(oneBatch.nextOffset()).isEqualTo(2);
    assertThat(oneBatch.filePosition()).isZero();
    assertThat(((FileRecords) oneBatch.records()).file().getName())
        .isEqualTo("00000000000000000000.log");
    assertThat(values(atLeastOne.records())).containsExactly("c", "d");
    assertThat(atLeastOne.filePosition()).isEqualTo(batchBytes);
    assertThat(values(belowHighWatermark.records())).containsExactly("a", "b", "c", "d");
    assertThat(values(midBatch.records())).containsExactly("a", "b", "c", "d", "e");
    assertThat(atEnd.records().sizeInBytes()).isZero();
    assertThat(atEnd.nextOffset()).isEqualTo(5);
    assertThrows(OffsetOutOfRangeException.class, () -> log.read(6, 100, Long.MAX_VALUE));
  }

  @Test
  void randomReadsMatchAnOracleBeforeAndAfterAReload() throws IOException {
    // Given 300 batches of 1-4 records and random sizes, with an index entry per batch; when random
    // reads run on the live log (batches verified at append) and after a clean reload (verified
    // on first read); then each returns exactly the whole batches the oracle says.
    Random random = new Random(5);
    Map<String, String> configs = Map.of("segment.bytes", "20000", "index.interval.bytes", "0");
    PartitionLog log = open(configs);
    List<long[]> batches = new ArrayList<>(); // {baseOffset, lastOffset, sizeInBytes}
    for (int i = 0; i < 300; i++) {
      String[] records = new String[1 + random.nextInt(4)];
      for (int r = 0; r < records.length; r++) {
        records[r] = i + "." + r + "x".repeat(random.nextInt(200));
      }
      LogAppendInfo info = log.append(batch(T0 + i, records), 0);
      batches.add(new long[] {info.firstOffset(), info.lastOffset(), info.sizeInBytes()});
    }
    checkRandomReads(log, batches, random);
    log.close();
    opened.remove(log);

    checkRandomReads(open(configs, new LoadState(log.logEndOffset(), 0, true)), batches, random);
  }

  private static void checkRandomReads(PartitionLog log, List<long[]> batches, Random random) {
    long end = log.logEndOffset();
    for (int i = 0; i < 2000; i++) {
      long start = random.nextInt((int) end);
      int maxBytes = 1 + random.nextInt(3000);
      long maxOffset = random.nextBoolean() ? Long.MAX_VALUE : start + random.nextInt(40);

      LogReadInfo read = log.read(start, maxBytes, maxOffset);

      List<Long> expected = new ArrayList<>();
      long expectedNext = start;
      long bytes = 0;
      long segmentBase = -1;
      for (long[] b : batches) {
        if (b[1] < start || b[1] >= Math.min(maxOffset, end)) {
          continue;
        }
        long base = segmentOf(log, b[0]);
        if (segmentBase >= 0 && (base != segmentBase || bytes + b[2] > maxBytes)) {
          break;
        }
        segmentBase = base;
        bytes += b[2];
        for (long o = b[0]; o <= b[1]; o++) {
          expected.add(o);
        }
        expectedNext = b[1] + 1;
      }
      String what = "read(" + start + ", " + maxBytes + ", " + maxOffset + ")";
      assertThat(offsets(read.records())).as(what).isEqualTo(expected);
      assertThat(read.nextOffset()).as(what).isEqualTo(expectedNext);
    }
  }

  private static long segmentOf(PartitionLog log, long offset) {
    try (var files = Files.list(log.dir())) {
      return files
          .map(f -> f.getFileName().toString())
          .filter(n -> n.endsWith(".log"))
          .mapToLong(n -> Long.parseLong(n.substring(0, 20)))
          .filter(base -> base <= offset)
          .max()
          .orElseThrow();
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  @Test
  void invalidBatchesAreRefusedAndLeaveTheLogUntouched() throws IOException {
    // Given a log with one batch; when bad batches arrive; then each gets its error, nothing lands.
    PartitionLog log = open(Map.of("max.message.bytes", "200", "segment.bytes", "1000"));
    log.append(batch(T0, "kept"), 0);

    MemoryRecords badCrc = batch(T0, "x");
    badCrc.buffer().put(badCrc.sizeInBytes() - 1, (byte) 0x7f);
    MemoryRecords wrongCount = batch(T0, "x", "y");
    wrongCount.buffer().putInt(DefaultRecordBatch.RECORDS_COUNT_OFFSET, 3);
    rewriteCrc(wrongCount);
    MemoryRecords wrongMagic = batch(T0, "x");
    wrongMagic.buffer().put(MAGIC_OFFSET, RecordBatch.MAGIC_VALUE_V1);
    MemoryRecords trailingBytes = withTrailingBytes(batch(T0, "x"), 7);
    MemoryRecords hugeLength = batch(T0, "x");
    hugeLength.buffer().putInt(8, Integer.MAX_VALUE - 5); // the batch length field, found by FuzzIT

    assertThrows(CorruptRecordException.class, () -> log.append(badCrc, 0));
    assertThrows(InvalidRecordException.class, () -> log.append(wrongCount, 0));
    assertThrows(InvalidRecordException.class, () -> log.append(wrongMagic, 0));
    assertThrows(CorruptRecordException.class, () -> log.append(trailingBytes, 0));
    assertThrows(CorruptRecordException.class, () -> log.append(hugeLength, 0));
    assertThrows(RecordTooLargeException.class, () -> log.append(TestBatches.sized(1, 300, T0), 0));
    MemoryRecords sixBatches = concat(batch(T0, "x".repeat(120)), 6);
    assertThrows(RecordBatchTooLargeException.class, () -> log.append(sixBatches, 0));

    assertThat(log.logEndOffset()).isEqualTo(1);
    assertThat(values(log.read(0, Integer.MAX_VALUE, Long.MAX_VALUE).records()))
        .containsExactly("kept");
  }

  @Test
  void aBatchThatDecompressesPastTheLimitIsRefusedFromProducersButNotFromTheLeader()
      throws IOException {
    // Given a limit of 100 000 bytes decompressed; when a zstd batch of a few hundred bytes holds
    // 200 000 zeros, a producer's append is refused and writes nothing, while one that inflates to
    // 90 000 bytes lands, and so does the big one fetched from a leader that took it.
    PartitionLog log = open(Map.of(LogConfig.MAX_UNCOMPRESSED_MESSAGE_BYTES_CONFIG, "100000"));
    Compression zstd = Compression.zstd().build();
    MemoryRecords bomb =
        MemoryRecords.withRecords(zstd, new SimpleRecord(T0, null, new byte[200_000]));
    SimpleRecord[] ten = new SimpleRecord[10];
    Arrays.fill(ten, new SimpleRecord(T0, null, new byte[9_000]));

    RecordTooLargeException refused =
        assertThrows(RecordTooLargeException.class, () -> log.append(bomb, 0));
    assertThat(bomb.sizeInBytes()).isLessThan(1_000);
    assertThat(refused)
        .hasMessage(
            "The record batch decompresses to more than tidelog.max.uncompressed.message.bytes"
                + " (100000 bytes)");
    assertThat(log.logEndOffset()).isZero();

    log.append(MemoryRecords.withRecords(zstd, ten), 0);
    log.appendAsFollower(
        MemoryRecords.withRecords(10L, zstd, new SimpleRecord(T0, null, new byte[200_000])));

    assertThat(log.logEndOffset()).isEqualTo(11);
  }

  private static void rewriteCrc(MemoryRecords records) {
    ByteBuffer buffer = records.buffer();
    long crc =
        org.apache.kafka.common.utils.Crc32C.compute(
            buffer, ATTRIBUTES_OFFSET, buffer.limit() - ATTRIBUTES_OFFSET);
    buffer.putInt(DefaultRecordBatch.CRC_OFFSET, (int) crc);
  }

  private static MemoryRecords concat(MemoryRecords records, int copies) {
    ByteBuffer buffer = ByteBuffer.allocate(records.sizeInBytes() * copies);
    for (int i = 0; i < copies; i++) {
      buffer.put(records.buffer().duplicate());
    }
    return MemoryRecords.readableRecords(buffer.flip());
  }

  private static MemoryRecords withTrailingBytes(MemoryRecords records, int extra) {
    ByteBuffer buffer = ByteBuffer.allocate(records.sizeInBytes() + extra);
    buffer.put(records.buffer().duplicate());
    buffer.put(new byte[extra]).flip();
    return MemoryRecords.readableRecords(buffer);
  }

  /**
   * compression.type stores batches in its codec: an uncompressed idempotent batch is written again
   * in gzip with its records (offsets, timestamps, keys, values, headers) and its producer id,
   * epoch and sequence; a zstd batch is written uncompressed for "uncompressed"; "producer" keeps
   * each batch as sent.
   */
  @Test
  void compressionTypeStoresBatchesInItsCodec() throws IOException {
    SimpleRecord withHeader =
        new SimpleRecord(
            T0 + 7,
            "k".getBytes(StandardCharsets.UTF_8),
            "with header".getBytes(StandardCharsets.UTF_8),
            new org.apache.kafka.common.header.Header[] {
              new org.apache.kafka.common.header.internals.RecordHeader(
                  "h", "v".getBytes(StandardCharsets.UTF_8))
            });
    MemoryRecords sent =
        MemoryRecords.withIdempotentRecords(
            Compression.NONE,
            9L,
            (short) 2,
            0,
            new SimpleRecord(T0, "plain".getBytes(StandardCharsets.UTF_8)),
            withHeader);
    PartitionLog gzip = open(Map.of("compression.type", "gzip", "compression.gzip.level", "9"));
    gzip.append(batch(T0, "first"), 0);
    LogAppendInfo info = gzip.append(sent, 3);
    assertThat(info.firstOffset()).isEqualTo(1);
    assertThat(info.lastOffset()).isEqualTo(2);
    List<RecordBatch> stored = new ArrayList<>();
    gzip.read(0, Integer.MAX_VALUE, Long.MAX_VALUE).records().batches().forEach(stored::add);
    assertThat(stored).extracting(RecordBatch::compressionType).containsOnly(CompressionType.GZIP);
    RecordBatch idempotent = stored.get(1);
    idempotent.ensureValid();
    assertThat(idempotent.producerId()).isEqualTo(9L);
    assertThat(idempotent.producerEpoch()).isEqualTo((short) 2);
    assertThat(idempotent.baseSequence()).isZero();
    assertThat(idempotent.partitionLeaderEpoch()).isEqualTo(3);
    List<Record> records = new ArrayList<>();
    idempotent.forEach(records::add);
    assertThat(records).extracting(Record::offset).containsExactly(1L, 2L);
    assertThat(records.get(1).timestamp()).isEqualTo(T0 + 7);
    assertThat(StandardCharsets.UTF_8.decode(records.get(1).key()).toString()).isEqualTo("k");
    assertThat(records.get(1).headers()).hasSize(1);
    // the producer's retry of it is a duplicate still
    assertThat(
            gzip.append(
                    MemoryRecords.withIdempotentRecords(
                        Compression.NONE,
                        9L,
                        (short) 2,
                        0,
                        new SimpleRecord(T0, "plain".getBytes(StandardCharsets.UTF_8)),
                        withHeader),
                    3)
                .firstOffset())
        .isEqualTo(1);

    Compression zstd = Compression.zstd().build();
    PartitionLog uncompressed =
        open("uncompressed-0", Map.of("compression.type", "uncompressed"), LoadState.NEW);
    uncompressed.append(
        MemoryRecords.withRecords(zstd, new SimpleRecord(T0, null, new byte[100])), 0);
    PartitionLog producer = open("producer-0", Map.of(), LoadState.NEW);
    producer.append(MemoryRecords.withRecords(zstd, new SimpleRecord(T0, null, new byte[100])), 0);
    assertThat(firstBatchCodec(uncompressed)).isEqualTo(CompressionType.NONE);
    assertThat(firstBatchCodec(producer)).isEqualTo(CompressionType.ZSTD);
  }

  private static CompressionType firstBatchCodec(PartitionLog log) {
    return log.read(0, Integer.MAX_VALUE, Long.MAX_VALUE)
        .records()
        .batches()
        .iterator()
        .next()
        .compressionType();
  }

  /**
   * message.timestamp.after.max.ms (an hour, Kafka 4's default) and before.max.ms bound a
   * producer's CreateTime records by the broker's clock; the batch is refused INVALID_TIMESTAMP and
   * nothing is written. A LogAppendTime topic takes any, since it stamps its own.
   */
  @Test
  void recordTimestampsOutsideTheBoundsAreRefused() throws IOException {
    PartitionLog log = open(Map.of("message.timestamp.before.max.ms", "60000"));
    long hour = 3_600_000;
    assertThrows(
        org.apache.kafka.common.errors.InvalidTimestampException.class,
        () -> log.append(batch(T0 + hour + 1, "too late"), 0));
    assertThrows(
        org.apache.kafka.common.errors.InvalidTimestampException.class,
        () -> log.append(batch(T0 - 60_001, "too early"), 0));
    assertThat(log.logEndOffset()).isZero();
    log.append(batch(T0 + hour, "an hour ahead"), 0);
    log.append(batch(T0 - 60_000, "a minute behind"), 0);
    assertThat(log.logEndOffset()).isEqualTo(2);

    PartitionLog stamped =
        open("stamped-0", Map.of("message.timestamp.type", "LogAppendTime"), LoadState.NEW);
    stamped.append(batch(T0 + 10 * hour, "any"), 0);
    assertThat(stamped.logEndOffset()).isEqualTo(1);
  }

  @Test
  void idempotentSequencesMustFollowOnWithinAnEpoch() throws IOException {
    // Given producer 7 at sequence 0-1; then 2 follows, a gap or an older epoch is refused.
    PartitionLog log = open(Map.of());
    log.append(idempotent(7, (short) 1, 0, T0, "a", "b"), 0);

    assertThrows(
        OutOfOrderSequenceException.class,
        () -> log.append(idempotent(7, (short) 1, 5, T0, "gap"), 0));
    assertThrows(
        InvalidProducerEpochException.class,
        () -> log.append(idempotent(7, (short) 0, 2, T0, "old"), 0));
    assertThrows(
        OutOfOrderSequenceException.class,
        () -> log.append(idempotent(7, (short) 2, 3, T0, "bump"), 0));
    log.append(idempotent(7, (short) 1, 2, T0, "c"), 0);
    log.append(idempotent(7, (short) 2, 0, T0, "new-epoch"), 0);
    log.append(idempotent(8, (short) 0, 40, T0, "unknown-producer"), 0);

    assertThat(values(log.read(0, Integer.MAX_VALUE, Long.MAX_VALUE).records()))
        .containsExactly("a", "b", "c", "new-epoch", "unknown-producer");
  }

  @Test
  void aRetriedBatchGetsItsOriginalOffsetsAndIsNotWrittenAgain() throws IOException {
    // Given producer 7's batches 0-1 and 2; when batch 0-1 is sent again (a retry)
    PartitionLog log = open(Map.of());
    log.append(idempotent(7, (short) 1, 0, T0, "a", "b"), 0);
    log.append(idempotent(7, (short) 1, 2, T0, "c"), 0);

    LogAppendInfo retry = log.append(idempotent(7, (short) 1, 0, T0, "a", "b"), 0);

    // Then it gets offsets 0-1 back, and the log holds each record once
    assertThat(retry.firstOffset()).isZero();
    assertThat(retry.lastOffset()).isEqualTo(1);
    assertThat(log.logEndOffset()).isEqualTo(3);
    assertThat(readAllValues(log)).containsExactly("a", "b", "c");
  }

  @Test
  void producerStateSurvivesACleanRestartACrashAndATruncation() throws IOException {
    // Given producer 7 with batches 0..5 over several segments (snapshots at each roll)
    Map<String, String> configs = Map.of("segment.bytes", "200");
    PartitionLog log = open(configs);
    for (int seq = 0; seq < 6; seq++) {
      log.append(idempotent(7, (short) 0, seq, T0, "s" + seq), 0);
    }
    log.close();
    opened.remove(log);

    // When reopened after a clean close, a retry of batch 5 is recognized and 6 must come next
    PartitionLog reopened = open(configs, new LoadState(6, 0, true));
    assertThat(reopened.append(idempotent(7, (short) 0, 5, T0, "s5"), 0).firstOffset())
        .isEqualTo(5);
    assertThrows(
        OutOfOrderSequenceException.class,
        () -> reopened.append(idempotent(7, (short) 0, 7, T0, "gap"), 0));
    reopened.append(idempotent(7, (short) 0, 6, T0, "s6"), 0);
    reopened.markOffline(); // a crash: no snapshot at the log end, so the log is replayed

    PartitionLog recovered = open(configs, new LoadState(0, 0, false));
    assertThat(recovered.append(idempotent(7, (short) 0, 6, T0, "s6"), 0).firstOffset())
        .isEqualTo(6);

    // and after a truncation that removes batches 5 and 6, sequence 5 is expected again
    recovered.truncateTo(5);
    assertThrows(
        OutOfOrderSequenceException.class,
        () -> recovered.append(idempotent(7, (short) 0, 7, T0, "x"), 0));
    assertThat(recovered.append(idempotent(7, (short) 0, 5, T0, "s5-again"), 0).firstOffset())
        .isEqualTo(5);
    assertThat(readAllValues(recovered)).containsExactly("s0", "s1", "s2", "s3", "s4", "s5-again");
  }

  @Test
  void logAppendTimeTopicsStampTheBrokerTime() throws IOException {
    PartitionLog log = open(Map.of("message.timestamp.type", "LogAppendTime"));

    LogAppendInfo info = log.append(batch(42, "a"), 0);

    assertThat(info.logAppendTimeMs()).isEqualTo(T0);
    RecordBatch stored = log.read(0, 1000, Long.MAX_VALUE).records().batches().iterator().next();
    assertThat(stored.timestampType()).isEqualTo(TimestampType.LOG_APPEND_TIME);
    assertThat(stored.maxTimestamp()).isEqualTo(T0);
    stored.ensureValid();
  }

  @Test
  void rollsOnSegmentBytesSegmentMsAndAFullIndex() throws IOException {
    // segment.bytes: the third 1 KiB batch no longer fits 2.5 KiB.
    PartitionLog bySize =
        PartitionLog.open(
            logDir.resolve("size-0"),
            LogConfig.parse(Map.of("segment.bytes", "2500")),
            LoadState.NEW,
            services);
    opened.add(bySize);
    for (int i = 0; i < 3; i++) {
      bySize.append(TestBatches.sized(1, 1000, T0), 0);
    }
    assertThat(bySize.numberOfSegments()).isEqualTo(2);
    assertThat(Files.exists(bySize.dir().resolve("00000000000000000002.log"))).isTrue();

    // segment.ms: a batch stamped later than the first by more than segment.ms starts a segment.
    PartitionLog byTime =
        PartitionLog.open(
            logDir.resolve("time-0"),
            LogConfig.parse(Map.of("segment.ms", "1000")),
            LoadState.NEW,
            services);
    opened.add(byTime);
    byTime.append(batch(T0, "a"), 0);
    byTime.append(batch(T0 + 1000, "b"), 0);
    assertThat(byTime.numberOfSegments()).isEqualTo(1);
    byTime.append(batch(T0 + 1001, "c"), 0);
    assertThat(byTime.numberOfSegments()).isEqualTo(2);

    // A full index: room for two 8-byte entries, an entry after every batch.
    PartitionLog byIndex =
        PartitionLog.open(
            logDir.resolve("index-0"),
            LogConfig.parse(Map.of("segment.index.bytes", "24", "index.interval.bytes", "0")),
            LoadState.NEW,
            services);
    opened.add(byIndex);
    for (int i = 0; i < 6; i++) {
      byIndex.append(batch(T0 + i, "r" + i), 0);
    }
    assertThat(byIndex.numberOfSegments()).isGreaterThan(1);
    assertThat(values(byIndex.read(0, Integer.MAX_VALUE, Long.MAX_VALUE).records())).isNotEmpty();
    for (long offset = 0; offset < 6; offset++) {
      assertThat(offsets(byIndex.read(offset, 1, Long.MAX_VALUE).records()))
          .first()
          .isEqualTo(offset);
    }
  }

  @Test
  void truncateToRemovesWholeBatchesAndTheEpochsAfterThem() throws IOException {
    // Given epochs 1 (offsets 0-3) and 2 (offsets 4-7) over several segments; when truncated to 5
    // then the batch holding 5 (4-5) goes, with epoch 2.
    PartitionLog log = open(Map.of("segment.bytes", "200"));
    log.append(batch(T0, "a", "b"), 1);
    log.append(batch(T0, "c", "d"), 1);
    log.append(batch(T0, "e", "f"), 2);
    log.append(batch(T0, "g", "h"), 2);
    assertThat(log.endOffsetForEpoch(1)).isEqualTo(new EpochEndOffset(1, 4));

    assertThat(log.truncateTo(5)).isTrue();

    assertThat(log.logEndOffset()).isEqualTo(4);
    assertThat(log.latestEpoch()).isEqualTo(1);
    assertThat(log.endOffsetForEpoch(2)).isEqualTo(EpochEndOffset.UNDEFINED);
    assertThat(log.endOffsetForEpoch(1)).isEqualTo(new EpochEndOffset(1, 4));
    assertThat(readAllValues(log)).containsExactly("a", "b", "c", "d");
    log.append(batch(T0, "i"), 3);
    assertThat(log.endOffsetForEpoch(3)).isEqualTo(new EpochEndOffset(3, 5));
    assertThat(log.truncateTo(100)).isFalse();
    // An epoch that starts at the log end (led without an append) goes even when no record does.
    log.assignLeaderEpoch(4);
    assertThat(log.truncateTo(5)).isFalse();
    assertThat(log.latestEpoch()).isEqualTo(3);
    // The truncation survives a reopen, epochs included.
    log.close();
    opened.remove(log);
    PartitionLog reopened = open(Map.of("segment.bytes", "200"), new LoadState(5, 0, true));
    assertThat(reopened.logEndOffset()).isEqualTo(5);
    assertThat(reopened.endOffsetForEpoch(2)).isEqualTo(new EpochEndOffset(1, 4));
    assertThat(reopened.endOffsetForEpoch(3)).isEqualTo(new EpochEndOffset(3, 5));
    assertThat(readAllValues(reopened)).containsExactly("a", "b", "c", "d", "i");
  }

  @Test
  void truncateFullyAndStartAtEmptiesTheLog() throws IOException {
    PartitionLog log = open(Map.of("segment.bytes", "200"));
    log.append(batch(T0, "a", "b"), 1);
    log.append(batch(T0, "c", "d"), 1);

    log.truncateFullyAndStartAt(100);

    assertThat(log.logStartOffset()).isEqualTo(100);
    assertThat(log.logEndOffset()).isEqualTo(100);
    assertThat(log.latestEpoch()).isEqualTo(RecordBatch.NO_PARTITION_LEADER_EPOCH);
    assertThat(log.numberOfSegments()).isEqualTo(1);
    assertThat(log.append(batch(T0, "x"), 2).firstOffset()).isEqualTo(100);
    assertThrows(OffsetOutOfRangeException.class, () -> log.read(0, 100, Long.MAX_VALUE));
  }

  @Test
  void offsetForTimestampFindsTheFirstRecordAtOrAfterIt() throws IOException {
    PartitionLog log = open(Map.of("segment.bytes", "300", "index.interval.bytes", "0"));
    for (int i = 0; i < 20; i++) {
      log.append(batch(T0 + i * 10, "r" + i), 0);
    }

    assertThat(log.offsetForTimestamp(T0 + 55).map(found -> found.offset)).contains(6L);
    assertThat(log.offsetForTimestamp(T0 + 60).map(found -> found.offset)).contains(6L);
    assertThat(log.offsetForTimestamp(0).map(found -> found.offset)).contains(0L);
    assertThat(log.offsetForTimestamp(T0 + 191)).isEmpty();
    TimestampAndOffset last = log.offsetForTimestamp(T0 + 190).orElseThrow();
    assertThat(last.offset).isEqualTo(19);
    assertThat(last.timestamp).isEqualTo(T0 + 190);
  }

  @Test
  void retentionDeletesOldSegmentsButNeverTheActiveOne() throws IOException {
    // Given 4 segments of one batch each, stamped T0..T0+3h (ahead of the clock, so allowed to
    // be); when time passes retention.ms
    PartitionLog log =
        open(
            Map.of(
                "segment.bytes",
                "100",
                "retention.ms",
                "7200000",
                "message.timestamp.after.max.ms",
                String.valueOf(Long.MAX_VALUE)));
    for (int i = 0; i < 4; i++) {
      log.append(batch(T0 + i * 3_600_000L, "r" + i), 0);
    }
    assertThat(log.numberOfSegments()).isEqualTo(4);
    time.setCurrentTimeMs(T0 + 2 * 3_600_000L + 1);

    assertThat(log.deleteOldSegments()).isEqualTo(1);
    assertThat(log.logStartOffset()).isEqualTo(1);
    time.setCurrentTimeMs(T0 + 100 * 3_600_000L);
    assertThat(log.deleteOldSegments()).isEqualTo(2);

    assertThat(log.numberOfSegments()).isEqualTo(1);
    assertThat(log.logStartOffset()).isEqualTo(3);
    assertThat(values(log.read(3, 1000, Long.MAX_VALUE).records())).containsExactly("r3");
    assertThrows(OffsetOutOfRangeException.class, () -> log.read(2, 1000, Long.MAX_VALUE));
  }

  /**
   * As Kafka's asynchronous segment deletion: a read answered from a segment that then leaves the
   * log (here by DeleteRecords; retention, truncation and the cleaner's swap go the same way) stays
   * readable, its files gone from the directory, until {@code file.delete.delay.ms} has passed;
   * then its file is closed, and the same read would fail while being sent.
   */
  @Test
  void aReadAnsweredFromASegmentThatIsDeletedStaysReadableForFileDeleteDelayMs()
      throws IOException {
    List<Long> delays = new ArrayList<>();
    List<FileRecords> closing = new ArrayList<>();
    LogServices delaying =
        new LogServices(
            time,
            Runnable::run,
            (dir, e) -> {},
            nanos -> {},
            (delayMs, file) -> {
              delays.add(delayMs);
              closing.add(file);
            });
    PartitionLog log =
        PartitionLog.open(
            logDir.resolve("kept-0"),
            LogConfig.parse(Map.of("segment.bytes", "100", "file.delete.delay.ms", "1234")),
            LoadState.NEW,
            delaying);
    opened.add(log);
    for (int i = 0; i < 3; i++) {
      log.append(batch(T0, "r" + i), 0);
    }
    LogReadInfo answered = log.read(0, 1000, Long.MAX_VALUE);

    log.deleteRecordsBefore(2);

    try (var files = Files.list(log.dir())) {
      assertThat(files.map(f -> f.getFileName().toString()))
          .noneMatch(name -> name.startsWith("00000000000000000000."));
    }
    assertThat(values(answered.records())).containsExactly("r0");
    assertThat(delays).containsExactly(1234L, 1234L);
    for (FileRecords file : closing) {
      file.closeHandlers();
    }
    assertThatThrownBy(() -> values(answered.records()))
        .hasRootCauseInstanceOf(ClosedChannelException.class);
  }

  @Test
  void retentionBytesKeepsTheNewestSegmentsWithinTheLimit() throws IOException {
    PartitionLog log = open(Map.of("segment.bytes", "1100"));
    int batchBytes = 0;
    for (int i = 0; i < 5; i++) {
      batchBytes = log.append(TestBatches.sized(1, 1000, T0), 0).sizeInBytes();
    }
    assertThat(log.numberOfSegments()).isEqualTo(5);
    log.updateConfig(
        LogConfig.parse(
            Map.of("segment.bytes", "1100", "retention.bytes", String.valueOf(2 * batchBytes))));

    assertThat(log.deleteOldSegments()).isEqualTo(3);

    assertThat(log.sizeInBytes()).isEqualTo(2L * batchBytes);
    assertThat(log.logStartOffset()).isEqualTo(3);
  }

  @Test
  void deleteRecordsMovesTheLogStartOffsetAndDropsWholeSegments() throws IOException {
    PartitionLog log = open(Map.of("segment.bytes", "200"));
    for (int i = 0; i < 4; i++) {
      log.append(batch(T0, "a" + i, "b" + i), 0);
    }
    int segmentsBefore = log.numberOfSegments();

    assertThat(log.deleteRecordsBefore(5)).isEqualTo(5);

    assertThat(log.numberOfSegments()).isLessThan(segmentsBefore);
    assertThrows(OffsetOutOfRangeException.class, () -> log.read(4, 1000, Long.MAX_VALUE));
    assertThat(offsets(log.read(5, 1000, Long.MAX_VALUE).records())).contains(5L);
    assertThat(log.deleteRecordsBefore(2)).isEqualTo(5);
    assertThrows(OffsetOutOfRangeException.class, () -> log.deleteRecordsBefore(9));
  }

  @Test
  void flushMessagesMovesTheRecoveryPoint() throws IOException {
    PartitionLog log = open(Map.of("flush.messages", "3"));
    log.append(batch(T0, "a", "b"), 0);
    assertThat(log.recoveryPoint()).isZero();

    log.append(batch(T0, "c"), 0);

    assertThat(log.recoveryPoint()).isEqualTo(3);
  }

  @Test
  void flushMsFlushesOnTheNextAppendAfterTheInterval() throws IOException {
    PartitionLog log = open(Map.of("flush.ms", "1000"));
    log.append(batch(T0, "a"), 0);
    assertThat(log.recoveryPoint()).isZero();
    time.sleep(1000);

    log.append(batch(T0, "b"), 0);

    assertThat(log.recoveryPoint()).isEqualTo(2);
  }

  @Test
  void rolledSegmentsAreFlushedSoTheRecoveryPointFollows() throws IOException {
    PartitionLog log = open(Map.of("segment.bytes", "100"));
    log.append(batch(T0, "a"), 0);
    log.append(batch(T0, "b"), 0);

    assertThat(log.recoveryPoint()).isEqualTo(1);
  }

  @Test
  void anEpochPastTheLogEndIsDroppedAtLoadAndFromTheFileByTheNextAppend() throws IOException {
    // Given a log led at epoch 1 with two records, whose history names an epoch 2 from offset 2
    // (its records lost in a crash)
    PartitionLog log = open(Map.of());
    log.append(batch(T0, "a", "b"), 1);
    log.close();
    opened.remove(log);
    Path file = log.dir().resolve("leader-epoch-checkpoint");
    Files.write(file, List.of("0", "2", "1 0", "2 2"));

    // When it loads, epoch 2 is dropped: it holds nothing (the file keeps it until the log grows)
    PartitionLog reopened = open(Map.of(), new LoadState(2, 0, true));
    assertThat(reopened.latestEpoch()).isEqualTo(1);
    assertThat(Files.readAllLines(file)).containsExactly("0", "2", "1 0", "2 2");

    // Then a follower's append of epoch-1 records at offset 2 writes the trimmed history first
    reopened.appendAsFollower(
        MemoryRecords.withRecords(
            2L, Compression.NONE, 1, new SimpleRecord("c".getBytes(StandardCharsets.UTF_8))));
    assertThat(Files.readAllLines(file)).containsExactly("0", "1", "1 0");
    assertThat(reopened.endOffsetForEpoch(1)).isEqualTo(new EpochEndOffset(1, 3));
  }

  @Test
  void becomingLeaderWritesItsEpochOnlyBeforeTheLogGrows() throws IOException {
    // Given a log with records of epoch 1
    PartitionLog log = open(Map.of());
    log.append(batch(T0, "a", "b"), 1);
    Path file = log.dir().resolve("leader-epoch-checkpoint");

    // When it becomes leader at epoch 2: followers learn where epoch 1 ended, nothing is written
    log.assignLeaderEpoch(2);
    assertThat(log.endOffsetForEpoch(1)).isEqualTo(new EpochEndOffset(1, 2));
    assertThat(Files.readAllLines(file)).containsExactly("0", "1", "1 0");

    // Then its first append writes epoch 2 before its records
    log.append(batch(T0, "c"), 2);
    assertThat(Files.readAllLines(file)).containsExactly("0", "2", "1 0", "2 2");
  }

  @Test
  void closingALogWhoseProducersDidNotChangeWritesNoSnapshot() throws IOException {
    // Given a log with an idempotent producer's batch, closed (a snapshot at offset 1)
    PartitionLog log = open(Map.of());
    log.append(idempotent(7L, (short) 0, 0, T0, "a"), 0);
    log.close();
    opened.remove(log);
    Path snapshot = log.dir().resolve("00000000000000000001.snapshot");
    Object written = Files.getAttribute(snapshot, "unix:ino");

    // When it is loaded and closed again with no append, the snapshot is the same file
    PartitionLog idle = open(Map.of(), new LoadState(1, 0, true));
    idle.close();
    opened.remove(idle);
    assertThat(Files.getAttribute(snapshot, "unix:ino")).isEqualTo(written);

    // And after an append, closing writes the next one
    PartitionLog busy = open(Map.of(), new LoadState(1, 0, true));
    busy.append(idempotent(7L, (short) 0, 1, T0, "b"), 0);
    busy.close();
    opened.remove(busy);
    assertThat(busy.dir().resolve("00000000000000000002.snapshot")).exists();
  }

  @Test
  void aReopenedLogHasTheSameContentAndAcceptsAppends() throws IOException {
    PartitionLog log = open(Map.of("segment.bytes", "300"));
    for (int i = 0; i < 10; i++) {
      log.append(batch(T0 + i, "r" + i), 1);
    }
    log.close();
    opened.remove(log);

    PartitionLog reopened = open(Map.of("segment.bytes", "300"), new LoadState(10, 0, true));
    reopened.append(batch(T0, "r10"), 2);

    assertThat(reopened.logEndOffset()).isEqualTo(11);
    assertThat(readAllValues(reopened)).hasSize(11).startsWith("r0").endsWith("r10");
    assertThat(reopened.endOffsetForEpoch(1)).isEqualTo(new EpochEndOffset(1, 10));
  }

  /** The memory mappings this process holds of files in {@code dir}, from /proc/self/maps. */
  private static long mappingsOf(Path dir) throws IOException {
    return Files.readAllLines(Path.of("/proc/self/maps")).stream()
        .filter(line -> line.endsWith(".index") || line.endsWith(".timeindex"))
        .filter(line -> line.contains(dir.toString()))
        .count();
  }

  @Test
  void theTopicIdIsWrittenInTheBackgroundOrBeforeTheFirstAppend() throws IOException {
    // Given a flusher that holds what it is given, as one behind on fsyncs does
    List<Runnable> held = new ArrayList<>();
    PartitionLog log = openWithFlusher(held::add);
    opened.add(log);
    Path metadata = log.dir().resolve(PartitionMetadataFile.FILE_NAME);
    Uuid topicId = Uuid.randomUuid();

    // When a topic id is recorded: it is known at once, and written by the flusher, not the caller
    log.recordTopicId(topicId);
    assertThat(log.topicId()).contains(topicId.toString());
    assertThat(metadata).doesNotExist();
    assertThat(held).hasSize(1);

    // Then the first append writes it before any record
    log.append(batch(T0, "a"), 0);
    assertThat(Files.readAllLines(metadata)).containsExactly("0", "1", topicId.toString());

    // And the flusher's late turn writes nothing more
    long modified = Files.getLastModifiedTime(metadata).toMillis();
    Files.setLastModifiedTime(metadata, FileTime.fromMillis(0));
    held.forEach(Runnable::run);
    assertThat(Files.getLastModifiedTime(metadata).toMillis()).isZero().isNotEqualTo(modified);
  }

  @Test
  void aTopicIdRecordedJustBeforeTheLogIsDeletedIsNeverWritten() throws IOException {
    List<Runnable> held = new ArrayList<>();
    PartitionLog log = openWithFlusher(held::add);
    log.recordTopicId(Uuid.randomUuid());

    log.delete();
    held.forEach(Runnable::run);

    assertThat(logDir.resolve("orders-0")).doesNotExist();
  }

  /** A new log whose background flushes go to {@code flusher}. */
  private PartitionLog openWithFlusher(Executor flusher) throws IOException {
    return PartitionLog.open(
        logDir.resolve("orders-0"),
        LogConfig.parse(Map.of()),
        LoadState.NEW,
        new LogServices(time, flusher, (dir, e) -> {}));
  }

  /** The file descriptors this process holds on files in {@code dir}, from /proc/self/fd. */
  private static long descriptorsOf(Path dir) throws IOException {
    long count = 0;
    try (var fds = Files.list(Path.of("/proc/self/fd"))) {
      for (Path fd : (Iterable<Path>) fds::iterator) {
        try {
          if (Files.readSymbolicLink(fd).startsWith(dir)) {
            count++;
          }
        } catch (IOException e) {
          // closed meanwhile
        }
      }
    }
    return count;
  }

  private static final Map<String, String> SMALL_SEGMENTS =
      Map.of("segment.bytes", "300", "index.interval.bytes", "0");

  /** A log of 20 records in several segments, with an index entry per batch, still open. */
  private PartitionLog multiSegmentLog() throws IOException {
    PartitionLog log = open(SMALL_SEGMENTS);
    for (int i = 0; i < 20; i++) {
      log.append(batch(T0 + i * 10, "r" + i), 1);
    }
    return log;
  }

  /** Closes {@code log} cleanly and loads it again. */
  private PartitionLog reload(PartitionLog log) throws IOException {
    log.close();
    opened.remove(log);
    return open(SMALL_SEGMENTS, new LoadState(log.logEndOffset(), 0, true));
  }

  @Test
  void segmentFilesAreOpenOnlyOnceUsedAfterALoad() throws IOException {
    // Given a log of several segments, closed and loaded again
    PartitionLog reopened = reload(multiSegmentLog());

    // Then no segment file is open, nor does a read at the log end open one (what followers of
    // an idle partition poll for); a read opens the one it reads, an append the active one
    assertThat(descriptorsOf(reopened.dir())).isZero();
    long end = reopened.logEndOffset();
    assertThat(reopened.read(end, 1000, Long.MAX_VALUE).records().sizeInBytes()).isZero();
    assertThat(reopened.read(0, 1000, 0).records().sizeInBytes()).isZero();
    assertThat(descriptorsOf(reopened.dir())).isZero();
    assertThat(offsets(reopened.read(1, 1, Long.MAX_VALUE).records())).containsExactly(1L);
    assertThat(descriptorsOf(reopened.dir())).isEqualTo(1);
    reopened.append(batch(T0 + 200, "r20"), 1);
    assertThat(descriptorsOf(reopened.dir())).isEqualTo(2);
    assertThat(readAllValues(reopened)).hasSize(21).startsWith("r0").endsWith("r20");
  }

  @Test
  void indexesAreMappedOnlyWhileInUse() throws IOException {
    // Given a log of several segments: only the active one's two indexes are mapped
    PartitionLog log = multiSegmentLog();
    assertThat(log.numberOfSegments()).isGreaterThanOrEqualTo(4);
    assertThat(mappingsOf(log.dir())).isEqualTo(2);

    // When it is loaded again: nothing is mapped until used
    PartitionLog reopened = reload(log);
    assertThat(mappingsOf(reopened.dir())).isZero();

    // A read maps the offset index of the segment it looks in, an append both indexes of the
    // active segment
    assertThat(offsets(reopened.read(1, 1, Long.MAX_VALUE).records())).containsExactly(1L);
    assertThat(mappingsOf(reopened.dir())).isEqualTo(1);
    reopened.append(batch(T0 + 200, "r20"), 1); // rolls: the new segment has no entry yet
    reopened.append(batch(T0 + 210, "r21"), 1);
    assertThat(mappingsOf(reopened.dir())).isEqualTo(3);

    // And every lookup still finds what it did
    for (long offset = 0; offset <= 21; offset++) {
      assertThat(offsets(reopened.read(offset, 1, Long.MAX_VALUE).records()))
          .containsExactly(offset);
    }
    assertThat(reopened.offsetForTimestamp(T0 + 45).map(found -> found.offset)).contains(5L);
  }

  @Test
  void missingOrDamagedIndexesAreRebuilt() throws IOException {
    PartitionLog log = open(Map.of("segment.bytes", "300", "index.interval.bytes", "0"));
    for (int i = 0; i < 10; i++) {
      log.append(batch(T0 + i * 10, "r" + i), 1);
    }
    log.close();
    opened.remove(log);
    Path dir = log.dir();
    Files.delete(dir.resolve("00000000000000000000.index"));
    Files.write(dir.resolve("00000000000000000003.index"), new byte[] {0, 0, 0, 1, 0x7f, 0, 0, 0});

    PartitionLog reopened =
        open(
            Map.of("segment.bytes", "300", "index.interval.bytes", "0"),
            new LoadState(10, 0, true));

    assertThat(Files.size(dir.resolve("00000000000000000000.index"))).isPositive();
    for (long offset = 0; offset < 10; offset++) {
      assertThat(offsets(reopened.read(offset, 1, Long.MAX_VALUE).records()))
          .containsExactly(offset);
    }
    assertThat(reopened.offsetForTimestamp(T0 + 45).map(found -> found.offset)).contains(5L);
  }

  @Test
  void invalidTopicConfigsAreRefusedWithTheirName() {
    ConfigException e =
        assertThrows(ConfigException.class, () -> LogConfig.parse(Map.of("retention.ms", "-2")));
    assertThat(e.getMessage()).contains("retention.ms");
    assertThrows(
        ConfigException.class, () -> LogConfig.parse(Map.of("message.timestamp.type", "Later")));
    assertThat(LogConfig.DEFAULTS.segmentBytes()).isEqualTo(1 << 30);
    assertThat(LogConfig.DEFAULTS.maxMessageBytes()).isEqualTo(1048588);
    assertThat(LogConfig.DEFAULTS.retentionMs()).isEqualTo(604800000L);
  }
}
