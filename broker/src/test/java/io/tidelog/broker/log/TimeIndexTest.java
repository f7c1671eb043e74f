package io.tidelog.broker.log;

import static org.assertj.core.api.Assertions.assertThat;

import io.tidelog.broker.log.TimeIndex.TimestampOffset;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import org.apache.kafka.common.record.RecordBatch;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TimeIndexTest {
  private static final long BASE = 1_000;

  @TempDir Path dir;

  @Test
  void lookupsMatchATreeMapOracleOnRandomData() throws IOException {
    // Given random (timestamp, offset) appends, some not larger than the last; when looked up;
    // then only growing timestamps were kept and every lookup matches the oracle's floor entry.
    Random random = new Random(3);
    TreeMap<Long, Long> oracle = new TreeMap<>();
    try (TimeIndex index = new TimeIndex(dir.resolve("a.timeindex"), BASE, 120_000)) {
      long timestamp = 1_700_000_000_000L;
      long offset = BASE;
      for (int i = 0; i < 2000; i++) {
        timestamp += random.nextInt(100) - 20;
        offset += 1 + random.nextInt(10);
        index.maybeAppend(timestamp, offset, false);
        if (oracle.isEmpty() || timestamp > oracle.lastKey()) {
          oracle.put(timestamp, offset);
        }
      }
      assertThat(index.entries()).isEqualTo(oracle.size());
      for (int i = 0; i < 5000; i++) {
        long target =
            oracle.firstKey()
                - 50
                + random.nextInt((int) (oracle.lastKey() - oracle.firstKey() + 100));
        Map.Entry<Long, Long> floor = oracle.floorEntry(target);
        TimestampOffset want =
            floor == null
                ? new TimestampOffset(RecordBatch.NO_TIMESTAMP, BASE)
                : new TimestampOffset(floor.getKey(), floor.getValue());
        assertThat(index.lookup(target)).isEqualTo(want);
      }

      long cut = oracle.get(oracle.lowerKey(oracle.lastKey()));
      index.truncateTo(cut);
      oracle.values().removeIf(o -> o >= cut);
      assertThat(index.lastEntry())
          .isEqualTo(new TimestampOffset(oracle.lastKey(), oracle.lastEntry().getValue()));
    }
  }

  @Test
  void theFinalEntryOfAFullIndexReplacesTheLastSlot() throws IOException {
    try (TimeIndex index = new TimeIndex(dir.resolve("b.timeindex"), BASE, 24)) {
      index.maybeAppend(10, BASE, false);
      index.maybeAppend(20, BASE + 1, false);
      assertThat(index.isFull()).isTrue();

      index.maybeAppend(30, BASE + 2, true);

      assertThat(index.entries()).isEqualTo(2);
      assertThat(index.lastEntry()).isEqualTo(new TimestampOffset(30, BASE + 2));
      assertThat(index.lookup(25)).isEqualTo(new TimestampOffset(10, BASE));
    }
  }
}
