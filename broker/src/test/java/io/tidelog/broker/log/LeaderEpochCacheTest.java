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
  void whatLoadingTrimsIsWrittenOnlyBeforeTheLogGrows() throws IOException {
    // Given a history 1@0, 2@10, 3@20 on file
    LeaderEpochCache written = LeaderEpochCache.load(dir);
    written.assign(1, 0);
    written.assign(2, 10);
    written.assign(3, 20);
    Path file = dir.resolve("leader-epoch-checkpoint");
    List<String> before = Files.readAllLines(file);

    // When a load finds the log spanning 5 to 20: epoch 3 holds nothing, epoch 1 starts at 5
    LeaderEpochCache loaded = LeaderEpochCache.load(dir);
    loaded.trimToLog(5, 20);

    // Then the history is trimmed in memory only, and every load trims the file the same way
    assertThat(loaded.entries()).containsExactly(new EpochEntry(1, 5), new EpochEntry(2, 10));
    assertThat(Files.readAllLines(file)).isEqualTo(before);
    LeaderEpochCache again = LeaderEpochCache.load(dir);
    again.trimToLog(5, 20);
    assertThat(again.entries()).isEqualTo(loaded.entries());

    // And before the log grows it is written, so no epoch past the log's end outlives an append
    loaded.writeIfChanged();
    assertThat(Files.readAllLines(file)).containsExactly("0", "2", "1 5", "2 10");
    assertThat(LeaderEpochCache.load(dir).entries()).isEqualTo(loaded.entries());
  }

  @Test
  void theEpochANewLeaderStartsIsWrittenOnlyBeforeTheLogGrows() throws IOException {
    LeaderEpochCache cache = LeaderEpochCache.load(dir);
    cache.assign(1, 0);
    Path file = dir.resolve("leader-epoch-checkpoint");

    // When a new leader starts epoch 2 at its log end, 10
    cache.startEpoch(2, 10);

    // Then followers of epoch 1 learn at once where it ended, but nothing is written yet
    assertThat(cache.endOffsetFor(1, 10)).isEqualTo(new EpochEndOffset(1, 10));
    assertThat(cache.endOffsetFor(2, 10)).isEqualTo(new EpochEndOffset(2, 10));
    assertThat(Files.readAllLines(file)).containsExactly("0", "1", "1 0");

    // And before the log grows it is, so every epoch of a record is durable before the record
    cache.writeIfChanged();
    assertThat(Files.readAllLines(file)).containsExactly("0", "2", "1 0", "2 10");
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
