package io.tidelog.broker.metrics;

import io.prometheus.metrics.expositionformats.ExpositionFormatWriter;
import io.prometheus.metrics.expositionformats.ExpositionFormats;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpServerRequest;
import java.io.ByteArrayOutputStream;

/**
 * {@code GET /metrics}: the registry in the format the scraper's {@code Accept} header asks for
 * (OpenMetrics, Prometheus protobuf, else Prometheus text 0.0.4). A scrape runs on a worker thread,
 * never on the event loop: collectors wait for the storage shards.
 */
public final class MetricsEndpoint {
  private final Vertx vertx;
  private final PrometheusRegistry registry;
  private final ExpositionFormats formats = ExpositionFormats.init();

  public MetricsEndpoint(Vertx vertx, PrometheusRegistry registry) {
    this.vertx = vertx;
    this.registry = registry;
  }

  public void handle(HttpServerRequest request) {
    ExpositionFormatWriter writer = formats.findWriter(request.getHeader("Accept"));
    vertx
        .executeBlocking(
            () -> {
              ByteArrayOutputStream body = new ByteArrayOutputStream();
              writer.write(body, registry.scrape());
              return Buffer.buffer(body.toByteArray());
            },
            false)
        .onSuccess(
            body -> request.response().putHeader("content-type", writer.getContentType()).end(body))
        .onFailure(e -> request.response().setStatusCode(500).end(e.toString()));
  }
}
