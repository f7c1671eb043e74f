package io.tidelog.broker.log;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.lang.reflect.Field;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.function.IntToLongFunction;

/**
 * A memory-mapped file of fixed-size entries, sorted by key, that belongs to one {@link
 * LogSegment}. Entries store offsets relative to the segment's base offset, as in Kafka.
 *
 * <p>On open only the valid prefix counts: entries must increase strictly, so a preallocated,
 * zero-filled tail left by a crash is ignored. An index is a hint that recovery can rebuild from
 * the log at any time.
 *
 * <p>Not thread-safe: the owning {@link PartitionLog}'s thread calls it.
 */
abstract class AbstractIndex implements AutoCloseable {
  private static final int PAGE_BYTES = 4096;
  private final int entrySize;
  private final long baseOffset;
  private final int maxIndexSizeBytes;
  private final Path file;
  private MappedByteBuffer mmap;
  private int entries;

  AbstractIndex(Path file, long baseOffset, int maxIndexSizeBytes, int entrySize)
      throws IOException {
    this.file = file;
    this.baseOffset = baseOffset;
    this.entrySize = entrySize;
    this.maxIndexSizeBytes = maxIndexSizeBytes - maxIndexSizeBytes % entrySize;
    if (this.maxIndexSizeBytes < entrySize) {
      throw new IllegalArgumentException(
          "index size " + maxIndexSizeBytes + " is below one entry of " + entrySize + " bytes");
    }
    boolean newlyCreated = !Files.exists(file) || Files.size(file) == 0;
    map(
        newlyCreated
            ? this.maxIndexSizeBytes
            : (int) Math.min(Files.size(file), Integer.MAX_VALUE));
    this.entries = newlyCreated ? 0 : countValidPrefix();
  }

  /** The sort key of the entry in {@code slot}, as an absolute value. */
  abstract long keyAt(int slot);

  /** Whether the fields of {@code slot} are in range, so that it can count as written. */
  abstract boolean entryLooksValid(int slot);

  final long baseOffset() {
    return baseOffset;
  }

  final int entries() {
    return entries;
  }

  final int maxEntries() {
    return mmap.limit() / entrySize;
  }

  final boolean isFull() {
    return entries >= maxEntries();
  }

  final int sizeInBytes() {
    return entries * entrySize;
  }

  final ByteBuffer buffer() {
    return mmap;
  }

  final int position(int slot) {
    return slot * entrySize;
  }

  /**
   * Reserves the next slot for an entry; the caller writes it at {@link #position(int)}.
   *
   * <p>The file is sparse (its length set, its pages unallocated), so an entry that starts a new
   * page first writes that page's zeros through the file channel: on a full file system that fails
   * as an {@link IOException}, where a store into an unallocated page of the mapping would be a
   * SIGBUS, an {@link InternalError} somewhere later.
   *
   * @throws IOException when the file system has no room for the entry's page
   */
  final int nextSlot() throws IOException {
    if (isFull()) {
      throw new IllegalStateException(
          "index "
              + file
              + " is full with "
              + entries
              + " entries; the segment should have rolled");
    }
    int start = entries * entrySize;
    int written = pageEnd(start); // the pages up to here hold entries, so they are allocated
    int end = Math.min(pageEnd(start + entrySize), mmap.limit());
    if (end > written) {
      try (FileChannel channel = FileChannel.open(file, StandardOpenOption.WRITE)) {
        ByteBuffer zeros = ByteBuffer.allocate(end - written);
        while (zeros.hasRemaining()) {
          channel.write(zeros, written + zeros.position());
        }
      }
    }
    return entries++;
  }

  /** The end of the page that holds byte {@code position - 1} (0 for 0). */
  private static int pageEnd(int position) {
    return (position + PAGE_BYTES - 1) / PAGE_BYTES * PAGE_BYTES;
  }

  /** The largest slot whose {@code key} is at most {@code target}, or -1 when there is none. */
  final int largestSlotAtMost(long target, IntToLongFunction key) {
    int lo = 0;
    int hi = entries - 1;
    int found = -1;
    while (lo <= hi) {
      int mid = (lo + hi) >>> 1;
      if (key.applyAsLong(mid) <= target) {
        found = mid;
        lo = mid + 1;
      } else {
        hi = mid - 1;
      }
    }
    return found;
  }

  /** Drops every entry from {@code slot} on. */
  final void truncateToSlot(int slot) {
    entries = Math.max(0, Math.min(entries, slot));
  }

  final int relativeOffset(long offset) {
    long relative = offset - baseOffset;
    if (relative < 0 || relative > Integer.MAX_VALUE) {
      throw new IllegalArgumentException(
          "offset " + offset + " does not fit an index with base offset " + baseOffset);
    }
    return (int) relative;
  }

  /** Makes room for a full index again, for the segment that becomes active after a reload. */
  final void resizeForAppends() throws IOException {
    if (mmap.limit() < maxIndexSizeBytes) {
      remap(maxIndexSizeBytes);
    }
  }

  /** Shrinks the file to the entries it holds, as Kafka does when a segment becomes inactive. */
  final void trimToValidSize() throws IOException {
    if (mmap.limit() != sizeInBytes()) {
      remap(sizeInBytes());
    }
  }

  final void flush() {
    mmap.force();
  }

  @Override
  public final void close() throws IOException {
    trimToValidSize();
    unmap(mmap);
  }

  /** Releases the mapping without touching the file, for a log directory that failed. */
  final void closeHandler() {
    unmap(mmap);
  }

  final void delete() throws IOException {
    unmap(mmap);
    Files.deleteIfExists(file);
  }

  private int countValidPrefix() {
    int valid = 0;
    int total = mmap.limit() / entrySize;
    long previous = Long.MIN_VALUE;
    while (valid < total) {
      long key = keyAt(valid);
      if (!entryLooksValid(valid) || key <= previous) {
        break;
      }
      previous = key;
      valid++;
    }
    return valid;
  }

  private void remap(int newSizeBytes) throws IOException {
    MappedByteBuffer old = mmap;
    unmap(old);
    map(newSizeBytes);
  }

  private void map(int sizeBytes) throws IOException {
    try (RandomAccessFile raf = new RandomAccessFile(file.toFile(), "rw")) {
      raf.setLength(sizeBytes);
      mmap = raf.getChannel().map(FileChannel.MapMode.READ_WRITE, 0, sizeBytes);
    }
  }

  /**
   * Unmaps now rather than at some later garbage collection: the file may be truncated or deleted
   * next, and thousands of segments would otherwise pin their mappings. Callers never touch the
   * buffer afterwards (single owner thread).
   */
  private static void unmap(MappedByteBuffer buffer) {
    if (buffer == null) {
      return;
    }
    try {
      UNSAFE_INVOKE_CLEANER.invoke(UNSAFE, buffer);
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException("cannot unmap index buffer", e);
    }
  }

  private static final Object UNSAFE;
  private static final java.lang.reflect.Method UNSAFE_INVOKE_CLEANER;

  static {
    try {
      Class<?> unsafeClass = Class.forName("sun.misc.Unsafe");
      Field field = unsafeClass.getDeclaredField("theUnsafe");
      field.setAccessible(true);
      UNSAFE = field.get(null);
      UNSAFE_INVOKE_CLEANER = unsafeClass.getMethod("invokeCleaner", ByteBuffer.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }
}
