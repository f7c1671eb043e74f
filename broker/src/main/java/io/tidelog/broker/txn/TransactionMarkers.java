package io.tidelog.broker.txn;

import io.tidelog.broker.cluster.ClusterImage;
import io.tidelog.broker.cluster.MetadataStore;
import io.tidelog.broker.cluster.PartitionState;
import io.tidelog.broker.network.PeerListener;
import io.tidelog.broker.replica.ReplicaManager;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.function.BooleanSupplier;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.ControlRecordType;
import org.apache.kafka.common.record.EndTransactionMarker;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.TransactionResult;
import org.apache.kafka.common.requests.WriteTxnMarkersRequest;
import org.apache.kafka.common.requests.WriteTxnMarkersRequest.TxnMarkerEntry;
import org.apache.kafka.common.requests.WriteTxnMarkersResponse;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes a transaction's commit or abort marker into each of its partitions, as Kafka's {@code
 * TransactionMarkerChannelManager}: into partitions led here through the replica manager, and to
 * each other leader as WriteTxnMarkers (v1) on the inter-broker listener, over one connection per
 * broker that carries, one request at a time, every marker waiting for that broker. A partition is
 * retried, at its current leader, until the marker is written or its topic is gone; a marker that
 * the leader refuses as fenced (an older producer or coordinator epoch) ends the write, since a
 * newer coordinator owns the transaction.
 *
 * <p>Threads: {@link #write} from any thread; the work runs on one Vert.x context.
 */
final class TransactionMarkers implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(TransactionMarkers.class);
  private static final long RETRY_BACKOFF_MS = 100;
  private static final short WRITE_TXN_MARKERS_VERSION = 1;

  /** One marker: the producer's id and epoch, the coordinator's epoch, and the outcome. */
  record Marker(long producerId, short producerEpoch, int coordinatorEpoch, boolean commit) {}

  private final Vertx vertx;
  private final Context context;
  private final PeerListener listener;
  private final ReplicaManager replicas;
  private final MetadataStore metadata;
  private final int requestTimeoutMs;

  /** The channels to other brokers, by broker id; on the context. */
  private final Map<Integer, BrokerChannel<Sent, Map<TopicPartition, Errors>>> channels =
      new HashMap<>();

  private boolean closed;

  TransactionMarkers(
      Vertx vertx,
      PeerListener listener,
      ReplicaManager replicas,
      MetadataStore metadata,
      int requestTimeoutMs) {
    this.vertx = vertx;
    this.context = vertx.getOrCreateContext();
    this.listener = listener;
    this.replicas = replicas;
    this.metadata = metadata;
    this.requestTimeoutMs = requestTimeoutMs;
  }

  /**
   * Writes {@code marker} into every partition of {@code partitions}.
   *
   * @param active whether the write is still wanted (the coordinator still owns the transaction);
   *     asked before each retry
   * @return completes once every partition has the marker or is gone; fails when a leader fenced
   *     the marker, or when {@code active} turned false
   */
  CompletableFuture<Void> write(
      Marker marker, Set<TopicPartition> partitions, BooleanSupplier active) {
    Write write = new Write(marker, new HashSet<>(partitions), active);
    context.runOnContext(v -> attempt(write));
    return write.done;
  }

  /** A write in progress: the partitions still without the marker. On the context. */
  private static final class Write {
    final Marker marker;
    final Set<TopicPartition> remaining;
    final BooleanSupplier active;
    final CompletableFuture<Void> done = new CompletableFuture<>();
    int outstanding;
    boolean fenced;

    Write(Marker marker, Set<TopicPartition> remaining, BooleanSupplier active) {
      this.marker = marker;
      this.remaining = remaining;
      this.active = active;
    }
  }

  private void attempt(Write write) {
    if (closed || !write.active.getAsBoolean()) {
      write.done.completeExceptionally(
          new IllegalStateException("The coordinator no longer owns the transaction"));
      return;
    }
    ClusterImage image = metadata.image();
    Map<Integer, List<TopicPartition>> byLeader = new HashMap<>();
    for (Iterator<TopicPartition> it = write.remaining.iterator(); it.hasNext(); ) {
      TopicPartition tp = it.next();
      PartitionState state = image.partition(tp).orElse(null);
      if (state == null) {
        it.remove(); // the topic was deleted: nothing left to mark
      } else if (state.leader() != PartitionState.NO_LEADER) {
        byLeader.computeIfAbsent(state.leader(), l -> new ArrayList<>()).add(tp);
      }
    }
    if (write.remaining.isEmpty()) {
      write.done.complete(null);
      return;
    }
    write.outstanding = byLeader.size();
    if (byLeader.isEmpty()) {
      retryLater(write);
      return;
    }
    byLeader.forEach(
        (leader, led) -> {
          CompletableFuture<Map<TopicPartition, Errors>> outcome =
              leader == replicas.localId()
                  ? appendLocally(write.marker, led)
                  : channel(leader).send(new Sent(write.marker, led));
          outcome.whenComplete(
              (errors, e) ->
                  context.runOnContext(v -> onOutcome(write, led, e == null ? errors : Map.of())));
        });
  }

  private void onOutcome(
      Write write, List<TopicPartition> sent, Map<TopicPartition, Errors> errors) {
    for (TopicPartition tp : sent) {
      Errors error = errors.getOrDefault(tp, Errors.NETWORK_EXCEPTION);
      switch (error) {
        case NONE -> write.remaining.remove(tp);
        case INVALID_PRODUCER_EPOCH, TRANSACTION_COORDINATOR_FENCED -> {
          LOG.info("{}: marker for producer {} fenced: {}", tp, write.marker.producerId(), error);
          write.fenced = true;
        }
        default ->
            LOG.debug(
                "{}: marker for producer {} failed: {}", tp, write.marker.producerId(), error);
      }
    }
    if (--write.outstanding > 0) {
      return;
    }
    if (write.fenced) {
      write.done.completeExceptionally(
          new IllegalStateException("A newer coordinator or producer epoch fenced the markers"));
    } else if (write.remaining.isEmpty()) {
      write.done.complete(null);
    } else {
      retryLater(write);
    }
  }

  private void retryLater(Write write) {
    vertx.setTimer(RETRY_BACKOFF_MS, id -> context.runOnContext(v -> attempt(write)));
  }

  private CompletableFuture<Map<TopicPartition, Errors>> appendLocally(
      Marker marker, List<TopicPartition> partitions) {
    EndTransactionMarker end =
        new EndTransactionMarker(
            marker.commit() ? ControlRecordType.COMMIT : ControlRecordType.ABORT,
            marker.coordinatorEpoch());
    Map<TopicPartition, Errors> errors = new HashMap<>();
    List<CompletableFuture<Void>> appends = new ArrayList<>();
    for (TopicPartition tp : partitions) {
      appends.add(
          replicas
              .appendMarker(tp, marker.producerId(), marker.producerEpoch(), end, requestTimeoutMs)
              .handle(
                  (info, e) -> {
                    synchronized (errors) {
                      errors.put(
                          tp,
                          e == null
                              ? Errors.NONE
                              : Errors.forException(Errors.maybeUnwrapException(e)));
                    }
                    return null;
                  }));
    }
    return CompletableFuture.allOf(appends.toArray(CompletableFuture[]::new))
        .thenApply(
            v -> {
              synchronized (errors) {
                return Map.copyOf(errors);
              }
            });
  }

  private BrokerChannel<Sent, Map<TopicPartition, Errors>> channel(int brokerId) {
    return channels.computeIfAbsent(
        brokerId,
        id ->
            new BrokerChannel<>(
                id,
                context,
                listener,
                metadata,
                "tidelog-txn-markers-" + replicas.localId(),
                requestTimeoutMs,
                new MarkerProtocol()));
  }

  /** A marker for some partitions of one broker. */
  private record Sent(Marker marker, List<TopicPartition> partitions) {}

  /**
   * Markers to one broker as WriteTxnMarkers v1, at most one per producer id in a request, as the
   * answer is keyed by producer id.
   */
  private static final class MarkerProtocol
      implements BrokerChannel.Protocol<Sent, Map<TopicPartition, Errors>> {
    @Override
    public boolean fits(Sent entry, List<Sent> batch) {
      return batch.stream().noneMatch(s -> s.marker().producerId() == entry.marker().producerId());
    }

    @Override
    public AbstractRequest request(List<Sent> batch) {
      List<TxnMarkerEntry> entries = new ArrayList<>();
      for (Sent sent : batch) {
        Marker marker = sent.marker();
        entries.add(
            new TxnMarkerEntry(
                marker.producerId(),
                marker.producerEpoch(),
                marker.coordinatorEpoch(),
                marker.commit() ? TransactionResult.COMMIT : TransactionResult.ABORT,
                sent.partitions()));
      }
      return new WriteTxnMarkersRequest.Builder(entries).build(WRITE_TXN_MARKERS_VERSION);
    }

    @Override
    public Map<TopicPartition, Errors> result(Sent entry, AbstractResponse response) {
      return response == null
          ? Map.of()
          : ((WriteTxnMarkersResponse) response)
              .errorsByProducerId()
              .getOrDefault(entry.marker().producerId(), Map.of());
    }
  }

  @Override
  public void close() {
    context.runOnContext(
        v -> {
          closed = true;
          channels.values().forEach(BrokerChannel::close);
          channels.clear();
        });
  }
}
