package io.tidelog.broker.log;

import java.io.IOException;
import java.nio.file.Path;
import org.apache.kafka.common.record.RecordBatch;

/**
 * Sparse map from timestamp to offset in a segment.
 *
 * <p>Format (Kafka's {@code .timeindex}): 12-byte entries, each a big-endian 8-byte timestamp and a
 * 4-byte offset relative to the segment's base offset. Timestamps grow strictly: an entry is only
 * added when the segment's largest timestamp so far has grown. An entry (t, o) means that no record
 * before offset o has a timestamp above t.
 *
 * <p>Not thread-safe: the owning {@link PartitionLog}'s thread calls it.
 */
final class TimeIndex extends AbstractIndex {
  static final int ENTRY_SIZE = 12;

  TimeIndex(Path file, long baseOffset, int maxIndexSizeBytes) throws IOException {
    super(file, baseOffset, maxIndexSizeBytes, ENTRY_SIZE);
  }

  @Override
  long keyAt(int slot) {
    return buffer().getLong(position(slot));
  }

  long offsetAt(int slot) {
    return baseOffset() + buffer().getInt(position(slot) + 8);
  }

  @Override
  boolean entryLooksValid(int slot) {
    return keyAt(slot) >= 0 && buffer().getInt(position(slot) + 8) >= 0;
  }

  /**
   * Adds an entry when {@code timestamp} is larger than the last one. {@code skipFullCheck} lets a
   * segment that becomes inactive record its final largest timestamp into the last slot.
   */
  void maybeAppend(long timestamp, long offset, boolean skipFullCheck) throws IOException {
    if (timestamp == RecordBatch.NO_TIMESTAMP || entries() > 0 && timestamp <= lastTimestamp()) {
      return;
    }
    if (entries() > 0 && offset < lastEntry().offset()) {
      throw new IllegalArgumentException(
          "time index entry (" + timestamp + ", " + offset + ") goes back from " + lastEntry());
    }
    if (skipFullCheck && isFull()) {
      truncateToSlot(entries() - 1);
    }
    int relative = relativeOffset(offset);
    int slot = nextSlot();
    buffer().putLong(position(slot), timestamp);
    buffer().putInt(position(slot) + 8, relative);
  }

  /**
   * The entry with the largest timestamp at most {@code targetTimestamp}, else (no timestamp, the
   * segment's base offset): a scan from its offset finds the first record at or after the target.
   */
  TimestampOffset lookup(long targetTimestamp) {
    int slot = largestSlotAtMost(targetTimestamp, this::keyAt);
    return slot < 0 ? new TimestampOffset(RecordBatch.NO_TIMESTAMP, baseOffset()) : entry(slot);
  }

  TimestampOffset lastEntry() {
    return entries() == 0
        ? new TimestampOffset(RecordBatch.NO_TIMESTAMP, baseOffset())
        : entry(entries() - 1);
  }

  long lastTimestamp() {
    return lastEntry().timestamp();
  }

  /** Removes every entry whose offset is at least {@code offset}. */
  void truncateTo(long offset) {
    int slot = largestSlotAtMost(offset - 1, this::offsetAt);
    truncateToSlot(slot + 1);
  }

  private TimestampOffset entry(int slot) {
    return new TimestampOffset(keyAt(slot), offsetAt(slot));
  }

  /** A timestamp and the offset from which it applies. */
  record TimestampOffset(long timestamp, long offset) {}
}
