package io.tidelog.broker.replica;

import io.tidelog.broker.cluster.CrashDetector;
import io.tidelog.broker.cluster.MetadataStore;
import io.tidelog.broker.network.PeerListener;
import io.tidelog.broker.quota.ReplicationQuota;
import io.vertx.core.Vertx;
import java.util.HashMap;
import java.util.Map;
import org.apache.kafka.common.TopicPartition;

/**
 * The follower side of replication: one {@link ReplicaFetcher} per leader this broker follows
 * partitions of, started on the first and stopped with the last. Settings are Kafka's {@code
 * replica.fetch.*}; every fetcher draws on one follower {@link ReplicationQuota}, and tells one
 * {@link CrashDetector} of the connections to leaders that broke.
 */
public final class ReplicaFetchers implements AutoCloseable {
  private final Vertx vertx;
  private final PeerListener listener;
  private final MetadataStore metadata;
  private final FollowedPartitions followed;
  private final FetchSettings settings;
  private final ReplicationQuota quota;
  private final CrashDetector crashes;
  private final Map<Integer, ReplicaFetcher> byLeader = new HashMap<>();

  public ReplicaFetchers(
      Vertx vertx,
      PeerListener listener,
      MetadataStore metadata,
      ReplicaManager replicas,
      int maxWaitMs,
      int partitionMaxBytes,
      int responseMaxBytes,
      ReplicationQuota quota,
      CrashDetector crashes) {
    this.quota = quota;
    this.crashes = crashes;
    this.vertx = vertx;
    this.listener = listener;
    this.metadata = metadata;
    this.followed = replicas;
    this.settings =
        new FetchSettings(replicas.localId(), maxWaitMs, partitionMaxBytes, responseMaxBytes);
  }

  synchronized void follow(TopicPartition tp, int leaderId) {
    ReplicaFetcher fetcher = byLeader.get(leaderId);
    if (fetcher == null) {
      // Started with its first partition, so that its first round fetches it
      fetcher =
          new ReplicaFetcher(
              leaderId,
              vertx.getOrCreateContext(),
              new LeaderEndpoint(leaderId, vertx, listener, metadata, settings, crashes),
              followed,
              quota);
      fetcher.add(tp);
      fetcher.start();
      byLeader.put(leaderId, fetcher);
    } else {
      fetcher.add(tp);
    }
  }

  synchronized void unfollow(TopicPartition tp) {
    byLeader
        .entrySet()
        .removeIf(
            entry -> {
              boolean empty = entry.getValue().remove(tp);
              if (empty) {
                entry.getValue().stop();
              }
              return empty;
            });
  }

  @Override
  public synchronized void close() {
    byLeader.values().forEach(ReplicaFetcher::stop);
    byLeader.clear();
  }
}
