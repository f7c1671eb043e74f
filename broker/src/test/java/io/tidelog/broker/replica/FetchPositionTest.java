package io.tidelog.broker.replica;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * When a follower may leave a leader's answer unapplied: only when applying it would change nothing
 * on the partition, so that skipping its shard loses no record, truncation, log-start move,
 * high-watermark move or ISR standing.
 */
class FetchPositionTest {
  /** Caught up at 100, which is also its high watermark; log from 10. */
  private static final FetchPosition CAUGHT_UP = new FetchPosition(3, 100, 3, 10, 100, false, true);

  /** At 100 with high watermark 90, behind a leader whose high watermark is 120. */
  private static final FetchPosition BEHIND = new FetchPosition(3, 100, 3, 10, 90, false, false);

  @Test
  void anEmptyAnswerThatMovesNothingIsLeftUnapplied() {
    assertThat(CAUGHT_UP.unchangedBy(0, false, 100, 10)).isTrue();
    assertThat(CAUGHT_UP.unchangedBy(0, false, 100, 5)).isTrue(); // a log start behind its own
  }

  @Test
  void anAnswerThatChangesAnythingIsApplied() {
    assertThat(CAUGHT_UP.unchangedBy(1024, false, 100, 10)).as("records").isFalse();
    assertThat(CAUGHT_UP.unchangedBy(0, true, 100, 10)).as("a diverging epoch").isFalse();
    assertThat(CAUGHT_UP.unchangedBy(0, false, 100, 50)).as("a later log start").isFalse();
    assertThat(CAUGHT_UP.unchangedBy(0, false, 95, 10)).as("a lower high watermark").isFalse();
    assertThat(CAUGHT_UP.unchangedBy(0, false, 101, 10)).as("no longer caught up").isFalse();
  }

  @Test
  void aFollowerBehindAppliesTheHighWatermarkItHasNotYetTaken() {
    assertThat(BEHIND.unchangedBy(0, false, 120, 10)).as("its HW moves to 100").isFalse();
    FetchPosition atLeaderHw = new FetchPosition(3, 100, 3, 10, 100, false, false);
    assertThat(atLeaderHw.unchangedBy(0, false, 120, 10)).isTrue();
    assertThat(atLeaderHw.unchangedBy(0, false, 100, 10)).as("caught up now").isFalse();
  }
}
