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
import org.apache.kafka.common.KafkaException;

/**
 * A memory-mapped file of fixed-size entries, sorted by key, that belongs to one {@link
 * LogSegment}. Entries store offsets relative to the segment's base offset, as in Kafka.
 *
 * <p>On open only the valid prefix counts: entries must increase strictly, so a preallocated,
 * zero-filled tail left by a crash is ignored. An index is a hint that recovery can rebuild from
 * the log at any time.
 *
 * <p>Mapped only while in use, as Kafka's {@code LazyIndex}: a loaded log and a segment that is no
 * longer active {@link #release release} their mappings (the entry count stays known), and map
 * again when a lookup or an append next needs them. So a partition nobody wrote or read since the
 * broker started holds no mapping at all, where Kafka holds its active segment's two, and the
 * broker's count of memory mappings ({@code vm.max_map_count}) grows with the partitions in use,
 * not with segments.
 *
 * <p>Not thread-safe: the owning {@link PartitionLog}'s thread calls it.
 */
abstract class AbstractIndex implements AutoCloseable {
  private static final int PAGE_BYTES = 4096;
  private final int entrySize;
  private final long baseOffset;
  private final int maxIndexSizeBytes;
  private final Path file;

  /** The mapping, or null while released. */
  private MappedByteBuffer mmap;

  /** The file's length: what the mapping spans, mapped or not. */
  private int mappedBytes;

  /** How many entries are valid, or {@link #UNCOUNTED} until something asks. */
  private int entries;

  private static final int UNCOUNTED = -1;

  /** Whether entries or the file's length changed since the last {@link #flush}. */
  private boolean dirty;

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
    if (newlyCreated) {
      try (RandomAccessFile raf = new RandomAccessFile(file.toFile(), "rw")) {
        raf.setLength(this.maxIndexSizeBytes); // sparse
      }
      this.mappedBytes = this.maxIndexSizeBytes;
      this.entries = 0;
    } else {
      // Counted, and mapped, when first needed: a segment that recovery rebuilds never is. On
      // a machine with a large read-ahead a first touch of a mapping reads megabytes around it,
      // zeros and all in a preallocated file.
      this.mappedBytes = (int) Math.min(Files.size(file), Integer.MAX_VALUE);
      this.entries = UNCOUNTED;
    }
  }

  /** The sort key of the entry in {@code slot}, as an absolute value. */
  abstract long keyAt(int slot);

  /** Whether the fields of {@code slot} are in range, so that it can count as written. */
  abstract boolean entryLooksValid(int slot);

  final long baseOffset() {
    return baseOffset;
  }

  final int entries() {
    if (entries == UNCOUNTED) {
      entries = countValidPrefix();
    }
    return entries;
  }

  final int maxEntries() {
    return mappedBytes / entrySize;
  }

  final boolean isFull() {
    return entries() >= maxEntries();
  }

  final int sizeInBytes() {
    return entries() * entrySize;
  }

  /** The entries, mapped again first if released. */
  final ByteBuffer buffer() {
    if (mmap == null) {
      try {
        map(mappedBytes);
      } catch (IOException e) {
        throw new KafkaException("Cannot map index " + file, e);
      }
    }
    return mmap;
  }

  /** Whether the file is mapped now. */
  final boolean isMapped() {
    return mmap != null;
  }

  /**
   * Unmaps the file until the next lookup or append; its length and entries stay. Also how a
   * segment that failed to open, or whose directory failed, lets go without touching the file.
   */
  final void release() {
    unmap(mmap);
    mmap = null;
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
              + entries()
              + " entries; the segment should have rolled");
    }
    int start = entries() * entrySize;
    int written = pageEnd(start); // the pages up to here hold entries, so they are allocated
    int end = Math.min(pageEnd(start + entrySize), mappedBytes);
    if (end > written) {
      try (FileChannel channel = FileChannel.open(file, StandardOpenOption.WRITE)) {
        ByteBuffer zeros = ByteBuffer.allocate(end - written);
        while (zeros.hasRemaining()) {
          channel.write(zeros, written + zeros.position());
        }
      }
    }
    dirty = true;
    return entries++;
  }

  /** The end of the page that holds byte {@code position - 1} (0 for 0). */
  private static int pageEnd(int position) {
    return (position + PAGE_BYTES - 1) / PAGE_BYTES * PAGE_BYTES;
  }

  /** The largest slot whose {@code key} is at most {@code target}, or -1 when there is none. */
  final int largestSlotAtMost(long target, IntToLongFunction key) {
    int lo = 0;
    int hi = entries() - 1;
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
    entries = slot <= 0 ? 0 : Math.min(entries(), slot); // 0: nothing to count
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
    if (mappedBytes < maxIndexSizeBytes) {
      remap(maxIndexSizeBytes);
    }
  }

  /** Shrinks the file to the entries it holds, as Kafka does when a segment becomes inactive. */
  final void trimToValidSize() throws IOException {
    if (mappedBytes != sizeInBytes()) {
      remap(sizeInBytes());
    }
  }

  /**
   * Makes the entries durable. A released index forces its file: the pages written through the
   * mapping it had stay in the page cache until then.
   */
  final void flush() throws IOException {
    if (!dirty) {
      return;
    }
    if (mmap != null) {
      mmap.force();
    } else {
      try (FileChannel channel = FileChannel.open(file, StandardOpenOption.WRITE)) {
        channel.force(true);
      }
    }
    dirty = false;
  }

  @Override
  public final void close() throws IOException {
    trimToValidSize();
    unmap(mmap);
    mmap = null;
  }

  final void delete() throws IOException {
    unmap(mmap);
    mmap = null;
    Files.deleteIfExists(file);
  }

  private int countValidPrefix() {
    int valid = 0;
    int total = mappedBytes / entrySize;
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

  /** Sets the file's length to {@code newSizeBytes}, mapped if it was. */
  private void remap(int newSizeBytes) throws IOException {
    dirty = true;
    boolean wasMapped = mmap != null;
    unmap(mmap);
    mmap = null;
    if (wasMapped) {
      map(newSizeBytes);
    } else {
      try (RandomAccessFile raf = new RandomAccessFile(file.toFile(), "rw")) {
        raf.setLength(newSizeBytes);
      }
      mappedBytes = newSizeBytes;
    }
  }

  private void map(int sizeBytes) throws IOException {
    try (RandomAccessFile raf = new RandomAccessFile(file.toFile(), "rw")) {
      raf.setLength(sizeBytes);
      mmap = raf.getChannel().map(FileChannel.MapMode.READ_WRITE, 0, sizeBytes);
      mappedBytes = sizeBytes;
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
