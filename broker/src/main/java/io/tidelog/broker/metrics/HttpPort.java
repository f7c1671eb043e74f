package io.tidelog.broker.metrics;

import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.http.HttpServerRequest;

/**
 * The broker's HTTP port, bound once when the broker starts and held until it stops. Until the
 * broker serves, it answers {@code /healthz} (alive) and 503 to everything else (not ready):
 * waiting for etcd and recovering the logs may take minutes, and meanwhile Kubernetes must neither
 * restart the pod in a loop nor send it clients. Then it answers with the routes it is given. Bound
 * once, the port is never released between the two, where another process could take it.
 */
public final class HttpPort {
  private final HttpServer server;
  private volatile Handler<HttpServerRequest> routes = HttpPort::starting;

  private HttpPort(Vertx vertx) {
    this.server = vertx.createHttpServer(serverOptions()).requestHandler(this::handle);
  }

  /** Binds {@code host}:{@code port}, answering as a starting broker. */
  public static Future<HttpPort> listen(Vertx vertx, int port, String host) {
    HttpPort http = new HttpPort(vertx);
    return http.server.listen(port, host).map(http);
  }

  /** From now on answers with {@code routes}. */
  public void serve(Handler<HttpServerRequest> routes) {
    this.routes = routes;
  }

  public Future<Void> close() {
    return server.close();
  }

  /**
   * HTTP/1.1 only, what Prometheus and the kubelet speak: no h2c upgrade, which Vert.x grants by
   * default to a client that asks (Java's HttpClient asks on every {@code http://} request), and
   * whose answers such a client has been seen to misread as HTTP/2 frames.
   */
  private static HttpServerOptions serverOptions() {
    return new HttpServerOptions().setHttp2ClearTextEnabled(false);
  }

  private void handle(HttpServerRequest request) {
    routes.handle(request);
  }

  private static void starting(HttpServerRequest request) {
    boolean alive = request.path().equals("/healthz");
    request.response().setStatusCode(alive ? 200 : 503).end(alive ? "ok" : "starting");
  }
}
