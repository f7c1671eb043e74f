package io.tidelog.broker.quota;

import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.metrics.MetricConfig;
import org.apache.kafka.common.metrics.Metrics;
import org.apache.kafka.common.metrics.Quota;
import org.apache.kafka.common.metrics.QuotaViolationException;
import org.apache.kafka.common.metrics.Sensor;
import org.apache.kafka.common.metrics.stats.SimpleRate;
import org.apache.kafka.common.utils.Time;

/**
 * A replication throttle (KIP-73), as Kafka's {@code ReplicationQuotaManager}: the bytes that
 * throttled replicas fetch, measured with a kafka-clients {@link SimpleRate} over {@value
 * ClientQuotaManager#SAMPLES} windows of {@value ClientQuotaManager#WINDOW_SECONDS} s, against a
 * byte rate ({@code leader.replication.throttled.rate} or {@code
 * follower.replication.throttled.rate}; {@link Long#MAX_VALUE}, Kafka's default, throttles
 * nothing). Which replicas are throttled is each topic's {@code *.replication.throttled.replicas}
 * ({@link ThrottledReplicas}). Thread-safe.
 */
public final class ReplicationQuota {
  /** The topic config that lists the replicas a follower throttle holds back. */
  public static final String FOLLOWER_THROTTLED_REPLICAS =
      "follower.replication.throttled.replicas";

  /** The topic config that lists the leader replicas whose out-of-sync followers are throttled. */
  public static final String LEADER_THROTTLED_REPLICAS = "leader.replication.throttled.replicas";

  private final Sensor sensor;
  private final MetricName rate;
  private final Metrics metrics;
  private final Time time;
  private final Counter bytes;
  private final String side;

  /**
   * @param side {@code follower}, {@code leader} or {@code alter-log-dirs}: Kafka's {@code
   *     FollowerReplication}, {@code LeaderReplication} or {@code AlterLogDirsReplication} quota,
   *     and its label on {@code bytes}
   * @param bytes the {@link #counter}
   */
  public ReplicationQuota(
      Metrics metrics, Time time, Counter bytes, String side, long bytesPerSecond) {
    this.metrics = metrics;
    this.time = time;
    this.side = side;
    this.rate = metrics.metricName("byte-rate", side + "-replication", "Throttled replicas' bytes");
    this.sensor = metrics.sensor(side + "-replication");
    sensor.add(rate, new SimpleRate(), config(bytesPerSecond));
    this.bytes = bytes;
    bytes.initLabelValues(side);
  }

  /** {@code tidelog_replication_throttled_bytes_total}, which every side counts into. */
  public static Counter counter(PrometheusRegistry registry) {
    return Counter.builder()
        .withoutExemplars()
        .name("tidelog_replication_throttled_bytes_total")
        .help(
            "Bytes that throttled replicas fetched, by side (leader, follower, or"
                + " alter-log-dirs for replicas moving between log directories)")
        .labelNames("side")
        .register(registry);
  }

  private static MetricConfig config(long bytesPerSecond) {
    return new MetricConfig()
        .timeWindow(ClientQuotaManager.WINDOW_SECONDS, TimeUnit.SECONDS)
        .samples(ClientQuotaManager.SAMPLES)
        .quota(Quota.upperBound(bytesPerSecond));
  }

  /** Takes a new rate, for the bytes already measured too. */
  public void update(long bytesPerSecond) {
    metrics.metrics().get(rate).config(config(bytesPerSecond));
  }

  /** Whether throttled replicas fetched more than the rate over the measured windows. */
  public boolean isExceeded() {
    try {
      sensor.checkQuotas(time.milliseconds());
      return false;
    } catch (QuotaViolationException e) {
      return true;
    }
  }

  /** Counts {@code count} bytes of a throttled replica, even past the rate. */
  public void record(long count) {
    sensor.record(count, time.milliseconds(), false);
    bytes.labelValues(side).inc(count);
  }
}
