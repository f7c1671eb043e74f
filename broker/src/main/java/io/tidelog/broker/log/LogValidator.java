package io.tidelog.broker.log;

import java.nio.ByteBuffer;
import org.apache.kafka.common.InvalidRecordException;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.errors.ApiException;
import org.apache.kafka.common.errors.CorruptRecordException;
import org.apache.kafka.common.errors.InvalidTimestampException;
import org.apache.kafka.common.errors.RecordBatchTooLargeException;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.apache.kafka.common.record.CompressionType;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.MemoryRecordsBuilder;
import org.apache.kafka.common.record.MutableRecordBatch;
import org.apache.kafka.common.record.Record;
import org.apache.kafka.common.record.RecordBatch;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.utils.BufferSupplier;
import org.apache.kafka.common.utils.ByteBufferOutputStream;
import org.apache.kafka.common.utils.CloseableIterator;

/**
 * Checks the batches of a produce request against the partition's config and assigns their offsets,
 * with kafka-clients' own {@link MemoryRecords} parser. Nothing is written unless every batch
 * passes, so bad input loses nothing.
 *
 * <p>Not thread-safe (it holds a decompression buffer cache): one per {@link PartitionLog}.
 */
final class LogValidator {
  private final BufferSupplier bufferSupplier = BufferSupplier.create();

  /**
   * Checks magic v2, {@code max.message.bytes}, CRC-32C, and that every batch's record count
   * matches its last offset delta and its records' offset deltas run 0, 1, 2, ...
   *
   * <p>A leader's append ({@code fromProducer}) also refuses records without a key on a compacted
   * topic, as Kafka does, and a compressed batch that decompresses to more than {@code
   * tidelog.max.uncompressed.message.bytes}, counted as it decompresses (record by record, keys and
   * values skipped, never held), so that a compression bomb is stopped at the limit. A follower's
   * append checks neither: its leader took those batches, perhaps under other settings.
   *
   * @throws InvalidRecordException for a wrong magic, count or offset delta, a missing key, or a
   *     producer's control batch
   * @throws CorruptRecordException for a CRC mismatch or trailing bytes that are not a batch
   * @throws RecordTooLargeException for a batch above {@code max.message.bytes}, or above {@code
   *     tidelog.max.uncompressed.message.bytes} once decompressed
   * @throws RecordBatchTooLargeException for a request larger than a segment
   */
  Validated validate(MemoryRecords records, LogConfig config, boolean fromProducer, long nowMs) {
    try {
      return validateBatches(records, config, fromProducer, nowMs);
    } catch (ApiException e) {
      throw e;
    } catch (RuntimeException e) {
      // kafka-clients' parsers throw plain runtime exceptions on some malformed input (a batch
      // length near Integer.MAX_VALUE overflows its bounds check): that is a corrupt request.
      throw new CorruptRecordException("Malformed record batches: " + e);
    }
  }

  private Validated validateBatches(
      MemoryRecords records, LogConfig config, boolean fromProducer, long nowMs) {
    if (records.sizeInBytes() > config.segmentBytes()) {
      throw new RecordBatchTooLargeException(
          "The request has "
              + records.sizeInBytes()
              + " bytes of batches, more than segment.bytes ("
              + config.segmentBytes()
              + ")");
    }
    int batchBytes = 0;
    int recordCount = 0;
    for (MutableRecordBatch batch : records.batches()) {
      if (batch.magic() != RecordBatch.MAGIC_VALUE_V2) {
        throw new InvalidRecordException(
            "Only record batches with magic 2 are accepted; got magic " + batch.magic());
      }
      if (fromProducer && batch.isControlBatch()) {
        // commit and abort markers are a transaction coordinator's to write, as in Kafka
        throw new InvalidRecordException("Clients are not allowed to write control records");
      }
      if (batch.sizeInBytes() > config.maxMessageBytes()) {
        throw new RecordTooLargeException(
            "The record batch has "
                + batch.sizeInBytes()
                + " bytes, more than max.message.bytes ("
                + config.maxMessageBytes()
                + ")");
      }
      batch.ensureValid();
      if (fromProducer && batch.timestampType() == TimestampType.LOG_APPEND_TIME) {
        throw new InvalidTimestampException(
            "Invalid timestamp type in message with offset "
                + batch.baseOffset()
                + ". Producer should not set timestamp type to LogAppendTime.");
      }
      recordCount +=
          validateRecords(
              batch,
              fromProducer && config.compactEnabled(),
              fromProducer && batch.compressionType() != CompressionType.NONE
                  ? config.maxUncompressedMessageBytes()
                  : Long.MAX_VALUE,
              fromProducer && config.messageTimestampType() == TimestampType.CREATE_TIME
                  ? new TimestampBounds(
                      nowMs,
                      config.messageTimestampBeforeMaxMs(),
                      config.messageTimestampAfterMaxMs())
                  : null);
      batchBytes += batch.sizeInBytes();
    }
    if (batchBytes == 0) {
      throw new InvalidRecordException("The request holds no record batch");
    }
    if (batchBytes != records.sizeInBytes()) {
      throw new CorruptRecordException(
          (records.sizeInBytes() - batchBytes) + " trailing bytes are not a whole record batch");
    }
    return new Validated(recordCount);
  }

  /** A producer's CreateTime records must fall within these of the broker's clock. */
  private record TimestampBounds(long nowMs, long beforeMaxMs, long afterMaxMs) {
    void check(Record record) {
      long timestamp = record.timestamp();
      if (timestamp == RecordBatch.NO_TIMESTAMP) {
        return;
      }
      if (nowMs - timestamp > beforeMaxMs || timestamp - nowMs > afterMaxMs) {
        throw new InvalidTimestampException(
            "Timestamp "
                + timestamp
                + " of message with offset "
                + record.offset()
                + " is out of range. The timestamp should be within ["
                + (beforeMaxMs == Long.MAX_VALUE ? Long.MIN_VALUE : nowMs - beforeMaxMs)
                + ", "
                + (afterMaxMs == Long.MAX_VALUE ? Long.MAX_VALUE : nowMs + afterMaxMs)
                + "]");
      }
    }
  }

  private int validateRecords(
      MutableRecordBatch batch,
      boolean requireKeys,
      long maxUncompressedBytes,
      TimestampBounds timestamps) {
    long countFromOffsets = batch.lastOffset() - batch.baseOffset() + 1;
    Integer count = batch.countOrNull();
    if (count == null || count <= 0 || count != countFromOffsets) {
      throw new InvalidRecordException(
          "Record count "
              + count
              + " does not match the last offset delta "
              + (countFromOffsets - 1));
    }
    int seen = 0;
    long uncompressedBytes = 0;
    try (CloseableIterator<Record> it = batch.skipKeyValueIterator(bufferSupplier)) {
      while (it.hasNext()) {
        Record record = it.next();
        uncompressedBytes += record.sizeInBytes();
        if (uncompressedBytes > maxUncompressedBytes) {
          throw new RecordTooLargeException(
              "The record batch decompresses to more than "
                  + LogConfig.MAX_UNCOMPRESSED_MESSAGE_BYTES_CONFIG
                  + " ("
                  + maxUncompressedBytes
                  + " bytes)");
        }
        if (record.offset() != batch.baseOffset() + seen) {
          throw new InvalidRecordException(
              "Record " + seen + " has offset delta " + (record.offset() - batch.baseOffset()));
        }
        if (timestamps != null) {
          timestamps.check(record);
        }
        if (requireKeys && !record.hasKey()) {
          throw new InvalidRecordException("Compacted topic cannot accept message without key");
        }
        seen++;
      }
    }
    if (seen != count) {
      throw new InvalidRecordException(
          "The batch declares " + count + " records but holds " + seen);
    }
    return count;
  }

  /**
   * The validated batches of a producer as the log stores them: as they are, unless the topic's
   * {@code compression.type} names a codec and a batch is in another; such a batch is written again
   * in that codec (at its level), each record with its offset delta, timestamp, key, value and
   * headers, and the batch with its producer id, epoch, base sequence and transactional flag, as
   * Kafka's log validator does. Batches already in the codec are copied as they are.
   */
  MemoryRecords stored(MemoryRecords records, LogConfig config) {
    Compression target = config.compression();
    if (target == null) {
      return records;
    }
    boolean allInTarget = true;
    for (MutableRecordBatch batch : records.batches()) {
      allInTarget &= batch.compressionType() == target.type() || batch.isControlBatch();
    }
    if (allInTarget) {
      return records;
    }
    ByteBufferOutputStream out = new ByteBufferOutputStream(records.sizeInBytes());
    for (MutableRecordBatch batch : records.batches()) {
      if (batch.compressionType() == target.type() || batch.isControlBatch()) {
        batch.writeTo(out);
        continue;
      }
      MemoryRecordsBuilder builder =
          new MemoryRecordsBuilder(
              out,
              RecordBatch.MAGIC_VALUE_V2,
              target,
              TimestampType.CREATE_TIME,
              batch.baseOffset(),
              RecordBatch.NO_TIMESTAMP,
              batch.producerId(),
              batch.producerEpoch(),
              batch.baseSequence(),
              batch.isTransactional(),
              false,
              batch.partitionLeaderEpoch(),
              Integer.MAX_VALUE);
      try (CloseableIterator<Record> it = batch.streamingIterator(bufferSupplier)) {
        while (it.hasNext()) {
          Record record = it.next();
          builder.appendWithOffset(record.offset(), record);
        }
      }
      builder.close();
    }
    ByteBuffer buffer = out.buffer();
    buffer.flip();
    return MemoryRecords.readableRecords(buffer.slice());
  }

  /**
   * Stamps offsets from {@code firstOffset}, the partition leader epoch and, for {@code
   * LogAppendTime} topics, the broker's time into validated batches.
   *
   * @return the largest timestamp of the appended batches
   */
  static long assignOffsets(
      MemoryRecords records, long firstOffset, int leaderEpoch, TimestampType type, long nowMs) {
    long offset = firstOffset;
    long maxTimestamp = RecordBatch.NO_TIMESTAMP;
    for (MutableRecordBatch batch : records.batches()) {
      long lastOffsetDelta = batch.lastOffset() - batch.baseOffset();
      batch.setLastOffset(offset + lastOffsetDelta);
      batch.setPartitionLeaderEpoch(leaderEpoch);
      if (type == TimestampType.LOG_APPEND_TIME) {
        batch.setMaxTimestamp(TimestampType.LOG_APPEND_TIME, nowMs);
      }
      maxTimestamp = Math.max(maxTimestamp, batch.maxTimestamp());
      offset = batch.lastOffset() + 1;
    }
    return maxTimestamp;
  }

  /** What validation learned about an append. */
  record Validated(int recordCount) {}
}
