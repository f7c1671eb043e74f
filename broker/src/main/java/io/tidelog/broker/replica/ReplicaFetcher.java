package io.tidelog.broker.replica;

import io.tidelog.broker.log.EpochEndOffset;
import io.tidelog.broker.quota.ReplicationQuota;
import io.vertx.core.Context;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.LeaderNotAvailableException;
import org.apache.kafka.common.message.FetchResponseData.PartitionData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.requests.FetchResponse;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Fetches every partition this broker follows from one leader, as Kafka's replica fetcher does: a
 * loop of Fetch requests to its {@link LeaderEndpoint}, carrying each partition's fetch offset (its
 * LEO), current leader epoch and last fetched epoch, so that the leader can report a diverging
 * epoch, in the leader's incremental fetch session. Each response is applied to the {@link
 * FollowedPartitions}, on the partitions' shards, before the next request (a partition whose answer
 * changes nothing, or that the session leaves out, as most of an idle cluster's, is not sent to its
 * shard); the leader's long poll ({@code replica.fetch.wait.max.ms}) paces the loop when idle.
 * While the follower {@link ReplicationQuota} is exceeded, a throttled partition that is behind is
 * left out of the request, as Kafka's {@code shouldFollowerThrottle} does; what throttled
 * partitions fetch counts against it.
 */
final class ReplicaFetcher {
  private static final int BACKOFF_MS = 500;
  private static final Logger LOG = LoggerFactory.getLogger(ReplicaFetcher.class);

  private final int leaderId;
  private final LeaderEndpoint leader;
  private final FollowedPartitions followed;
  private final ReplicationQuota quota;
  private final Set<TopicPartition> partitions = ConcurrentHashMap.newKeySet();

  /**
   * Partitions added since the last round: their positions are asked of their shards, never taken
   * from an answer to a fetch sent before they were (re)added.
   */
  private final Set<TopicPartition> added = ConcurrentHashMap.newKeySet();

  /**
   * The context the fetch loop and its leader's connection live on: its partitions' shard's thread.
   */
  private final Context context;

  private volatile boolean running;

  ReplicaFetcher(
      int leaderId,
      Context context,
      LeaderEndpoint leader,
      FollowedPartitions followed,
      ReplicationQuota quota) {
    this.leaderId = leaderId;
    this.context = context;
    this.leader = leader;
    this.followed = followed;
    this.quota = quota;
  }

  void add(TopicPartition tp) {
    added.add(tp);
    partitions.add(tp);
  }

  /** Stops fetching {@code tp}; returns whether no partition is left. */
  boolean remove(TopicPartition tp) {
    partitions.remove(tp);
    added.remove(tp);
    return partitions.isEmpty();
  }

  void start() {
    running = true;
    context.runOnContext(v -> round(Map.of()));
  }

  void stop() {
    running = false;
  }

  private void later() {
    context.runOnContext(v -> context.owner().setTimer(BACKOFF_MS, id -> round(Map.of())));
  }

  /**
   * On the context: sends the next fetch. {@code known} holds the positions that applying the last
   * response gave, taken as they are; only the other partitions' positions are asked of their
   * shards, so that a busy partition's next fetch leaves at once.
   */
  private void round(Map<TopicPartition, Optional<FetchPosition>> known) {
    if (!running) {
      leader.close();
      return;
    }
    Map<TopicPartition, CompletableFuture<Optional<FetchPosition>>> positions =
        new LinkedHashMap<>();
    boolean asked = false;
    for (TopicPartition tp : partitions) {
      Optional<FetchPosition> position = added.remove(tp) ? null : known.get(tp);
      if (position == null) {
        positions.put(tp, followed.fetchPosition(tp, leaderId));
        asked = true;
      } else {
        positions.put(tp, CompletableFuture.completedFuture(position));
      }
    }
    if (positions.isEmpty()) {
      later();
    } else if (!asked) {
      fetch(positions);
    } else {
      CompletableFuture.allOf(positions.values().toArray(CompletableFuture[]::new))
          .whenComplete((v, e) -> context.runOnContext(x -> fetch(positions)));
    }
  }

  /** On the context, once every position is known: fetches those that are due, or waits. */
  private void fetch(Map<TopicPartition, CompletableFuture<Optional<FetchPosition>>> positions) {
    Map<TopicPartition, FetchPosition> ready = new LinkedHashMap<>();
    positions.forEach(
        (tp, f) -> {
          if (!f.isCompletedExceptionally()) {
            f.join().ifPresent(p -> ready.put(tp, p));
          }
        });
    if (quota.isExceeded()) {
      ready.values().removeIf(FetchPosition::holdsBackWhenExceeded);
    }
    if (ready.isEmpty()) {
      later();
      return;
    }
    leader
        .fetch(ready)
        .onSuccess(response -> apply(response, ready))
        .onFailure(
            e -> {
              if (e instanceof LeaderNotAvailableException) {
                LOG.debug("Not fetching: {}", e.getMessage());
              } else {
                LOG.warn("Fetching from leader {} failed: {}", leaderId, e.getMessage());
              }
              later();
            });
  }

  /**
   * Applies a response: each partition it answers on its shard (unless the answer changes nothing),
   * and a partition it leaves out keeps its position, as the session left it out for having nothing
   * new. Fetches again at once unless the response failed, or every partition of the request failed
   * in it.
   */
  private void apply(FetchResponse response, Map<TopicPartition, FetchPosition> positions) {
    Map<TopicPartition, CompletableFuture<Optional<FetchPosition>>> next = new LinkedHashMap<>();
    Map<TopicPartition, PartitionData> answered =
        response.responseData(Map.of(), LeaderEndpoint.FETCH_VERSION);
    // a partition left out answered as one with nothing new would have: no error
    boolean[] progressed = {
      response.error() == Errors.NONE && !answered.keySet().containsAll(positions.keySet())
    };
    positions.forEach(
        (tp, position) -> {
          PartitionData data = answered.get(tp);
          next.put(
              tp,
              data == null
                  ? CompletableFuture.completedFuture(Optional.of(position))
                  : applyOne(tp, position, data, progressed));
        });
    CompletableFuture.allOf(next.values().toArray(CompletableFuture[]::new))
        .whenComplete(
            (v, e) -> {
              if (e != null) {
                LOG.warn("Applying fetched data from leader {} failed: {}", leaderId, e.toString());
              }
              if (progressed[0]) {
                context.runOnContext(x -> round(known(next)));
              } else {
                later();
              }
            });
  }

  /** The positions that applying gave; a partition whose application failed is asked again. */
  private static Map<TopicPartition, Optional<FetchPosition>> known(
      Map<TopicPartition, CompletableFuture<Optional<FetchPosition>>> applied) {
    Map<TopicPartition, Optional<FetchPosition>> known = new HashMap<>();
    applied.forEach(
        (tp, f) -> {
          Optional<FetchPosition> position = f.isCompletedExceptionally() ? null : f.join();
          if (position != null) {
            known.put(tp, position);
          }
        });
    return known;
  }

  /** Applies one partition's answer; completes with its next position, or null to ask for it. */
  private CompletableFuture<Optional<FetchPosition>> applyOne(
      TopicPartition tp, FetchPosition position, PartitionData data, boolean[] progressed) {
    Errors error = Errors.forCode(data.errorCode());
    switch (error) {
      case NONE -> {
        progressed[0] = true;
        int bytes = data.records() == null ? 0 : data.records().sizeInBytes();
        if (position.throttled()) {
          quota.record(bytes);
        }
        EpochEndOffset diverging =
            data.divergingEpoch().epoch() < 0
                ? null
                : new EpochEndOffset(
                    data.divergingEpoch().epoch(), data.divergingEpoch().endOffset());
        if (position.unchangedBy(
            bytes, diverging != null, data.highWatermark(), data.logStartOffset())) {
          // an idle partition's answer costs its shard no hop
          return CompletableFuture.completedFuture(Optional.of(position));
        }
        return followed.onFetched(
            tp,
            leaderId,
            position,
            diverging,
            (MemoryRecords) data.records(),
            data.highWatermark(),
            data.logStartOffset());
      }
      case OFFSET_OUT_OF_RANGE -> {
        progressed[0] = true;
        return followed.onOutOfRange(
            tp, leaderId, position, data.logStartOffset(), data.highWatermark());
      }
      default -> {
        LOG.debug("{}: leader {} answered {}", tp, leaderId, error);
        return CompletableFuture.completedFuture(null); // asked again, after the backoff if alone
      }
    }
  }
}
