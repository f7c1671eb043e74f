package io.tidelog.broker.network;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.internal.net.NetSocketInternal;
import io.vertx.core.net.NetServer;
import io.vertx.core.net.NetServerOptions;

/** A Vert.x {@code NetServer} that speaks Kafka's framing on one listener. */
public final class SocketServer {
  private final NetServer server;

  public SocketServer(Vertx vertx, RequestProcessor processor, int requestMaxBytes) {
    this.server =
        vertx
            .createNetServer(new NetServerOptions().setTcpNoDelay(true))
            .connectHandler(
                socket ->
                    new KafkaConnection((NetSocketInternal) socket, processor, requestMaxBytes));
  }

  /** Listens on {@code host:port} (0 picks a free port) and returns the bound port. */
  public Future<Integer> listen(String host, int port) {
    return server.listen(port, host).map(NetServer::actualPort);
  }

  public Future<Void> close() {
    return server.close();
  }
}
