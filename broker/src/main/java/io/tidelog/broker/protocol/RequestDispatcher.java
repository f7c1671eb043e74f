package io.tidelog.broker.protocol;

import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.tidelog.broker.network.AuthenticationMetrics;
import io.tidelog.broker.network.ClientChannel;
import io.tidelog.broker.network.RequestProcessor;
import io.tidelog.broker.quota.ClientQuotaManager;
import io.tidelog.broker.security.ListenerSecurity;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.nio.ByteBuffer;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.IntConsumer;
import org.apache.kafka.common.message.SaslAuthenticateResponseData;
import org.apache.kafka.common.message.SaslHandshakeResponseData;
import org.apache.kafka.common.network.Send;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.ApiVersionsResponse;
import org.apache.kafka.common.requests.FetchRequest;
import org.apache.kafka.common.requests.ProduceRequest;
import org.apache.kafka.common.requests.RequestContext;
import org.apache.kafka.common.requests.RequestHeader;
import org.apache.kafka.common.requests.ResponseHeader;
import org.apache.kafka.common.requests.SaslAuthenticateResponse;
import org.apache.kafka.common.requests.SaslHandshakeResponse;

/**
 * Decodes a request frame with kafka-clients' generated message classes, hands it to the handler of
 * its API, and encodes the response. Runs on the connection's event loop; handlers return futures
 * and never block it. The APIs whose answer grows with the cluster ({@link #SIZED_BY_CLUSTER}:
 * Metadata, whose answer for all topics describes every partition) are answered and encoded on a
 * Vert.x worker instead, as Kafka answers every request on a request handler thread: at 100,000
 * partitions one such answer took an event loop 2 to 3 s, and every other connection on it waited.
 *
 * <p>An ApiVersions request of an unknown version gets a v0 response with {@code
 * UNSUPPORTED_VERSION}, as Kafka does, so the client can retry with a version it shares. Any other
 * request the broker does not serve, or cannot parse, closes the connection.
 *
 * <p>Each connection gets a {@link ClientSession}, which knows who the client is; requests reach
 * the handlers with Kafka's {@link RequestContext}: header, principal, listener, client address.
 */
public final class RequestDispatcher implements RequestProcessor.Factory {
  private static final int HEADER_PEEK_BYTES = 8;
  private static final Set<ApiKeys> SIZED_BY_CLUSTER = EnumSet.of(ApiKeys.METADATA);
  private final Map<ApiKeys, ApiHandler> handlers = new EnumMap<>(ApiKeys.class);
  private final RequestMetrics metrics;
  private final IntConsumer followerGone;
  private final Function<String, ListenerSecurity> listeners;
  private final AuthenticationMetrics authenticationMetrics;
  private final ClientQuotaManager requestQuota;
  private final List<ClientQuotaManager> rateQuotas;

  /**
   * Serves one API, knowing who the client is and which listener it came in on: each handler
   * authorizes what the request asks, as Kafka's do.
   */
  @FunctionalInterface
  interface ApiHandler {
    CompletableFuture<? extends AbstractResponse> handle(
        RequestContext context, AbstractRequest request);
  }

  public RequestDispatcher(
      BrokerApis apis,
      Function<String, ListenerSecurity> listeners,
      AuthenticationMetrics authenticationMetrics,
      ClientQuotaManager requestQuota,
      List<ClientQuotaManager> rateQuotas,
      PrometheusRegistry registry,
      IntConsumer followerGone) {
    this.followerGone = followerGone;
    this.metrics = new RequestMetrics(registry);
    this.listeners = listeners;
    this.authenticationMetrics = authenticationMetrics;
    this.requestQuota = requestQuota;
    this.rateQuotas = List.copyOf(rateQuotas);
    serve(
        ApiKeys.API_VERSIONS,
        (c, r) ->
            CompletableFuture.completedFuture(
                new ApiVersionsResponse(
                    SupportedApis.apiVersions(Errors.NONE, c.header.apiVersion()))));
    serve(ApiKeys.METADATA, apis.metadata()::handle);
    serve(ApiKeys.PRODUCE, apis.produce()::handle);
    serve(ApiKeys.FETCH, apis.fetch()::handle);
    serve(ApiKeys.LIST_OFFSETS, apis.offsets()::listOffsets);
    serve(ApiKeys.OFFSET_FOR_LEADER_EPOCH, apis.offsets()::offsetForLeaderEpoch);
    serve(ApiKeys.DELETE_RECORDS, apis.offsets()::deleteRecords);
    serve(ApiKeys.CREATE_TOPICS, apis.topics()::create);
    serve(ApiKeys.CREATE_PARTITIONS, apis.topics()::createPartitions);
    serve(ApiKeys.DELETE_TOPICS, apis.topics()::delete);
    serve(ApiKeys.DESCRIBE_CONFIGS, apis.configs()::describe);
    serve(ApiKeys.ALTER_CONFIGS, apis.configs()::alter);
    serve(ApiKeys.INCREMENTAL_ALTER_CONFIGS, apis.configs()::incrementalAlter);
    serve(ApiKeys.DESCRIBE_CLUSTER, apis.metadata()::describeCluster);
    serve(ApiKeys.INIT_PRODUCER_ID, apis.producerIds()::handle);
    serve(ApiKeys.FIND_COORDINATOR, apis.coordinators()::handle);
    serve(ApiKeys.JOIN_GROUP, apis.groups()::joinGroup);
    serve(ApiKeys.SYNC_GROUP, apis.groups()::syncGroup);
    serve(ApiKeys.HEARTBEAT, apis.groups()::heartbeat);
    serve(ApiKeys.LEAVE_GROUP, apis.groups()::leaveGroup);
    serve(ApiKeys.OFFSET_COMMIT, apis.groups()::offsetCommit);
    serve(ApiKeys.OFFSET_FETCH, apis.groups()::offsetFetch);
    serve(ApiKeys.LIST_GROUPS, apis.groups()::listGroups);
    serve(ApiKeys.DESCRIBE_GROUPS, apis.groups()::describeGroups);
    serve(ApiKeys.DELETE_GROUPS, apis.groups()::deleteGroups);
    serve(ApiKeys.OFFSET_DELETE, apis.groups()::offsetDelete);
    serve(ApiKeys.TXN_OFFSET_COMMIT, apis.groups()::txnOffsetCommit);
    serve(ApiKeys.ALTER_USER_SCRAM_CREDENTIALS, apis.scramCredentials()::alter);
    serve(ApiKeys.DESCRIBE_USER_SCRAM_CREDENTIALS, apis.scramCredentials()::describe);
    serve(ApiKeys.CREATE_ACLS, apis.acls()::create);
    serve(ApiKeys.DESCRIBE_ACLS, apis.acls()::describe);
    serve(ApiKeys.DELETE_ACLS, apis.acls()::delete);
    serve(ApiKeys.ALTER_CLIENT_QUOTAS, apis.quotas()::alter);
    serve(ApiKeys.DESCRIBE_CLIENT_QUOTAS, apis.quotas()::describe);
    serve(ApiKeys.DESCRIBE_LOG_DIRS, apis.logDirs()::describe);
    serve(ApiKeys.ALTER_REPLICA_LOG_DIRS, apis.logDirs()::alter);
    serve(ApiKeys.DESCRIBE_PRODUCERS, apis.producers()::handle);
    serve(ApiKeys.ELECT_LEADERS, apis.elections()::elect);
    serve(ApiKeys.ALTER_PARTITION_REASSIGNMENTS, apis.reassignments()::alter);
    serve(ApiKeys.LIST_PARTITION_REASSIGNMENTS, apis.reassignments()::list);
    serve(ApiKeys.WRITE_TXN_MARKERS, apis.txnMarkers()::handle);
    serve(ApiKeys.ADD_PARTITIONS_TO_TXN, apis.transactions()::addPartitions);
    serve(ApiKeys.ADD_OFFSETS_TO_TXN, apis.transactions()::addOffsets);
    serve(ApiKeys.END_TXN, apis.transactions()::endTxn);
    serve(ApiKeys.DESCRIBE_TRANSACTIONS, apis.transactions()::describe);
    serve(ApiKeys.LIST_TRANSACTIONS, apis.transactions()::list);
    // where no authentication is under way (ClientSession runs those), as Kafka answers them
    serve(
        ApiKeys.SASL_HANDSHAKE,
        (c, r) ->
            CompletableFuture.completedFuture(
                new SaslHandshakeResponse(
                    new SaslHandshakeResponseData()
                        .setErrorCode(Errors.ILLEGAL_SASL_STATE.code()))));
    serve(
        ApiKeys.SASL_AUTHENTICATE,
        (c, r) ->
            CompletableFuture.completedFuture(
                new SaslAuthenticateResponse(
                    new SaslAuthenticateResponseData()
                        .setErrorCode(Errors.ILLEGAL_SASL_STATE.code())
                        .setErrorMessage(
                            "SaslAuthenticate request received after successful"
                                + " authentication"))));
    for (ApiKeys api : SupportedApis.served()) {
      if (!handlers.containsKey(api)) {
        throw new IllegalStateException(api + " is advertised but has no handler");
      }
    }
  }

  /**
   * Tells of a connection that closed after broker {@code replicaId} fetched on it as a follower:
   * if its process died, its port now refuses connections.
   */
  void followerGone(int replicaId) {
    followerGone.accept(replicaId);
  }

  private void serve(ApiKeys api, ApiHandler handler) {
    handlers.put(api, handler);
  }

  @Override
  public RequestProcessor open(ClientChannel channel) {
    return new ClientSession(
        this, channel, listeners, authenticationMetrics, System::currentTimeMillis);
  }

  /** Answers one frame of {@code session}'s connection. */
  Future<Optional<Send>> process(ByteBuffer frame, ClientSession session) {
    if (frame.remaining() < HEADER_PEEK_BYTES) {
      return Future.failedFuture(
          "a " + frame.remaining() + "-byte frame cannot hold a request header");
    }
    long startNanos = System.nanoTime();
    short apiId = frame.getShort(0);
    short version = frame.getShort(2);
    int correlationId = frame.getInt(4);
    if (!ApiKeys.hasId(apiId)) {
      return Future.failedFuture("unknown API key " + apiId);
    }
    ApiKeys api = ApiKeys.forId(apiId);
    if (!SupportedApis.isServed(api, version)) {
      if (api == ApiKeys.API_VERSIONS) {
        ApiVersionsResponse response =
            new ApiVersionsResponse(SupportedApis.apiVersions(Errors.UNSUPPORTED_VERSION));
        return Future.succeededFuture(
            Optional.of(response.toSend(new ResponseHeader(correlationId, (short) 0), (short) 0)));
      }
      return Future.failedFuture(api + " v" + version + " is not served");
    }
    RequestHeader header;
    AbstractRequest request;
    try {
      header = RequestHeader.parse(frame);
      request = AbstractRequest.parseRequest(api, version, new ByteBufferAccessor(frame)).request;
    } catch (RuntimeException e) {
      return Future.failedFuture("malformed " + api + " v" + version + " request: " + e);
    }
    if (request instanceof FetchRequest fetch && fetch.replicaId() >= 0) {
      session.fetchedBy(fetch.replicaId());
    }
    RequestContext client = session.contextOf(header);
    session.oneRequestAtATime(!exempt(client, request) && underRateQuota(client));
    long receivedNanos = metrics.received();
    Context context = Vertx.currentContext();
    if (SIZED_BY_CLUSTER.contains(api)) {
      long[] answerNanos = new long[1];
      return context
          .executeBlocking(
              () -> {
                long start = System.nanoTime();
                CompletableFuture<AbstractResponse> answered =
                    answer(api, client, request, receivedNanos);
                answerNanos[0] = System.nanoTime() - start;
                return answered;
              },
              false)
          .compose(answered -> Future.fromCompletionStage(answered, context))
          .compose(
              r ->
                  context.executeBlocking(
                      () -> {
                        throttle(r, client, request, answerNanos[0], session);
                        return encodeAndRecord(r, header, request, version, client);
                      },
                      false));
    }
    CompletableFuture<AbstractResponse> answered = answer(api, client, request, receivedNanos);
    // what this thread spent on the request: parsing it and the handler's own part
    long handlerNanos = System.nanoTime() - startNanos;
    return Future.fromCompletionStage(answered, context)
        .map(
            r -> {
              throttle(r, client, request, handlerNanos, session);
              return encodeAndRecord(r, header, request, version, client);
            });
  }

  /**
   * Charges {@code nanos} of the request to its client's {@code request_percentage} quota, as Kafka
   * charges its request handler threads' time, and sets and mutes for the longer of that throttle
   * and the response's own (a byte-rate quota's).
   */
  private void throttle(
      AbstractResponse response,
      RequestContext client,
      AbstractRequest request,
      long nanos,
      ClientSession session) {
    if (!exempt(client, request)) {
      int requestThrottleMs =
          requestQuota.recordAndGetThrottleTimeMs(
              client.principal.getName(), client.clientId(), percentOfAThread(nanos));
      if (requestThrottleMs > response.throttleTimeMs()) {
        response.maybeSetThrottleTimeMs(requestThrottleMs);
      }
    }
    if (response.throttleTimeMs() > 0) {
      session.mute(response.throttleTimeMs());
    }
  }

  /** Encodes the response, and charges the encoding to the client's quota for later requests. */
  private Optional<Send> encodeAndRecord(
      AbstractResponse response,
      RequestHeader header,
      AbstractRequest request,
      short version,
      RequestContext client) {
    long start = System.nanoTime();
    Optional<Send> send = encode(response, header, request, version);
    if (!exempt(client, request)) {
      requestQuota.recordNoThrottle(
          client.principal.getName(),
          client.clientId(),
          percentOfAThread(System.nanoTime() - start));
    }
    return send;
  }

  /**
   * Whether the request is outside {@code request_percentage}: sent before the connection
   * authenticated (ApiVersions, which Kafka's authenticator answers itself), a follower's fetch or
   * a cluster action, as in Kafka.
   */
  private static boolean exempt(RequestContext client, AbstractRequest request) {
    return client.principal == null
        || request.apiKey().clusterAction
        || request instanceof FetchRequest fetch && fetch.isFromFollower();
  }

  /**
   * Whether a byte-rate or request quota applies to the client: its connection is then served one
   * request at a time, as Kafka serves all, so that its throttle reaches what it pipelines.
   */
  private boolean underRateQuota(RequestContext client) {
    String user = client.principal.getName();
    return rateQuotas.stream().anyMatch(q -> q.applies(user, client.clientId()));
  }

  /** Nanoseconds as Kafka's request quota counts them: percent-seconds of one thread. */
  private static double percentOfAThread(long nanos) {
    return nanos * 100.0 / TimeUnit.SECONDS.toNanos(1);
  }

  private CompletableFuture<AbstractResponse> answer(
      ApiKeys api, RequestContext context, AbstractRequest request, long receivedNanos) {
    RequestHeader header = context.header;
    CompletableFuture<AbstractResponse> response;
    try {
      response = handlers.get(api).handle(context, request).thenApply(r -> (AbstractResponse) r);
    } catch (RuntimeException e) {
      response = CompletableFuture.failedFuture(e);
    }
    response =
        response.exceptionally(
            e -> {
              ErrorMapping.errorOf(e, header); // logs what is not a Kafka API error
              return request.getErrorResponse(0, Errors.maybeUnwrapException(e));
            });
    response.whenComplete((r, e) -> metrics.answered(api, receivedNanos));
    return response;
  }

  private static Optional<Send> encode(
      AbstractResponse response, RequestHeader header, AbstractRequest request, short version) {
    return expectsNoResponse(request)
        ? Optional.empty()
        : Optional.of(response.toSend(header.toResponseHeader(), version));
  }

  private static boolean expectsNoResponse(AbstractRequest request) {
    return request instanceof ProduceRequest produce && produce.acks() == 0;
  }
}
