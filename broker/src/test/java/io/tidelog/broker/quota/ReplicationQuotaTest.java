package io.tidelog.broker.quota;

import static org.assertj.core.api.Assertions.assertThat;

import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.util.List;
import org.apache.kafka.common.metrics.MetricConfig;
import org.apache.kafka.common.metrics.Metrics;
import org.apache.kafka.common.utils.MockTime;
import org.junit.jupiter.api.Test;

/** The follower throttle's rate over Kafka's windows, and which replicas a topic lists. */
class ReplicationQuotaTest {
  private final MockTime time = new MockTime(0, 1_000_000, 0);
  private final ReplicationQuota quota =
      new ReplicationQuota(
          new Metrics(new MetricConfig(), List.of(), time, false),
          time,
          ReplicationQuota.counter(new PrometheusRegistry()),
          "follower",
          Long.MAX_VALUE);

  @Test
  void unlimitedByDefaultThenExceededPastTheRateUntilTimeBringsItBelow() {
    quota.record(10_000_000);
    assertThat(quota.isExceeded()).as("Kafka's default, Long.MAX_VALUE").isFalse();

    quota.update(100_000);
    // 10 MB within the first window is 10 MB/s: far over, until the 11 windows have passed
    assertThat(quota.isExceeded()).isTrue();
    time.sleep(5_000);
    assertThat(quota.isExceeded()).as("2 MB/s over 5 s").isTrue();
    time.sleep(20_000);
    assertThat(quota.isExceeded()).as("the bytes have left the windows").isFalse();
    quota.record(50_000);
    assertThat(quota.isExceeded()).as("50 kB in one window: under 100 kB/s").isFalse();
    quota.record(100_000);
    assertThat(quota.isExceeded()).as("150 kB in one window").isTrue();
  }

  @Test
  void aTopicListsEveryReplicaWithAStarOrOnePartitionAndBrokerPairEach() {
    assertThat(ReplicationQuota.lists("*", 3, 1)).isTrue();
    assertThat(ReplicationQuota.lists(" * ", 3, 1)).isTrue();
    assertThat(ReplicationQuota.lists("0:1,3:1", 3, 1)).isTrue();
    assertThat(ReplicationQuota.lists("0:1, 3:2", 3, 2)).isTrue();
    assertThat(ReplicationQuota.lists("0:1,3:2", 3, 1))
        .as("partition 3 on broker 2 only")
        .isFalse();
    assertThat(ReplicationQuota.lists("13:1", 3, 1)).isFalse();
    assertThat(ReplicationQuota.lists("", 0, 0)).isFalse();
    assertThat(ReplicationQuota.lists(null, 0, 0)).isFalse();
  }
}
