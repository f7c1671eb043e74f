package io.tidelog.broker.quota;

import io.prometheus.metrics.core.metrics.Counter;
import java.util.Map;
import org.apache.kafka.common.errors.ThrottlingQuotaExceededException;
import org.apache.kafka.common.metrics.Metrics;
import org.apache.kafka.common.metrics.QuotaViolationException;
import org.apache.kafka.common.metrics.Sensor;
import org.apache.kafka.common.metrics.stats.TokenBucket;
import org.apache.kafka.common.quota.ClientQuotaEntity;
import org.apache.kafka.common.utils.Time;

/**
 * The {@code controller_mutation_rate} quota (KIP-599), as Kafka's {@code
 * ControllerMutationQuotaManager} enforces it: the partitions a user and client id create or delete
 * with CreateTopics, CreatePartitions and DeleteTopics are taken from a kafka-clients {@link
 * TokenBucket} of the quota's rate, {@value ClientQuotaManager#SAMPLES} one-second windows deep (so
 * 11 s of the rate may go at once), the quota found in Kafka's order ({@link QuotaMatch}).
 *
 * <p>A request's {@link RequestQuota} is strict for the versions that know the error (CreateTopics
 * v6+, CreatePartitions v3+, DeleteTopics v5+): a topic is refused with THROTTLING_QUOTA_EXCEEDED
 * while the bucket is in debt, and one that finds it not in debt is accepted even if it leaves it
 * in debt. Older versions are permissive: everything is accepted. Either way the response carries
 * the time until the debt is paid, and the connection is muted for it (KIP-219). Thread-safe.
 */
public final class ControllerMutationQuotaManager {
  public static final String QUOTA_KEY = "controller_mutation_rate";

  private final Metrics metrics;
  private final Time time;
  private final Counter throttled;
  private final Counter throttleSeconds;
  private volatile Map<ClientQuotaEntity, Map<String, Double>> quotas = Map.of();

  /** {@code throttled} and {@code throttleSeconds} are {@link ClientQuotaManager#counters}. */
  public ControllerMutationQuotaManager(
      Metrics metrics, Time time, Counter throttled, Counter throttleSeconds) {
    this.metrics = metrics;
    this.time = time;
    this.throttled = throttled;
    this.throttleSeconds = throttleSeconds;
    throttled.initLabelValues(QUOTA_KEY);
    throttleSeconds.initLabelValues(QUOTA_KEY);
  }

  /** The cluster's quotas now, as the metadata holds them. */
  public void update(Map<ClientQuotaEntity, Map<String, Double>> all) {
    quotas = Map.copyOf(all);
  }

  /** The quota of one request of {@code user} and {@code clientId}. */
  public RequestQuota forRequest(String user, String clientId, boolean strict) {
    QuotaMatch match = QuotaMatch.find(quotas, QUOTA_KEY, user, clientId == null ? "" : clientId);
    return new RequestQuota(
        match == null ? null : match.sensor(metrics, QUOTA_KEY, TokenBucket::new), strict);
  }

  /** One request's use of the quota: its partition mutations and the throttle they earn. */
  public final class RequestQuota {
    private final Sensor sensor;
    private final boolean strict;
    private long throttleMs;
    private long throttledAtMs;

    private RequestQuota(Sensor sensor, boolean strict) {
      this.sensor = sensor;
      this.strict = strict;
    }

    /**
     * Takes {@code partitions} mutations from the bucket.
     *
     * @throws ThrottlingQuotaExceededException when strict and the bucket is in debt: nothing is
     *     taken
     */
    public void record(int partitions) {
      if (sensor == null) {
        return;
      }
      long nowMs = time.milliseconds();
      try {
        synchronized (sensor) {
          if (strict) {
            sensor.checkQuotas(nowMs);
            sensor.record(partitions, nowMs, false);
          } else {
            sensor.record(partitions, nowMs, true);
          }
        }
      } catch (QuotaViolationException e) {
        // as Kafka: the time until the bucket's debt is paid at the quota's rate
        throttleMs = Math.round(-e.value() / e.bound() * 1000);
        throttledAtMs = nowMs;
        if (strict) {
          throw new ThrottlingQuotaExceededException(
              (int) throttleMs, "The " + QUOTA_KEY + " quota is used up for " + throttleMs + " ms");
        }
      }
    }

    /**
     * The throttle time to answer with: the last one a mutation earned, less the time since, as
     * Kafka's; counted in the throttle metrics.
     */
    public int throttleTimeMs() {
      int ms = (int) Math.max(0, throttleMs - (time.milliseconds() - throttledAtMs));
      if (ms > 0) {
        throttled.labelValues(QUOTA_KEY).inc();
        throttleSeconds.labelValues(QUOTA_KEY).inc(ms / 1000.0);
      }
      return ms;
    }
  }
}
