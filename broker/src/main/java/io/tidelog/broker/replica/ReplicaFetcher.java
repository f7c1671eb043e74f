package io.tidelog.broker.replica;

import io.tidelog.broker.cluster.BrokerInfo;
import io.tidelog.broker.log.EpochEndOffset;
import io.tidelog.broker.network.PeerConnection;
import io.vertx.core.Context;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.message.FetchResponseData.PartitionData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.requests.FetchRequest;
import org.apache.kafka.common.requests.FetchResponse;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Fetches every partition this broker follows from one leader, as Kafka's replica fetcher does: a
 * loop of Fetch requests (v12) carrying this broker's replica id, each partition's fetch offset
 * (its LEO), current leader epoch and last fetched epoch, so that the leader can report a diverging
 * epoch. Each response is applied on the partitions' shards before the next request; the leader's
 * long poll ({@code replica.fetch.wait.max.ms}) paces the loop when idle.
 */
final class ReplicaFetcher {
  static final short FETCH_VERSION = 12;
  private static final int BACKOFF_MS = 500;
  private static final int CONNECT_TIMEOUT_MS = 5_000;
  private static final Logger LOG = LoggerFactory.getLogger(ReplicaFetcher.class);

  /** Where a follower fetches a partition from. */
  record FetchPosition(
      int leaderEpoch, long fetchOffset, int lastFetchedEpoch, long logStartOffset) {}

  private final int leaderId;
  private final ReplicaFetchers owner;
  private final Set<TopicPartition> partitions = ConcurrentHashMap.newKeySet();

  /** The event-loop context the fetch loop and its connection state live on. */
  private final Context context;

  private PeerConnection connection;
  private volatile boolean running;

  ReplicaFetcher(int leaderId, ReplicaFetchers owner) {
    this.leaderId = leaderId;
    this.owner = owner;
    this.context = owner.vertx().getOrCreateContext();
  }

  void add(TopicPartition tp) {
    partitions.add(tp);
  }

  /** Stops fetching {@code tp}; returns whether no partition is left. */
  boolean remove(TopicPartition tp) {
    partitions.remove(tp);
    return partitions.isEmpty();
  }

  void start() {
    running = true;
    context.runOnContext(v -> round());
  }

  void stop() {
    running = false;
  }

  private void later() {
    context.runOnContext(v -> owner.vertx().setTimer(BACKOFF_MS, id -> round()));
  }

  private void round() {
    if (!running) {
      if (connection != null) {
        connection.close();
        connection = null;
      }
      return;
    }
    Map<TopicPartition, CompletableFuture<Optional<FetchPosition>>> positions =
        new LinkedHashMap<>();
    for (TopicPartition tp : partitions) {
      positions.put(tp, owner.replicas().fetchPosition(tp, leaderId));
    }
    if (positions.isEmpty()) {
      later();
      return;
    }
    CompletableFuture.allOf(positions.values().toArray(CompletableFuture[]::new))
        .whenComplete(
            (v, e) ->
                context.runOnContext(
                    x -> {
                      Map<TopicPartition, FetchPosition> ready = new LinkedHashMap<>();
                      positions.forEach(
                          (tp, f) -> {
                            if (!f.isCompletedExceptionally()) {
                              f.join().ifPresent(p -> ready.put(tp, p));
                            }
                          });
                      if (ready.isEmpty()) {
                        later();
                      } else {
                        fetch(ready);
                      }
                    }));
  }

  private void fetch(Map<TopicPartition, FetchPosition> positions) {
    if (connection == null) {
      BrokerInfo broker = owner.metadata().image().brokers().get(leaderId);
      BrokerInfo.Endpoint leader =
          broker == null ? null : broker.endpoint(owner.listener().name()).orElse(null);
      if (leader == null) {
        later();
        return;
      }
      PeerConnection.connect(
              owner.vertx(),
              owner.listener(),
              leader.host(),
              leader.port(),
              "tidelog-replica-fetcher-" + owner.localId(),
              CONNECT_TIMEOUT_MS,
              owner.responseMaxBytes() + (1 << 20))
          .onSuccess(
              c -> {
                connection = c;
                fetch(positions);
              })
          .onFailure(
              e -> {
                LOG.warn("Connecting to leader {} failed: {}", leaderId, e.getMessage());
                later();
              });
      return;
    }
    Map<TopicPartition, FetchRequest.PartitionData> data = new LinkedHashMap<>();
    positions.forEach(
        (tp, p) ->
            data.put(
                tp,
                new FetchRequest.PartitionData(
                    Uuid.ZERO_UUID,
                    p.fetchOffset(),
                    p.logStartOffset(),
                    owner.partitionMaxBytes(),
                    Optional.of(p.leaderEpoch()),
                    p.lastFetchedEpoch() < 0
                        ? Optional.empty()
                        : Optional.of(p.lastFetchedEpoch()))));
    FetchRequest request =
        FetchRequest.Builder.forReplica(
                FETCH_VERSION, owner.localId(), -1L, owner.maxWaitMs(), 1, data)
            .setMaxBytes(owner.responseMaxBytes())
            .build(FETCH_VERSION);
    connection
        .send(request)
        .onSuccess(response -> apply((FetchResponse) response, positions))
        .onFailure(
            e -> {
              LOG.warn("Fetching from leader {} failed: {}", leaderId, e.getMessage());
              connection.close();
              connection = null;
              later();
            });
  }

  private void apply(FetchResponse response, Map<TopicPartition, FetchPosition> positions) {
    List<CompletableFuture<Void>> applied = new ArrayList<>();
    boolean[] progressed = {false};
    response
        .responseData(Map.of(), FETCH_VERSION)
        .forEach(
            (tp, data) -> {
              FetchPosition position = positions.get(tp);
              if (position != null) {
                applied.add(applyOne(tp, position, data, progressed));
              }
            });
    CompletableFuture.allOf(applied.toArray(CompletableFuture[]::new))
        .whenComplete(
            (v, e) -> {
              if (e != null) {
                LOG.warn("Applying fetched data from leader {} failed: {}", leaderId, e.toString());
              }
              if (progressed[0]) {
                context.runOnContext(x -> round());
              } else {
                later();
              }
            });
  }

  private CompletableFuture<Void> applyOne(
      TopicPartition tp, FetchPosition position, PartitionData data, boolean[] progressed) {
    Errors error = Errors.forCode(data.errorCode());
    switch (error) {
      case NONE -> {
        progressed[0] = true;
        EpochEndOffset diverging =
            data.divergingEpoch().epoch() < 0
                ? null
                : new EpochEndOffset(
                    data.divergingEpoch().epoch(), data.divergingEpoch().endOffset());
        return owner
            .replicas()
            .onFetched(
                tp,
                position,
                diverging,
                (MemoryRecords) data.records(),
                data.highWatermark(),
                data.logStartOffset());
      }
      case OFFSET_OUT_OF_RANGE -> {
        progressed[0] = true;
        return owner
            .replicas()
            .onOutOfRange(tp, position, data.logStartOffset(), data.highWatermark());
      }
      default -> {
        LOG.debug("{}: leader {} answered {}", tp, leaderId, error);
        return CompletableFuture.completedFuture(null);
      }
    }
  }
}
