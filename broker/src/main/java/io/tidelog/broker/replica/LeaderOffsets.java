package io.tidelog.broker.replica;

import io.tidelog.broker.cluster.BrokerInfo;
import io.tidelog.broker.cluster.ClusterImage;
import io.tidelog.broker.cluster.PartitionState;
import io.tidelog.broker.network.PeerConnection;
import io.tidelog.broker.network.PeerListener;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.message.ListOffsetsRequestData.ListOffsetsPartition;
import org.apache.kafka.common.message.ListOffsetsRequestData.ListOffsetsTopic;
import org.apache.kafka.common.requests.ListOffsetsRequest;
import org.apache.kafka.common.requests.ListOffsetsResponse;

/**
 * The end offsets that consumers see (high watermarks) of any partitions, asked of their leaders:
 * from this broker's replicas for partitions it leads, and with a ListOffsets ({@code latest}) to
 * each other leader, as Kafka's lag tools ask. A partition whose leader is unknown or does not
 * answer is left out.
 *
 * <p>Call from a Vert.x context (the connections to other brokers live on it).
 */
public final class LeaderOffsets {
  private static final int CONNECT_TIMEOUT_MS = 5_000;
  private static final int RESPONSE_MAX_BYTES = 16 << 20;
  private static final short LIST_OFFSETS_VERSION = 7;

  private final Vertx vertx;
  private final PeerListener listener;
  private final ReplicaManager replicas;
  private final Supplier<ClusterImage> image;

  public LeaderOffsets(
      Vertx vertx, PeerListener listener, ReplicaManager replicas, Supplier<ClusterImage> image) {
    this.vertx = vertx;
    this.listener = listener;
    this.replicas = replicas;
    this.image = image;
  }

  public CompletableFuture<Map<TopicPartition, Long>> highWatermarks(
      Collection<TopicPartition> partitions) {
    ClusterImage now = image.get();
    Map<Integer, List<TopicPartition>> byLeader = new HashMap<>();
    for (TopicPartition tp : partitions) {
      now.partition(tp)
          .filter(state -> state.leader() != PartitionState.NO_LEADER)
          .ifPresent(
              state -> byLeader.computeIfAbsent(state.leader(), l -> new ArrayList<>()).add(tp));
    }
    Map<TopicPartition, Long> ends = new ConcurrentHashMap<>();
    List<CompletableFuture<Void>> asks = new ArrayList<>();
    byLeader.forEach(
        (leader, led) -> {
          if (leader == replicas.localId()) {
            for (TopicPartition tp : led) {
              asks.add(
                  replicas
                      .offsets(tp)
                      .handle(
                          (offsets, e) -> {
                            if (e == null) {
                              ends.put(tp, offsets.highWatermark());
                            }
                            return null;
                          }));
            }
          } else {
            BrokerInfo broker = now.brokers().get(leader);
            BrokerInfo.Endpoint endpoint =
                broker == null ? null : broker.endpoint(listener.name()).orElse(null);
            if (endpoint != null) {
              asks.add(ask(endpoint, led, ends));
            }
          }
        });
    return CompletableFuture.allOf(asks.toArray(CompletableFuture[]::new)).thenApply(v -> ends);
  }

  private CompletableFuture<Void> ask(
      BrokerInfo.Endpoint leader, List<TopicPartition> partitions, Map<TopicPartition, Long> ends) {
    Map<String, ListOffsetsTopic> topics = new HashMap<>();
    for (TopicPartition tp : partitions) {
      topics
          .computeIfAbsent(tp.topic(), name -> new ListOffsetsTopic().setName(name))
          .partitions()
          .add(
              new ListOffsetsPartition()
                  .setPartitionIndex(tp.partition())
                  .setTimestamp(ListOffsetsRequest.LATEST_TIMESTAMP));
    }
    ListOffsetsRequest request =
        ListOffsetsRequest.Builder.forConsumer(false, IsolationLevel.READ_UNCOMMITTED)
            .setTargetTimes(new ArrayList<>(topics.values()))
            .build(LIST_OFFSETS_VERSION);
    Future<Void> asked =
        PeerConnection.connect(
                vertx,
                listener,
                leader.host(),
                leader.port(),
                "tidelog-lag-" + replicas.localId(),
                CONNECT_TIMEOUT_MS,
                RESPONSE_MAX_BYTES)
            .compose(
                connection ->
                    connection
                        .send(request)
                        .andThen(done -> connection.close())
                        .map(
                            response -> {
                              ((ListOffsetsResponse) response)
                                  .data()
                                  .topics()
                                  .forEach(
                                      t ->
                                          t.partitions().stream()
                                              .filter(p -> p.errorCode() == 0)
                                              .forEach(
                                                  p ->
                                                      ends.put(
                                                          new TopicPartition(
                                                              t.name(), p.partitionIndex()),
                                                          p.offset())));
                              return null;
                            }));
    return asked.toCompletionStage().toCompletableFuture().handle((v, e) -> null);
  }
}
