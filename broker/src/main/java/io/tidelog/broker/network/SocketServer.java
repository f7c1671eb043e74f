package io.tidelog.broker.network;

import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.internal.net.NetSocketInternal;
import io.vertx.core.net.NetServer;
import io.vertx.core.net.NetServerOptions;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.common.memory.MemoryPool;
import org.apache.kafka.common.memory.SimpleMemoryPool;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A Vert.x {@code NetServer} that speaks Kafka's framing on one listener, within its {@link
 * ListenerLimits}: a connection beyond {@code max.connections} or {@code max.connections.per.ip} is
 * closed as soon as it is accepted (Kafka's acceptor waits instead when the listener is full;
 * closing lets the client back off and retry rather than hang), and an idle one after {@code
 * connections.max.idle.ms}. The counts are shared by the listener's event loops.
 */
public final class SocketServer {
  private static final Logger LOG = LoggerFactory.getLogger(SocketServer.class);
  private static final String TOTAL_LIMIT = "max.connections";
  private static final String PER_IP_LIMIT = "max.connections.per.ip";

  private final NetServer server;
  private final ListenerLimits limits;
  private final AtomicInteger open = new AtomicInteger();
  private final Map<String, Integer> openPerIp = new ConcurrentHashMap<>();

  public SocketServer(
      Vertx vertx, RequestProcessor processor, ListenerLimits limits, PrometheusRegistry registry) {
    this.limits = limits;
    MemoryPool requestMemory =
        limits.queuedMaxRequestBytes() > 0
            ? new SimpleMemoryPool(
                limits.queuedMaxRequestBytes(), limits.requestMaxBytes(), true, null)
            : MemoryPool.NONE;
    GaugeWithCallback.builder()
        .name("tidelog_request_memory_available_bytes")
        .help("Request memory left of queued.max.request.bytes; at or below 0, connections wait")
        .callback(callback -> callback.call(requestMemory.availableMemory()))
        .register(registry);
    GaugeWithCallback.builder()
        .name("tidelog_connections")
        .help("Open client connections on the Kafka listener")
        .callback(callback -> callback.call(open.get()))
        .register(registry);
    Counter accepted =
        Counter.builder()
            .name("tidelog_connections_accepted_total")
            .help("Client connections accepted on the Kafka listener")
            .register(registry);
    Counter refused =
        Counter.builder()
            .name("tidelog_connections_refused_total")
            .help("Connections closed on arrival, by the limit they would have broken")
            .labelNames("limit")
            .register(registry);
    refused.initLabelValues(TOTAL_LIMIT);
    refused.initLabelValues(PER_IP_LIMIT);
    NetServerOptions options =
        new NetServerOptions()
            .setTcpNoDelay(true)
            .setIdleTimeout((int) limits.connectionsMaxIdleMs())
            .setIdleTimeoutUnit(TimeUnit.MILLISECONDS);
    this.server =
        vertx
            .createNetServer(options)
            .connectHandler(
                socket -> {
                  String ip = socket.remoteAddress().hostAddress();
                  String broken = admit(ip);
                  if (broken != null) {
                    refused.labelValues(broken).inc();
                    LOG.debug("Refused a connection from {}: {} reached", ip, broken);
                    socket.close();
                    return;
                  }
                  accepted.inc();
                  new KafkaConnection(
                      (NetSocketInternal) socket,
                      processor,
                      limits.requestMaxBytes(),
                      requestMemory,
                      () -> release(ip));
                });
  }

  /**
   * Counts a new connection from {@code ip}; or returns the limit it would break, counting none.
   */
  private String admit(String ip) {
    if (open.incrementAndGet() > limits.maxConnections()) {
      open.decrementAndGet();
      return TOTAL_LIMIT;
    }
    boolean[] admitted = {false};
    openPerIp.compute(
        ip,
        (address, count) -> {
          int now = count == null ? 0 : count;
          if (now >= limits.maxConnectionsPerIp()) {
            return count;
          }
          admitted[0] = true;
          return now + 1;
        });
    if (!admitted[0]) {
      open.decrementAndGet();
      return PER_IP_LIMIT;
    }
    return null;
  }

  private void release(String ip) {
    open.decrementAndGet();
    openPerIp.computeIfPresent(ip, (address, count) -> count == 1 ? null : count - 1);
  }

  /** Listens on {@code host:port} (0 picks a free port) and returns the bound port. */
  public Future<Integer> listen(String host, int port) {
    return server.listen(port, host).map(NetServer::actualPort);
  }

  public Future<Void> close() {
    return server.close();
  }
}
