package io.tidelog.broker.txn;

import io.tidelog.broker.cluster.BrokerInfo;
import io.tidelog.broker.cluster.MetadataStore;
import io.tidelog.broker.network.PeerConnection;
import io.tidelog.broker.network.PeerListener;
import io.vertx.core.Context;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.AbstractResponse;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The coordinator's requests to one other broker, as Kafka's inter-broker send threads carry them:
 * one connection on the inter-broker listener, one request in flight, and the entries that wait
 * meanwhile sent together in the next request ({@link Protocol} builds it and reads each entry's
 * result out of the answer). A request unanswered within the timeout closes the connection; a
 * failed one gives each of its entries the result for no answer, and the next connects again.
 *
 * <p>Not thread-safe: used on one Vert.x context.
 *
 * @param <E> what is sent, one entry per caller
 * @param <R> what each entry gets back
 */
final class BrokerChannel<E, R> {
  private static final Logger LOG = LoggerFactory.getLogger(BrokerChannel.class);
  private static final int CONNECT_TIMEOUT_MS = 5_000;
  private static final int RESPONSE_MAX_BYTES = 1 << 20;

  /** How entries become one request, and each entry's result comes out of its answer. */
  interface Protocol<E, R> {
    /** Whether {@code entry} may go in the same request as {@code batch}. */
    boolean fits(E entry, List<E> batch);

    AbstractRequest request(List<E> batch);

    /** The entry's result; {@code response} null when the request got no answer. */
    R result(E entry, AbstractResponse response);
  }

  private record Queued<E, R>(E entry, CompletableFuture<R> result) {}

  private final int brokerId;
  private final Context context;
  private final PeerListener listener;
  private final MetadataStore metadata;
  private final String clientId;
  private final int requestTimeoutMs;
  private final Protocol<E, R> protocol;
  private final Queue<Queued<E, R>> queued = new ArrayDeque<>();
  private PeerConnection connection;
  private boolean inFlight;

  BrokerChannel(
      int brokerId,
      Context context,
      PeerListener listener,
      MetadataStore metadata,
      String clientId,
      int requestTimeoutMs,
      Protocol<E, R> protocol) {
    this.brokerId = brokerId;
    this.context = context;
    this.listener = listener;
    this.metadata = metadata;
    this.clientId = clientId;
    this.requestTimeoutMs = requestTimeoutMs;
    this.protocol = protocol;
  }

  /** Sends {@code entry} with the next request; on the context. */
  CompletableFuture<R> send(E entry) {
    Queued<E, R> queuedEntry = new Queued<>(entry, new CompletableFuture<>());
    queued.add(queuedEntry);
    drain();
    return queuedEntry.result();
  }

  private void drain() {
    if (inFlight || queued.isEmpty()) {
      return;
    }
    List<Queued<E, R>> batch = new ArrayList<>();
    List<E> entries = new ArrayList<>();
    for (Iterator<Queued<E, R>> it = queued.iterator(); it.hasNext(); ) {
      Queued<E, R> next = it.next();
      if (protocol.fits(next.entry(), entries)) {
        batch.add(next);
        entries.add(next.entry());
        it.remove();
      }
    }
    inFlight = true;
    AbstractRequest request = protocol.request(entries);
    connected()
        .thenCompose(
            c -> {
              long timer =
                  context.owner().setTimer(requestTimeoutMs + CONNECT_TIMEOUT_MS, id -> c.close());
              return c.send(request)
                  .andThen(done -> context.owner().cancelTimer(timer))
                  .toCompletionStage()
                  .toCompletableFuture();
            })
        .whenComplete(
            (response, e) ->
                context.runOnContext(
                    v -> {
                      inFlight = false;
                      if (e != null) {
                        LOG.debug(
                            "{} to broker {} failed: {}", request.apiKey(), brokerId, e.toString());
                        close();
                      }
                      for (Queued<E, R> sent : batch) {
                        sent.result()
                            .complete(protocol.result(sent.entry(), e == null ? response : null));
                      }
                      drain();
                    }));
  }

  private CompletableFuture<PeerConnection> connected() {
    if (connection != null) {
      return CompletableFuture.completedFuture(connection);
    }
    BrokerInfo broker = metadata.image().brokers().get(brokerId);
    BrokerInfo.Endpoint endpoint =
        broker == null ? null : broker.endpoint(listener.name()).orElse(null);
    if (endpoint == null) {
      return CompletableFuture.failedFuture(
          new IllegalStateException(
              "Broker " + brokerId + " has no endpoint on listener " + listener.name()));
    }
    return PeerConnection.connect(
            context.owner(),
            listener,
            endpoint.host(),
            endpoint.port(),
            clientId,
            CONNECT_TIMEOUT_MS,
            RESPONSE_MAX_BYTES)
        .map(
            c -> {
              connection = c;
              return c;
            })
        .toCompletionStage()
        .toCompletableFuture();
  }

  void close() {
    if (connection != null) {
      connection.close();
      connection = null;
    }
  }
}
