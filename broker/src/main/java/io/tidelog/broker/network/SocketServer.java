package io.tidelog.broker.network;

import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.core.metrics.Gauge;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.internal.net.NetSocketInternal;
import io.vertx.core.net.NetServer;
import io.vertx.core.net.NetServerOptions;

/** A Vert.x {@code NetServer} that speaks Kafka's framing on one listener. */
public final class SocketServer {
  private final NetServer server;

  public SocketServer(
      Vertx vertx, RequestProcessor processor, int requestMaxBytes, PrometheusRegistry registry) {
    Gauge connections =
        Gauge.builder()
            .name("tidelog_connections")
            .help("Open client connections on the Kafka listener")
            .register(registry);
    Counter accepted =
        Counter.builder()
            .name("tidelog_connections_accepted_total")
            .help("Client connections accepted on the Kafka listener")
            .register(registry);
    this.server =
        vertx
            .createNetServer(new NetServerOptions().setTcpNoDelay(true))
            .connectHandler(
                socket -> {
                  accepted.inc();
                  connections.inc();
                  new KafkaConnection(
                      (NetSocketInternal) socket, processor, requestMaxBytes, connections::dec);
                });
  }

  /** Listens on {@code host:port} (0 picks a free port) and returns the bound port. */
  public Future<Integer> listen(String host, int port) {
    return server.listen(port, host).map(NetServer::actualPort);
  }

  public Future<Void> close() {
    return server.close();
  }
}
