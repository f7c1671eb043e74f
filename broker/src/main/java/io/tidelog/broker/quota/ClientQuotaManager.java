package io.tidelog.broker.quota;

import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.common.metrics.KafkaMetric;
import org.apache.kafka.common.metrics.Metrics;
import org.apache.kafka.common.metrics.QuotaViolationException;
import org.apache.kafka.common.metrics.Sensor;
import org.apache.kafka.common.metrics.stats.Rate;
import org.apache.kafka.common.quota.ClientQuotaEntity;
import org.apache.kafka.common.utils.Time;

/**
 * One kind of rate quota ({@code producer_byte_rate}, {@code consumer_byte_rate}, or {@code
 * request_percentage}: the percent of a thread's time), as Kafka's {@code ClientQuotaManager}
 * enforces it: the quota of a request's user and client id is found in Kafka's order ({@link
 * QuotaMatch}). Each user and client the matched quota names gets its own rate, measured by a
 * kafka-clients {@link Rate} over {@value #SAMPLES} windows of {@value #WINDOW_SECONDS} s (Kafka's
 * {@code quota.window.num} and {@code quota.window.size.seconds}); a request that takes the rate
 * over the quota is served, and its client throttled for as long as it takes the rate to come back
 * within the quota, at most the whole measured span (one window for {@code request_percentage}, as
 * Kafka).
 *
 * <p>Bounded: a rate exists only for clients under some quota, and is dropped after an hour without
 * requests, as Kafka's are. Thread-safe.
 */
public final class ClientQuotaManager {
  static final int SAMPLES = 11;
  static final int WINDOW_SECONDS = 1;

  /** The longest throttle of a byte-rate quota: the whole span its rate covers, as Kafka's. */
  public static final long BYTE_RATE_MAX_THROTTLE_MS =
      TimeUnit.SECONDS.toMillis(SAMPLES * WINDOW_SECONDS);

  /** The longest throttle of {@code request_percentage}: one window, as Kafka's. */
  public static final long REQUEST_MAX_THROTTLE_MS = TimeUnit.SECONDS.toMillis(WINDOW_SECONDS);

  private final String quotaKey;
  private final long maxThrottleMs;
  private final Metrics metrics;
  private final Time time;
  private final Counter throttled;
  private final Counter throttleSeconds;
  private volatile Map<ClientQuotaEntity, Map<String, Double>> quotas = Map.of();

  /**
   * @param quotaKey the quota this manager enforces, {@code producer_byte_rate}, {@code
   *     consumer_byte_rate} or {@code request_percentage}
   * @param maxThrottleMs the longest throttle it gives
   */
  public ClientQuotaManager(
      String quotaKey,
      long maxThrottleMs,
      Metrics metrics,
      Time time,
      Counter throttled,
      Counter throttleSeconds) {
    this.quotaKey = quotaKey;
    this.maxThrottleMs = maxThrottleMs;
    this.metrics = metrics;
    this.time = time;
    this.throttled = throttled;
    this.throttleSeconds = throttleSeconds;
    throttled.initLabelValues(quotaKey);
    throttleSeconds.initLabelValues(quotaKey);
  }

  /**
   * The counters of throttled requests and of the throttle time given, by quota ({@code
   * tidelog_throttled_requests_total}, {@code tidelog_throttle_time_seconds_total}), as Kafka's
   * {@code throttle-time} per quota type.
   */
  public static Counter[] counters(PrometheusRegistry registry) {
    return new Counter[] {
      Counter.builder()
          .withoutExemplars()
          .name("tidelog_throttled_requests_total")
          .help("Requests whose client was over its quota and was throttled, by quota")
          .labelNames("quota")
          .register(registry),
      Counter.builder()
          .withoutExemplars()
          .name("tidelog_throttle_time_seconds_total")
          .help("Throttle time given to clients over their quota, by quota")
          .labelNames("quota")
          .register(registry)
    };
  }

  /** The cluster's quotas now, as the metadata holds them. */
  public void update(Map<ClientQuotaEntity, Map<String, Double>> all) {
    quotas = Map.copyOf(all);
  }

  QuotaMatch applied(String user, String clientId) {
    Map<ClientQuotaEntity, Map<String, Double>> now = quotas;
    return now.isEmpty() ? null : QuotaMatch.find(now, quotaKey, user, clientId);
  }

  /** Whether a quota of this kind applies to {@code user} and {@code clientId}. */
  public boolean applies(String user, String clientId) {
    return applied(user, clientId == null ? "" : clientId) != null;
  }

  /**
   * Records {@code value} (bytes, or percent-seconds of a thread) of a request of {@code user} and
   * {@code clientId}, and returns how long the client is throttled for: 0 within its quota or with
   * none.
   */
  public int recordAndGetThrottleTimeMs(String user, String clientId, double value) {
    QuotaMatch applied = applied(user, clientId == null ? "" : clientId);
    if (applied == null) {
      return 0;
    }
    Sensor sensor = sensor(applied);
    long nowMs = time.milliseconds();
    try {
      sensor.record(value, nowMs, true);
      return 0;
    } catch (QuotaViolationException e) {
      // as Kafka's QuotaUtils.throttleTime: over by this fraction of the span the rate covers
      KafkaMetric metric = e.metric();
      long windowMs = ((Rate) metric.measurable()).windowSize(metric.config(), nowMs);
      double difference = e.value() - e.bound();
      int throttleMs = (int) Math.min(maxThrottleMs, Math.round(difference / e.bound() * windowMs));
      throttled.labelValues(quotaKey).inc();
      throttleSeconds.labelValues(quotaKey).inc(throttleMs / 1000.0);
      return throttleMs;
    }
  }

  /** Records {@code value} of a request that was already answered: it throttles later ones. */
  public void recordNoThrottle(String user, String clientId, double value) {
    QuotaMatch applied = applied(user, clientId == null ? "" : clientId);
    if (applied != null) {
      sensor(applied).record(value, time.milliseconds(), false);
    }
  }

  private Sensor sensor(QuotaMatch applied) {
    return applied.sensor(metrics, quotaKey, Rate::new);
  }
}
