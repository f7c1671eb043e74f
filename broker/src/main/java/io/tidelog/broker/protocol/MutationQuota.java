package io.tidelog.broker.protocol;

import java.util.concurrent.TimeUnit;
import org.apache.kafka.common.errors.ThrottlingQuotaExceededException;
import org.apache.kafka.common.metrics.MetricConfig;
import org.apache.kafka.common.metrics.Metrics;
import org.apache.kafka.common.metrics.Quota;
import org.apache.kafka.common.metrics.QuotaViolationException;
import org.apache.kafka.common.metrics.Sensor;
import org.apache.kafka.common.metrics.stats.TokenBucket;

/**
 * A rate of partition creations, as Kafka's {@code controller_mutation_rate} quota bounds them
 * (KIP-599): kafka-clients' token bucket of {@code rate} partitions a second, with a burst of 11
 * seconds' worth (Kafka's {@code quota.window.num} of 11 one-second windows). A mutation is
 * admitted while the bucket is not empty, and may leave it in debt, so one large request is never
 * refused forever; the next waits until the debt is paid.
 */
final class MutationQuota {
  private static final int WINDOWS = 11;
  private final Sensor sensor;

  MutationQuota(double partitionsPerSecond) {
    Metrics metrics = new Metrics();
    MetricConfig config =
        new MetricConfig()
            .timeWindow(1, TimeUnit.SECONDS)
            .samples(WINDOWS)
            .quota(Quota.upperBound(partitionsPerSecond));
    sensor = metrics.sensor("partition-mutations", config);
    sensor.add(metrics.metricName("partition-mutation-tokens", "tidelog"), new TokenBucket());
  }

  /**
   * Counts {@code partitions} created.
   *
   * @throws ThrottlingQuotaExceededException when the bucket is empty: nothing is counted
   */
  synchronized void record(int partitions) {
    long now = System.currentTimeMillis();
    try {
      sensor.checkQuotas(now);
    } catch (QuotaViolationException e) {
      throw new ThrottlingQuotaExceededException(
          "The quota of partition creations is used up (tidelog.auto.create.partition.rate);"
              + " try again later");
    }
    sensor.record(partitions, now, false);
  }
}
