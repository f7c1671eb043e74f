package io.tidelog.broker.log;

import java.io.IOException;
import java.nio.file.Path;

/**
 * Sparse map from offset to byte position in a segment's {@code .log} file.
 *
 * <p>Format (Kafka's {@code .index}): 8-byte entries, each a big-endian 4-byte offset relative to
 * the segment's base offset and a 4-byte file position. The offset of an entry is the last offset
 * of the batch that starts at that position, so a lookup gives a position from which a forward scan
 * of batch headers finds any larger offset.
 *
 * <p>Not thread-safe: the owning {@link PartitionLog}'s thread calls it.
 */
final class OffsetIndex extends AbstractIndex {
  static final int ENTRY_SIZE = 8;

  OffsetIndex(Path file, long baseOffset, int maxIndexSizeBytes) throws IOException {
    super(file, baseOffset, maxIndexSizeBytes, ENTRY_SIZE);
  }

  @Override
  long keyAt(int slot) {
    return baseOffset() + buffer().getInt(position(slot));
  }

  int positionAt(int slot) {
    return buffer().getInt(position(slot) + 4);
  }

  @Override
  boolean entryLooksValid(int slot) {
    return buffer().getInt(position(slot)) >= 0 && positionAt(slot) >= 0;
  }

  /** Adds an entry; offsets and positions must grow strictly. */
  void append(long offset, int position) throws IOException {
    if (entries() > 0 && (offset <= lastOffset() || position <= positionAt(entries() - 1))) {
      throw new IllegalArgumentException(
          "index entry (" + offset + ", " + position + ") does not follow " + lastEntry());
    }
    int relative = relativeOffset(offset);
    int slot = nextSlot();
    buffer().putInt(position(slot), relative);
    buffer().putInt(position(slot) + 4, position);
  }

  /** The entry with the largest offset at most {@code targetOffset}, else the segment start. */
  OffsetPosition lookup(long targetOffset) {
    int slot = largestSlotAtMost(targetOffset, this::keyAt);
    return slot < 0 ? new OffsetPosition(baseOffset(), 0) : entry(slot);
  }

  /** The position of the last indexed batch that starts at or before {@code position}, else 0. */
  int floorPosition(int position) {
    int slot = largestSlotAtMost(position, this::positionAt);
    return slot < 0 ? 0 : positionAt(slot);
  }

  OffsetPosition lastEntry() {
    return entries() == 0 ? new OffsetPosition(baseOffset(), 0) : entry(entries() - 1);
  }

  long lastOffset() {
    return lastEntry().offset();
  }

  /** Removes every entry whose offset is at least {@code offset}. */
  void truncateTo(long offset) {
    int slot = largestSlotAtMost(offset - 1, this::keyAt);
    truncateToSlot(slot + 1);
  }

  private OffsetPosition entry(int slot) {
    return new OffsetPosition(keyAt(slot), positionAt(slot));
  }

  /** An offset and the byte position of the batch that holds it. */
  record OffsetPosition(long offset, int position) {}
}
