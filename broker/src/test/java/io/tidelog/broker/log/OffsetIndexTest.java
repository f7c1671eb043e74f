package io.tidelog.broker.log;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.tidelog.broker.log.OffsetIndex.OffsetPosition;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class OffsetIndexTest {
  private static final long BASE = 45_000;

  @TempDir Path dir;

  /** Random, strictly increasing entries, as a segment writes them, mirrored in a TreeMap. */
  private static TreeMap<Long, Integer> fill(OffsetIndex index, Random random, int count)
      throws IOException {
    TreeMap<Long, Integer> oracle = new TreeMap<>();
    long offset = BASE;
    int position = 0;
    for (int i = 0; i < count; i++) {
      offset += 1 + random.nextInt(50);
      position += 1 + random.nextInt(5000);
      index.append(offset, position);
      oracle.put(offset, position);
    }
    return oracle;
  }

  private static OffsetPosition expected(TreeMap<Long, Integer> oracle, long target) {
    Map.Entry<Long, Integer> floor = oracle.floorEntry(target);
    return floor == null
        ? new OffsetPosition(BASE, 0)
        : new OffsetPosition(floor.getKey(), floor.getValue());
  }

  @Test
  void lookupsMatchATreeMapOracleOnRandomData() throws IOException {
    // Given 1000 random entries; when every kind of target is looked up; then the oracle agrees.
    Random random = new Random(42);
    try (OffsetIndex index = new OffsetIndex(dir.resolve("a.index"), BASE, 1_000_000)) {
      TreeMap<Long, Integer> oracle = fill(index, random, 1000);
      long last = oracle.lastKey();
      for (int i = 0; i < 5000; i++) {
        long target = BASE - 10 + (long) (random.nextDouble() * (last - BASE + 100));
        assertThat(index.lookup(target)).isEqualTo(expected(oracle, target));
      }
      for (long key : oracle.keySet()) {
        assertThat(index.lookup(key)).isEqualTo(expected(oracle, key));
      }
    }
  }

  @Test
  void truncationAndReopenKeepTheOracleInStep() throws IOException {
    // Given random entries; when truncated at random points and reopened; then lookups still agree.
    Random random = new Random(7);
    Path file = dir.resolve("b.index");
    TreeMap<Long, Integer> oracle;
    try (OffsetIndex index = new OffsetIndex(file, BASE, 1_000_000)) {
      oracle = fill(index, random, 500);
      for (int round = 0; round < 5; round++) {
        long cut =
            oracle.firstKey()
                + (long) (random.nextDouble() * (oracle.lastKey() - oracle.firstKey()));
        index.truncateTo(cut);
        oracle.tailMap(cut, true).clear();
        assertThat(index.entries()).isEqualTo(oracle.size());
      }
    }
    assertThat(Files.size(file)).isEqualTo(oracle.size() * 8L);

    try (OffsetIndex reopened = new OffsetIndex(file, BASE, 1_000_000)) {
      assertThat(reopened.entries()).isEqualTo(oracle.size());
      for (int i = 0; i < 2000; i++) {
        long target = BASE + random.nextInt((int) (oracle.lastKey() - BASE + 50));
        assertThat(reopened.lookup(target)).isEqualTo(expected(oracle, target));
      }
    }
  }

  @Test
  void aZeroFilledTailFromACrashIsNotCountedAsEntries() throws IOException {
    // Given an index preallocated to 800 bytes with 3 entries; when reopened as found after a crash
    Path file = dir.resolve("c.index");
    OffsetIndex index = new OffsetIndex(file, BASE, 800);
    index.append(BASE + 3, 100);
    index.append(BASE + 9, 900);
    index.append(BASE + 12, 1300);
    index.flush();
    assertThat(Files.size(file)).isEqualTo(800);

    try (OffsetIndex reopened = new OffsetIndex(file, BASE, 800)) {
      assertThat(reopened.entries()).isEqualTo(3);
      assertThat(reopened.lastEntry()).isEqualTo(new OffsetPosition(BASE + 12, 1300));
    }
  }

  @Test
  void aFullIndexSaysSoAndRefusesMore() throws IOException {
    try (OffsetIndex index = new OffsetIndex(dir.resolve("d.index"), BASE, 20)) {
      index.append(BASE + 1, 10);
      assertThat(index.isFull()).isFalse();
      index.append(BASE + 2, 20);

      assertThat(index.isFull()).isTrue();
      assertThrows(IllegalStateException.class, () -> index.append(BASE + 3, 30));
    }
  }

  @Test
  void entriesMustGrow() throws IOException {
    try (OffsetIndex index = new OffsetIndex(dir.resolve("e.index"), BASE, 80)) {
      index.append(BASE + 5, 50);

      assertThrows(IllegalArgumentException.class, () -> index.append(BASE + 5, 60));
      assertThrows(IllegalArgumentException.class, () -> index.append(BASE + 6, 50));
      assertThrows(
          IllegalArgumentException.class,
          () -> index.append(BASE - 1 + Integer.MAX_VALUE + 2L, 70));
    }
  }
}
