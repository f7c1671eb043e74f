package io.tidelog.broker.log;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.MemoryRecordsBuilder;
import org.apache.kafka.common.record.Record;
import org.apache.kafka.common.record.RecordBatch;
import org.apache.kafka.common.record.Records;
import org.apache.kafka.common.record.SimpleRecord;
import org.apache.kafka.common.record.TimestampType;

/** Builds record batches the way a Kafka producer does, and reads values back. */
final class TestBatches {
  private TestBatches() {}

  /** One batch with a record per value, all stamped {@code timestampMs}. */
  static MemoryRecords batch(long timestampMs, String... values) {
    return idempotent(
        RecordBatch.NO_PRODUCER_ID,
        RecordBatch.NO_PRODUCER_EPOCH,
        RecordBatch.NO_SEQUENCE,
        timestampMs,
        values);
  }

  static MemoryRecords idempotent(
      long producerId, short epoch, int baseSequence, long timestampMs, String... values) {
    return producerBatch(false, producerId, epoch, baseSequence, timestampMs, values);
  }

  /** One batch of a transactional producer, a record per value. */
  static MemoryRecords transactional(
      long producerId, short epoch, int baseSequence, long timestampMs, String... values) {
    return producerBatch(true, producerId, epoch, baseSequence, timestampMs, values);
  }

  private static MemoryRecords producerBatch(
      boolean transactional,
      long producerId,
      short epoch,
      int baseSequence,
      long timestampMs,
      String... values) {
    MemoryRecordsBuilder builder =
        MemoryRecords.builder(
            ByteBuffer.allocate(1024 + values.length * 64),
            RecordBatch.MAGIC_VALUE_V2,
            Compression.NONE,
            TimestampType.CREATE_TIME,
            0L,
            RecordBatch.NO_TIMESTAMP,
            producerId,
            epoch,
            baseSequence,
            transactional,
            RecordBatch.NO_PARTITION_LEADER_EPOCH);
    for (String value : values) {
      builder.append(new SimpleRecord(timestampMs, null, value.getBytes(StandardCharsets.UTF_8)));
    }
    return builder.build();
  }

  /** One batch of {@code count} records of {@code recordBytes} bytes each. */
  static MemoryRecords sized(int count, int recordBytes, long timestampMs) {
    MemoryRecordsBuilder builder =
        MemoryRecords.builder(
            ByteBuffer.allocate(count * (recordBytes + 32) + 128),
            Compression.NONE,
            TimestampType.CREATE_TIME,
            0L);
    for (int i = 0; i < count; i++) {
      builder.append(new SimpleRecord(timestampMs, null, new byte[recordBytes]));
    }
    return builder.build();
  }

  static List<String> values(Records records) {
    List<String> values = new ArrayList<>();
    for (Record record : records.records()) {
      values.add(StandardCharsets.UTF_8.decode(record.value()).toString());
    }
    return values;
  }

  /** Every value from the log start offset to the log end offset, read segment by segment. */
  static List<String> readAllValues(PartitionLog log) {
    List<String> all = new ArrayList<>();
    long offset = log.logStartOffset();
    while (offset < log.logEndOffset()) {
      LogReadInfo read = log.read(offset, Integer.MAX_VALUE, Long.MAX_VALUE);
      all.addAll(values(read.records()));
      offset = read.nextOffset();
    }
    return all;
  }

  static List<Long> offsets(Records records) {
    List<Long> offsets = new ArrayList<>();
    for (Record record : records.records()) {
      offsets.add(record.offset());
    }
    return offsets;
  }
}
