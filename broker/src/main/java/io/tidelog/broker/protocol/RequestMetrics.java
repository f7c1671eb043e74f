package io.tidelog.broker.protocol;

import io.prometheus.metrics.core.metrics.Gauge;
import io.prometheus.metrics.core.metrics.Histogram;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import org.apache.kafka.common.protocol.ApiKeys;

/**
 * Per API: how long requests take from decoding to the response being ready (a Produce with {@code
 * acks=all} includes the wait for the ISR, a Fetch its {@code max.wait.ms}), and how many are in
 * flight.
 */
final class RequestMetrics {
  private static final double[] BUCKETS_SECONDS = {
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30
  };

  private final Histogram duration;
  private final Gauge inFlight;

  RequestMetrics(PrometheusRegistry registry) {
    duration =
        Histogram.builder()
            .withoutExemplars()
            .name("tidelog_request_duration_seconds")
            .help("Time from a request's arrival to its response, per Kafka API")
            .labelNames("api")
            .classicOnly()
            .classicUpperBounds(BUCKETS_SECONDS)
            .register(registry);
    inFlight =
        Gauge.builder()
            // an exemplar sampler schedules on a locked queue: not on an event loop
            .withoutExemplars()
            .name("tidelog_requests_in_flight")
            .help("Requests received and not answered yet")
            .register(registry);
  }

  /** A request arrived; returns when, for {@link #answered}. */
  long received() {
    inFlight.inc();
    return System.nanoTime();
  }

  void answered(ApiKeys api, long receivedNanos) {
    inFlight.dec();
    duration.labelValues(api.name).observe((System.nanoTime() - receivedNanos) / 1e9);
  }
}
