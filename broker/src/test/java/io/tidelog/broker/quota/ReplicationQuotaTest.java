package io.tidelog.broker.quota;

import static org.assertj.core.api.Assertions.assertThat;

import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.util.List;
import org.apache.kafka.common.metrics.MetricConfig;
import org.apache.kafka.common.metrics.Metrics;
import org.apache.kafka.common.utils.MockTime;
import org.junit.jupiter.api.Test;

/** A replication throttle's rate over Kafka's windows. */
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
}
