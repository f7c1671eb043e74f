package io.tidelog.broker.log;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The topic settings the log derives, as Kafka's LogConfig derives them. */
class LogConfigTest {
  private static Set<Long> jitters(LogConfig config) {
    Set<Long> jitters = new HashSet<>();
    for (int i = 0; i < 200; i++) {
      jitters.add(config.randomSegmentJitterMs());
    }
    return jitters;
  }

  @Test
  void eachSegmentTakesARandomPartOfTheJitterOffItsRollTime() {
    assertThat(jitters(LogConfig.parse(Map.of()))).containsExactly(0L);
    Set<Long> jitters =
        jitters(LogConfig.parse(Map.of("segment.ms", "10000", "segment.jitter.ms", "4000")));
    assertThat(jitters).hasSizeGreaterThan(1).allSatisfy(j -> assertThat(j).isBetween(0L, 3999L));
    // never the whole roll time: capped below segment.ms
    assertThat(jitters(LogConfig.parse(Map.of("segment.ms", "1000", "segment.jitter.ms", "5000"))))
        .allSatisfy(j -> assertThat(j).isBetween(0L, 999L));
  }

  @Test
  void aCompactedTopicsSegmentsRollWithinItsMaxCompactionLag() {
    Map<String, String> lag = Map.of("segment.ms", "100000", "max.compaction.lag.ms", "5000");
    assertThat(LogConfig.parse(lag).maxSegmentMs())
        .as("delete: the lag does not apply")
        .isEqualTo(100000);
    Map<String, String> compacted = new java.util.HashMap<>(lag);
    compacted.put("cleanup.policy", "compact");
    assertThat(LogConfig.parse(compacted).maxSegmentMs()).isEqualTo(5000);
  }
}
