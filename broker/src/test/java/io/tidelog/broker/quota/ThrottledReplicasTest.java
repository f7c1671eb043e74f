package io.tidelog.broker.quota;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/** Which replicas a topic's throttled-replicas value names, as one broker reads it. */
class ThrottledReplicasTest {
  @Test
  void aStarNamesEveryReplicaAndPairsNameThePartitionsOfTheirBroker() {
    assertThat(ThrottledReplicas.parse("*", 1).contains(3)).isTrue();
    assertThat(ThrottledReplicas.parse(" * ", 1).contains(3)).isTrue();
    ThrottledReplicas pairs = ThrottledReplicas.parse("0:1, 3:1,3:2,13:2", 1);
    assertThat(pairs.partitions()).containsExactlyInAnyOrder(0, 3);
    assertThat(ThrottledReplicas.parse("0:1,3:2", 1).contains(3))
        .as("3 on broker 2 only")
        .isFalse();
    assertThat(ThrottledReplicas.parse("13:1", 1).contains(3)).isFalse();
    assertThat(ThrottledReplicas.parse("3:11", 1).contains(3)).as("broker 11, not 1").isFalse();
    assertThat(ThrottledReplicas.parse("", 0)).isSameAs(ThrottledReplicas.NONE);
    assertThat(ThrottledReplicas.parse(null, 0)).isSameAs(ThrottledReplicas.NONE);
    assertThat(ThrottledReplicas.parse("5:2", 1))
        .as("none of this broker's")
        .isSameAs(ThrottledReplicas.NONE);
  }

  @Test
  void aReassignmentsListOfTenThousandPairsIsReadOnce() {
    String value =
        IntStream.range(0, 10_000)
            .mapToObj(p -> p + ":" + (p % 3))
            .collect(Collectors.joining(","));
    ThrottledReplicas onBroker2 = ThrottledReplicas.parse(value, 2);
    assertThat(onBroker2.partitions()).hasSize(3_333).contains(2, 9_998).doesNotContain(0, 1);
  }
}
