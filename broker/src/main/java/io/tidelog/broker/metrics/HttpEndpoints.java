package io.tidelog.broker.metrics;

import io.tidelog.broker.cluster.ClusterImage;
import io.tidelog.broker.cluster.MetadataStore;
import io.tidelog.broker.cluster.TopicMetadata;
import io.tidelog.broker.config.BrokerConfig;
import io.tidelog.broker.group.GroupCoordinator;
import io.tidelog.broker.replica.LeaderOffsets;
import io.tidelog.broker.replica.ReplicaManager;
import io.tidelog.broker.replica.ReplicaStatus;
import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServerRequest;
import java.util.Comparator;
import java.util.List;
import java.util.function.BooleanSupplier;
import java.util.stream.Collectors;

/**
 * The routes of the broker's HTTP port once it serves: {@code /metrics}, {@code /healthz} (alive),
 * {@code /readyz} (serving), and the status pages {@code /status} and {@code /lag}, which name
 * topics, groups and replica state and so answer only loopback clients unless {@code
 * tidelog.http.status.remote.enable} is set. Runs on its event loop; the pages' data comes from the
 * shards and the group coordinator as futures.
 */
public final class HttpEndpoints implements Handler<HttpServerRequest> {
  private final Vertx vertx;
  private final MetricsEndpoint metrics;
  private final ReplicaManager replicas;
  private final MetadataStore metadata;
  private final GroupCoordinator groups;
  private final LeaderOffsets leaderOffsets;
  private final boolean statusRemoteEnable;
  private final BooleanSupplier ready;

  public HttpEndpoints(
      Vertx vertx,
      MetricsEndpoint metrics,
      ReplicaManager replicas,
      MetadataStore metadata,
      GroupCoordinator groups,
      LeaderOffsets leaderOffsets,
      boolean statusRemoteEnable,
      BooleanSupplier ready) {
    this.vertx = vertx;
    this.metrics = metrics;
    this.replicas = replicas;
    this.metadata = metadata;
    this.groups = groups;
    this.leaderOffsets = leaderOffsets;
    this.statusRemoteEnable = statusRemoteEnable;
    this.ready = ready;
  }

  @Override
  public void handle(HttpServerRequest request) {
    switch (request.path()) {
      case "/metrics" -> metrics.handle(request);
      case "/healthz" -> request.response().end("ok");
      case "/readyz" -> {
        boolean serving = ready.getAsBoolean();
        request.response().setStatusCode(serving ? 200 : 503).end(serving ? "ready" : "starting");
      }
      case "/status", "/lag" -> {
        if (!statusAllowed(statusRemoteEnable, request.remoteAddress().hostAddress())) {
          request
              .response()
              .setStatusCode(403)
              .end(
                  "/status and /lag answer only loopback clients; see "
                      + BrokerConfig.HTTP_STATUS_REMOTE_ENABLE);
        } else if (request.path().equals("/status")) {
          statusPage(request);
        } else {
          lagPage(request);
        }
      }
      default -> request.response().setStatusCode(404).end();
    }
  }

  /**
   * Whether {@code /status} and {@code /lag} answer a client at {@code address} (an IP literal): on
   * loopback always, beyond it only with {@code tidelog.http.status.remote.enable}.
   */
  public static boolean statusAllowed(boolean remoteEnable, String address) {
    if (remoteEnable) {
      return true;
    }
    try {
      return java.net.InetAddress.getByName(address).isLoopbackAddress(); // a literal: no lookup
    } catch (java.net.UnknownHostException e) {
      return false;
    }
  }

  private void statusPage(HttpServerRequest request) {
    Future.fromCompletionStage(replicas.replicaStatuses(), vertx.getOrCreateContext())
        .onSuccess(
            statuses ->
                request
                    .response()
                    .putHeader("content-type", "text/plain; charset=utf-8")
                    .end(statusText(statuses)))
        .onFailure(e -> request.response().setStatusCode(500).end(e.toString()));
  }

  private void lagPage(HttpServerRequest request) {
    Future.fromCompletionStage(
            groups.lag(leaderOffsets::highWatermarks), vertx.getOrCreateContext())
        .onSuccess(
            lags ->
                request
                    .response()
                    .putHeader("content-type", "text/plain; charset=utf-8")
                    .end(lagText(lags)))
        .onFailure(e -> request.response().setStatusCode(500).end(e.toString()));
  }

  /**
   * {@code /status}, for {@code bin/tidelog dev status}: a line {@code broker <id> controller
   * <id>}, then a line per replica here, {@code replica <topic>-<partition>} followed by {@code
   * key=value} fields; a partition being moved has {@code adding} and {@code removing} replicas.
   */
  private String statusText(List<ReplicaStatus> statuses) {
    ClusterImage image = metadata.image();
    StringBuilder text = new StringBuilder();
    text.append("broker ")
        .append(replicas.localId())
        .append(" controller ")
        .append(image.controllerId())
        .append('\n');
    statuses.stream()
        .sorted(
            Comparator.comparing((ReplicaStatus r) -> r.tp().topic())
                .thenComparingInt(r -> r.tp().partition()))
        .forEach(
            r -> {
              text.append("replica ")
                  .append(r.tp())
                  .append(" role=")
                  .append(r.isLeader() ? "leader" : "follower")
                  .append(" leader=")
                  .append(r.leader())
                  .append(" epoch=")
                  .append(r.leaderEpoch())
                  .append(" replicas=")
                  .append(ids(r.replicas()))
                  .append(" isr=")
                  .append(ids(r.isr()))
                  .append(" hw=")
                  .append(r.highWatermark())
                  .append(" leo=")
                  .append(r.logEndOffset())
                  .append(" start=")
                  .append(r.logStartOffset());
              TopicMetadata topic = image.topics().get(r.tp().topic());
              if (topic != null) {
                topic
                    .reassignment(r.tp().partition())
                    .ifPresent(
                        move ->
                            text.append(" adding=")
                                .append(ids(move.adding()))
                                .append(" removing=")
                                .append(ids(move.removing())));
              }
              text.append('\n');
            });
    return text.toString();
  }

  /**
   * {@code /lag}: for each group this broker coordinates, a line per partition it committed: {@code
   * <group> <topic> <partition> <committed offset> <end offset> <lag>}.
   */
  private static String lagText(List<GroupCoordinator.PartitionLag> lags) {
    StringBuilder text = new StringBuilder();
    lags.stream()
        .sorted(
            Comparator.comparing(GroupCoordinator.PartitionLag::groupId)
                .thenComparing(l -> l.tp().topic())
                .thenComparingInt(l -> l.tp().partition()))
        .forEach(
            l ->
                text.append(l.groupId())
                    .append(' ')
                    .append(l.tp().topic())
                    .append(' ')
                    .append(l.tp().partition())
                    .append(' ')
                    .append(l.committedOffset())
                    .append(' ')
                    .append(l.endOffset())
                    .append(' ')
                    .append(l.lag())
                    .append('\n'));
    return text.toString();
  }

  private static String ids(List<Integer> ids) {
    return ids.isEmpty() ? "-" : ids.stream().map(String::valueOf).collect(Collectors.joining(","));
  }
}
