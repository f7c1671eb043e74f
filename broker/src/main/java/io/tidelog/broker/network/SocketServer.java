package io.tidelog.broker.network;

import io.netty.channel.ChannelPipeline;
import io.netty.handler.ssl.SslHandler;
import io.netty.handler.stream.ChunkedWriteHandler;
import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.tidelog.broker.config.ListenerLimits;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.internal.net.NetSocketInternal;
import io.vertx.core.net.NetServer;
import io.vertx.core.net.NetServerOptions;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import javax.net.ssl.SSLEngine;
import org.apache.kafka.common.memory.MemoryPool;
import org.apache.kafka.common.memory.SimpleMemoryPool;
import org.apache.kafka.common.network.ListenerName;
import org.apache.kafka.common.security.auth.SecurityProtocol;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The broker's Kafka listeners: a Vert.x {@code NetServer} per listener, speaking Kafka's framing,
 * within one set of {@link ListenerLimits} for the broker as a whole, as Kafka's are: a connection
 * beyond {@code max.connections} or {@code max.connections.per.ip} is closed as soon as it is
 * accepted (Kafka's acceptor waits instead when the broker is full; closing lets the client back
 * off and retry rather than hang), and an idle one after {@code connections.max.idle.ms}. The
 * counts and the request memory are shared by every listener's event loops.
 *
 * <p>On an encrypted listener each connection gets its own {@link SSLEngine} from the listener's
 * supplier, in a Netty {@code SslHandler} ahead of Vert.x's handler, as Kafka gives each channel an
 * engine of its {@code SslFactory}: a supplier that starts handing out engines of a new keystore
 * changes what new connections present and leaves established ones as they are. A handshake that
 * fails counts as a failed authentication.
 */
public final class SocketServer {
  private static final Logger LOG = LoggerFactory.getLogger(SocketServer.class);
  private static final String TOTAL_LIMIT = "max.connections";
  private static final String PER_IP_LIMIT = "max.connections.per.ip";

  private final Vertx vertx;
  private final RequestProcessor.Factory processors;

  /** The limits now: {@code max.connections} and {@code max.connections.per.ip} may change. */
  private volatile ListenerLimits limits;

  private final MemoryPool requestMemory;
  private final AuthenticationMetrics authentications;
  private final Counter accepted;
  private final Counter refused;
  private final Map<ListenerName, NetServer> servers = new ConcurrentHashMap<>();
  private final AtomicInteger open = new AtomicInteger();
  private final AtomicLong connectionIds = new AtomicLong();
  private final Map<String, Integer> openPerIp = new ConcurrentHashMap<>();

  public SocketServer(
      Vertx vertx,
      RequestProcessor.Factory processors,
      ListenerLimits limits,
      AuthenticationMetrics authentications,
      PrometheusRegistry registry) {
    this.vertx = vertx;
    this.processors = processors;
    this.limits = limits;
    this.authentications = authentications;
    this.requestMemory =
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
        .help("Open client connections on the Kafka listeners")
        .callback(callback -> callback.call(open.get()))
        .register(registry);
    accepted =
        Counter.builder()
            .withoutExemplars()
            .name("tidelog_connections_accepted_total")
            .help("Client connections accepted on the Kafka listeners")
            .register(registry);
    refused =
        Counter.builder()
            .withoutExemplars()
            .name("tidelog_connections_refused_total")
            .help("Connections closed on arrival, by the limit they would have broken")
            .labelNames("limit")
            .register(registry);
    refused.initLabelValues(TOTAL_LIMIT);
    refused.initLabelValues(PER_IP_LIMIT);
  }

  /**
   * Listens on {@code host:port} (0 picks a free port) as the listener {@code name} of {@code
   * protocol}, and returns the bound port.
   *
   * @param sslEngines a new server engine per connection; null unless {@code protocol} is SSL or
   *     SASL_SSL
   */
  public Future<Integer> listen(
      ListenerName name,
      SecurityProtocol protocol,
      String host,
      int port,
      Supplier<SSLEngine> sslEngines) {
    boolean encrypted = protocol == SecurityProtocol.SSL || protocol == SecurityProtocol.SASL_SSL;
    if (encrypted != (sslEngines != null)) {
      throw new IllegalArgumentException(
          protocol + " listener " + name + (encrypted ? " needs" : " takes no") + " TLS engines");
    }
    authentications.initListener(name.value());
    NetServerOptions options =
        new NetServerOptions()
            .setTcpNoDelay(true)
            .setIdleTimeout((int) limits.connectionsMaxIdleMs())
            .setIdleTimeoutUnit(TimeUnit.MILLISECONDS);
    NetServer server =
        vertx
            .createNetServer(options)
            .connectHandler(
                socket -> accept((NetSocketInternal) socket, name, protocol, sslEngines));
    if (servers.putIfAbsent(name, server) != null) {
      throw new IllegalStateException("listener " + name + " is bound already");
    }
    return server.listen(port, host).map(NetServer::actualPort);
  }

  /** Stops listening as {@code name} and closes the connections it accepted, as Kafka does. */
  public Future<Void> close(ListenerName name) {
    NetServer server = servers.remove(name);
    return server == null ? Future.succeededFuture() : server.close();
  }

  private void accept(
      NetSocketInternal socket,
      ListenerName name,
      SecurityProtocol protocol,
      Supplier<SSLEngine> sslEngines) {
    String ip = socket.remoteAddress().hostAddress();
    String broken = admit(ip);
    if (broken != null) {
      refused.labelValues(broken).inc();
      LOG.debug("Refused a connection from {}: {} reached", ip, broken);
      socket.close();
      return;
    }
    accepted.inc();
    if (protocol == SecurityProtocol.PLAINTEXT) {
      authentications.succeeded(name.value()); // as Kafka counts a plaintext channel once ready
    }
    SslHandler tls = null;
    if (sslEngines != null) {
      tls = new SslHandler(sslEngines.get());
      ChannelPipeline pipeline = socket.channelHandlerContext().pipeline();
      pipeline.addFirst("tls", tls);
      pipeline.addAfter("tls", "chunks", new ChunkedWriteHandler());
      tls.handshakeFuture()
          .addListener(
              handshake -> {
                if (handshake.isSuccess()) {
                  if (protocol == SecurityProtocol.SSL) {
                    authentications.succeeded(name.value());
                  }
                } else {
                  authentications.failed(name.value());
                  LOG.debug(
                      "TLS handshake with {} on {} failed: {}",
                      ip,
                      name,
                      handshake.cause().toString());
                }
              });
    }
    SslHandler handshaken = tls;
    String connectionId =
        socket.localAddress()
            + "-"
            + socket.remoteAddress()
            + "-"
            + connectionIds.incrementAndGet();
    new KafkaConnection(
        socket,
        () ->
            processors.open(
                new ClientChannel(
                    connectionId,
                    name,
                    protocol,
                    address(ip),
                    socket.remoteAddress().port(),
                    Optional.ofNullable(handshaken).map(h -> h.engine().getSession()))),
        handshaken != null,
        limits.requestMaxBytes(),
        requestMemory,
        () -> release(ip));
  }

  private static InetAddress address(String ip) {
    try {
      return InetAddress.getByName(ip); // a literal address: no lookup
    } catch (UnknownHostException e) {
      throw new IllegalStateException("not an IP address: " + ip, e);
    }
  }

  /**
   * Takes up new connection limits, {@code max.connections} and {@code max.connections.per.ip}
   * (dynamic configs, as in Kafka), for the connections that come from now on; connections open
   * beyond a lowered limit stay open, as in Kafka. The other limits stay as the server started.
   */
  public void reconfigure(ListenerLimits next) {
    ListenerLimits now = limits;
    limits =
        new ListenerLimits(
            now.requestMaxBytes(),
            now.queuedMaxRequestBytes(),
            next.maxConnections(),
            next.maxConnectionsPerIp(),
            now.connectionsMaxIdleMs());
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

  public Future<Void> close() {
    return Future.all(servers.values().stream().map(NetServer::close).toList()).mapEmpty();
  }
}
