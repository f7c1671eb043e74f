package io.tidelog.broker.log;

import java.nio.ByteBuffer;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;

/**
 * The cleaner's map from a key to the offset of its latest record, bounded in memory as Kafka's
 * {@code SkimpyOffsetMap}: a key is stored as its 16-byte MD5 digest, so an entry takes 24 bytes
 * whatever the key's size, in open-addressed arrays filled to at most 90%.
 *
 * <p>Not thread-safe: one cleaning pass uses it.
 */
final class OffsetMap {
  static final int BYTES_PER_ENTRY = 24;
  private static final double MAX_LOAD_FACTOR = 0.9;

  private final long[] digestHigh;
  private final long[] digestLow;
  private final long[] offsets;
  private final int maxEntries;
  private final MessageDigest md5;
  private int size;

  OffsetMap(int slots) {
    digestHigh = new long[slots];
    digestLow = new long[slots];
    offsets = new long[slots];
    Arrays.fill(offsets, -1);
    maxEntries = (int) (slots * MAX_LOAD_FACTOR);
    try {
      md5 = MessageDigest.getInstance("MD5");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every JVM has MD5", e);
    }
  }

  /**
   * Records {@code offset} as the latest of {@code key}.
   *
   * @return false, changing nothing, when the key is new and the map is full
   */
  boolean put(ByteBuffer key, long offset) {
    byte[] digest = digest(key);
    long high = ByteBuffer.wrap(digest).getLong(0);
    long low = ByteBuffer.wrap(digest).getLong(8);
    int slot = slotOf(high, low);
    if (offsets[slot] < 0) {
      if (size >= maxEntries) {
        return false;
      }
      size++;
      digestHigh[slot] = high;
      digestLow[slot] = low;
    }
    offsets[slot] = offset;
    return true;
  }

  /** The latest offset of {@code key}, or -1 when the map has none. */
  long get(ByteBuffer key) {
    byte[] digest = digest(key);
    return offsets[slotOf(ByteBuffer.wrap(digest).getLong(0), ByteBuffer.wrap(digest).getLong(8))];
  }

  int size() {
    return size;
  }

  /** The slot holding this digest, or the empty slot where it goes (linear probing). */
  private int slotOf(long high, long low) {
    int slot = (int) Math.floorMod(high, (long) offsets.length);
    while (offsets[slot] >= 0 && (digestHigh[slot] != high || digestLow[slot] != low)) {
      slot = (slot + 1) % offsets.length;
    }
    return slot;
  }

  private byte[] digest(ByteBuffer key) {
    md5.reset();
    md5.update(key.duplicate());
    return md5.digest();
  }
}
