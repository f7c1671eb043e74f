package io.tidelog.broker.log;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.tidelog.broker.log.LeaderEpochCache.EpochEntry;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class LeaderEpochCacheTest {
  @TempDir Path dir;

  @Test
  void endOffsetsFollowKafkaSemantics() throws IOException {
    // Given epochs 2@0, 4@10, 5@25 and a log end offset of 40
    LeaderEpochCache cache = LeaderEpochCache.load(dir);
    cache.assign(2, 0);
    cache.assign(4, 10);
    cache.assign(4, 12);
    cache.assign(3, 14);
    cache.assign(5, 25);

    assertThat(cache.endOffsetFor(5, 40)).isEqualTo(new EpochEndOffset(5, 40));
    assertThat(cache.endOffsetFor(4, 40)).isEqualTo(new EpochEndOffset(4, 25));
    assertThat(cache.endOffsetFor(3, 40)).isEqualTo(new EpochEndOffset(2, 10));
    assertThat(cache.endOffsetFor(9, 40)).isEqualTo(EpochEndOffset.UNDEFINED);
    // Older than the history: the data before its first epoch is gone
    assertThat(cache.endOffsetFor(1, 40)).isEqualTo(new EpochEndOffset(1, 0));
    assertThat(cache.endOffsetFor(-1, 40)).isEqualTo(EpochEndOffset.UNDEFINED);
  }

  @Test
  void truncationsArePersistedInKafkasFormat() throws IOException {
    LeaderEpochCache cache = LeaderEpochCache.load(dir);
    cache.assign(1, 0);
    cache.assign(2, 10);
    cache.assign(3, 20);

    cache.truncateFromEnd(20);
    cache.truncateFromStart(15);

    assertThat(cache.entries()).containsExactly(new EpochEntry(2, 15));
    assertThat(Files.readAllLines(dir.resolve("leader-epoch-checkpoint")))
        .containsExactly("0", "1", "2 15");
    assertThat(LeaderEpochCache.load(dir).entries()).containsExactly(new EpochEntry(2, 15));
  }

  @Test
  void aNewEpochStartingEarlierReplacesLaterEntries() throws IOException {
    LeaderEpochCache cache = LeaderEpochCache.load(dir);
    cache.assign(1, 0);
    cache.assign(2, 10);

    cache.assign(3, 5);

    assertThat(cache.entries()).containsExactly(new EpochEntry(1, 0), new EpochEntry(3, 5));
  }

  @Test
  void aMalformedCheckpointIsAnIoError() throws IOException {
    Files.write(dir.resolve("leader-epoch-checkpoint"), List.of("0", "1", "x y"));

    assertThrows(IOException.class, () -> LeaderEpochCache.load(dir));
  }
}
