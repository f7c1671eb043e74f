package io.tidelog.broker.protocol;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.stream.IntStream;
import org.apache.kafka.common.protocol.ApiKeys;
import org.junit.jupiter.api.Test;

/** A client that makes requests fail by the thousand gets a line a minute, not a thousand. */
class UnexpectedErrorLogTest {
  private final UnexpectedErrorLog log = new UnexpectedErrorLog();

  private long logged(ApiKeys api, RuntimeException error, long fromMs, int count) {
    return IntStream.range(0, count)
        .filter(i -> log.log(api, "request " + i, error, fromMs + i))
        .count();
  }

  @Test
  void theFirstOfAKindIsLoggedThenOneAnIntervalWhateverTheRate() {
    IllegalStateException error = new IllegalStateException("boom");

    assertThat(logged(ApiKeys.PRODUCE, error, 1_000, 10_000)).isEqualTo(1);
    long later = 1_000 + UnexpectedErrorLog.INTERVAL_MS + 10_000;
    assertThat(logged(ApiKeys.PRODUCE, error, later, 10_000)).isEqualTo(1);
  }

  @Test
  void eachKindHasItsOwnWindow() {
    assertThat(log.log(ApiKeys.PRODUCE, "p", new IllegalStateException(), 1_000)).isTrue();
    assertThat(log.log(ApiKeys.FETCH, "f", new IllegalStateException(), 1_001)).isTrue();
    assertThat(log.log(ApiKeys.PRODUCE, "p", new IllegalArgumentException(), 1_002)).isTrue();
    assertThat(log.log(ApiKeys.PRODUCE, "p", new IllegalStateException(), 1_003)).isFalse();
  }
}
