package io.tidelog.broker.log;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class LogSegmentsTest {
  @TempDir Path dir;
  private final LogSegments segments = new LogSegments();
  private final List<LogSegment> opened = new ArrayList<>();
  private LogSegment first;
  private LogSegment second;
  private LogSegment third;

  @BeforeEach
  void openThreeSegments() throws IOException {
    first = open(dir, 10);
    second = open(dir, 20);
    third = open(dir, 30);
    segments.add(third);
    segments.add(first);
    segments.add(second);
  }

  private LogSegment open(Path in, long baseOffset) throws IOException {
    LogSegment segment = LogSegment.open(in, baseOffset, LogConfig.parse(Map.of()), 0);
    opened.add(segment);
    return segment;
  }

  @AfterEach
  void close() {
    opened.forEach(LogSegment::closeHandlers);
  }

  @Test
  void theSegmentWithTheLargestBaseOffsetIsActive() {
    assertThat(segments.active()).isSameAs(third);
    assertThat(segments.oldest()).isSameAs(first);
    assertThat(segments.firstBaseOffset()).isEqualTo(10);
    assertThat(segments.all()).containsExactly(first, second, third);
  }

  @Test
  void anOffsetIsHeldByTheSegmentAtOrBelowIt() {
    assertThat(segments.baseOffsetHolding(25)).isEqualTo(20);
    assertThat(segments.baseOffsetHolding(20)).isEqualTo(20);
    assertThat(segments.baseOffsetHolding(5)).as("below every segment: the first").isEqualTo(10);
    assertThat(segments.from(25)).containsExactly(second, third);
    assertThat(segments.from(99)).containsExactly(third);
    assertThat(segments.below(30)).containsExactly(first, second);
  }

  @Test
  void aSegmentEndsWhereTheNextBeginsAndTheActiveOneAtTheLogEnd() {
    assertThat(segments.endOffsetOf(first, 42)).isEqualTo(20);
    assertThat(segments.endOffsetOf(third, 42)).isEqualTo(42);
  }

  @Test
  void removalTakesTheSegmentsAboveAnOffsetOrOneSegmentItself() throws IOException {
    assertThat(segments.removeAbove(20)).containsExactly(third);
    assertThat(segments.active()).isSameAs(second);

    LogSegment replacement = open(Files.createDirectory(dir.resolve("cleaned")), 10);
    segments.add(replacement);
    assertThat(segments.holds(first)).as("replaced by a segment of its base offset").isFalse();
    segments.remove(first);
    assertThat(segments.holds(replacement))
        .as("removing the old one leaves its successor")
        .isTrue();

    assertThat(segments.removeAll()).containsExactly(replacement, second);
    assertThat(segments.isEmpty()).isTrue();
  }
}
