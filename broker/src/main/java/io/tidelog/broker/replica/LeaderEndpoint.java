package io.tidelog.broker.replica;

import io.tidelog.broker.cluster.BrokerInfo;
import io.tidelog.broker.cluster.CrashDetector;
import io.tidelog.broker.cluster.MetadataStore;
import io.tidelog.broker.network.PeerConnection;
import io.tidelog.broker.network.PeerListener;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.io.IOException;
import java.util.Map;
import java.util.Optional;
import org.apache.kafka.clients.FetchSessionHandler;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.LeaderNotAvailableException;
import org.apache.kafka.common.requests.FetchRequest;
import org.apache.kafka.common.requests.FetchResponse;
import org.apache.kafka.common.utils.LogContext;

/**
 * One leader as its follower reaches it, as Kafka's {@code RemoteLeaderEndPoint}: connects on first
 * use to the leader's endpoint on the inter-broker listener, sends Fetch requests (v12) built from
 * the partitions' positions, and drops the connection when a request fails, to connect again on the
 * next; a connection the leader's end closed or reset is reported to the {@link CrashDetector} (one
 * never made is not: a broker that starts registers before it listens). Used only on its {@link
 * ReplicaFetcher}'s context.
 */
final class LeaderEndpoint {
  static final short FETCH_VERSION = 12;
  private static final int CONNECT_TIMEOUT_MS = 5_000;

  private final int leaderId;
  private final Vertx vertx;
  private final PeerListener listener;
  private final MetadataStore metadata;
  private final FetchSettings settings;
  private final CrashDetector crashes;
  private final FetchSessionHandler session;
  private PeerConnection connection;

  /** The leader as registered when {@link #connection} was made. */
  private BrokerInfo connectedTo;

  LeaderEndpoint(
      int leaderId,
      Vertx vertx,
      PeerListener listener,
      MetadataStore metadata,
      FetchSettings settings,
      CrashDetector crashes) {
    this.leaderId = leaderId;
    this.crashes = crashes;
    this.vertx = vertx;
    this.listener = listener;
    this.metadata = metadata;
    this.settings = settings;
    this.session =
        new FetchSessionHandler(
            new LogContext("[Follower " + settings.replicaId() + " of " + leaderId + "] "),
            leaderId);
  }

  /**
   * Fetches every partition in {@code positions} from where it stands, in the leader's incremental
   * fetch session (KIP-227) once it has one: the request names only the partitions whose positions
   * changed (and those left out since), and the answer only those where the leader has something
   * new; a partition it leaves out is where its position found it.
   *
   * @return the response, or a failure: {@link LeaderNotAvailableException} while the leader has no
   *     endpoint on the listener, or the connection's error
   */
  Future<FetchResponse> fetch(Map<TopicPartition, FetchPosition> positions) {
    if (connection == null) {
      BrokerInfo broker = metadata.image().brokers().get(leaderId);
      BrokerInfo.Endpoint endpoint =
          broker == null ? null : broker.endpoint(listener.name()).orElse(null);
      if (endpoint == null) {
        return Future.failedFuture(
            new LeaderNotAvailableException(
                "Broker " + leaderId + " has no endpoint on listener " + listener.name()));
      }
      return PeerConnection.connect(
              vertx,
              listener,
              endpoint.host(),
              endpoint.port(),
              "tidelog-replica-fetcher-" + settings.replicaId(),
              CONNECT_TIMEOUT_MS,
              settings.responseMaxBytes() + (1 << 20))
          .compose(
              c -> {
                connection = c;
                connectedTo = broker;
                return fetch(positions);
              });
    }
    FetchSessionHandler.Builder builder = session.newBuilder(positions.size(), false);
    positions.forEach(
        (tp, p) ->
            builder.add(
                tp,
                new FetchRequest.PartitionData(
                    Uuid.ZERO_UUID,
                    p.fetchOffset(),
                    p.logStartOffset(),
                    settings.partitionMaxBytes(),
                    Optional.of(p.leaderEpoch()),
                    p.lastFetchedEpoch() < 0
                        ? Optional.empty()
                        : Optional.of(p.lastFetchedEpoch()))));
    FetchSessionHandler.FetchRequestData data = builder.build();
    FetchRequest request =
        FetchRequest.Builder.forReplica(
                FETCH_VERSION, settings.replicaId(), -1L, settings.maxWaitMs(), 1, data.toSend())
            .metadata(data.metadata())
            .removed(data.toForget())
            .replaced(data.toReplace())
            .setMaxBytes(settings.responseMaxBytes())
            .build(FETCH_VERSION);
    return connection
        .send(request)
        .map(FetchResponse.class::cast)
        .map(
            response -> {
              session.handleResponse(response, FETCH_VERSION); // on an error: full fetch next
              return response;
            })
        .onFailure(
            e -> {
              session.handleError(e);
              BrokerInfo broker = connectedTo;
              PeerConnection lost = connection;
              close();
              if (lost != null && e instanceof IOException) { // closed or reset, not refused
                BrokerInfo.Endpoint endpoint = broker.endpoint(listener.name()).orElseThrow();
                crashes.connectionLost(broker, endpoint.host(), endpoint.port());
              }
            });
  }

  void close() {
    if (connection != null) {
      connection.close();
      connection = null;
    }
  }
}
