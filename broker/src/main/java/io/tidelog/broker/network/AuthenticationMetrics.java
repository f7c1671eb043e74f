package io.tidelog.broker.network;

import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.model.registry.PrometheusRegistry;

/**
 * Kafka's {@code successful-authentication-total} and {@code failed-authentication-total}, per
 * listener: TLS handshakes on SSL listeners, SASL exchanges on SASL listeners, and, as Kafka counts
 * them, every accepted connection of a PLAINTEXT listener as a success. Only the listener is a
 * label; nothing of the credentials is recorded.
 */
public final class AuthenticationMetrics {
  private final Counter succeeded;
  private final Counter failed;

  public AuthenticationMetrics(PrometheusRegistry registry) {
    succeeded =
        Counter.builder()
            .withoutExemplars()
            .name("tidelog_successful_authentication_total")
            .help("Connections that authenticated, by listener")
            .labelNames("listener")
            .register(registry);
    failed =
        Counter.builder()
            .withoutExemplars()
            .name("tidelog_failed_authentication_total")
            .help(
                "Connections whose TLS handshake or SASL authentication failed, by listener;"
                    + " each is closed")
            .labelNames("listener")
            .register(registry);
  }

  void initListener(String listener) {
    succeeded.initLabelValues(listener);
    failed.initLabelValues(listener);
  }

  public void succeeded(String listener) {
    succeeded.labelValues(listener).inc();
  }

  public void failed(String listener) {
    failed.labelValues(listener).inc();
  }
}
