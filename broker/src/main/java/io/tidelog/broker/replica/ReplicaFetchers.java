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
 * The follower side of replication: one {@link ReplicaFetcher} per leader and storage shard this
 * broker follows partitions of, started on the first and stopped with the last. Each runs on its
 * shard's thread ({@link Shard#context}), so what it fetches is appended where it is read, with no
 * handoff between threads (Kafka's {@code num.replica.fetchers} threads per leader, here one per
 * shard that holds partitions of that leader). Settings are Kafka's {@code replica.fetch.*}; every
 * fetcher draws on one follower {@link ReplicationQuota}, and tells one {@link CrashDetector} of
 * the connections to leaders that broke.
 */
public final class ReplicaFetchers implements AutoCloseable {
  private final Vertx vertx;
  private final PeerListener listener;
  private final MetadataStore metadata;
  private final ReplicaManager followed;
  private final FetchSettings settings;
  private final ReplicationQuota quota;
  private final CrashDetector crashes;
  private final Map<Source, ReplicaFetcher> bySource = new HashMap<>();

  /** Where a fetcher fetches from (a leader), and the shard whose partitions it fetches. */
  private record Source(int leaderId, Shard shard) {}

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
    Source source = new Source(leaderId, followed.shard(tp));
    ReplicaFetcher fetcher = bySource.get(source);
    if (fetcher == null) {
      // Started with its first partition, so that its first round fetches it
      fetcher =
          new ReplicaFetcher(
              leaderId,
              source.shard().context(vertx),
              new LeaderEndpoint(leaderId, vertx, listener, metadata, settings, crashes),
              followed,
              quota);
      fetcher.add(tp);
      fetcher.start();
      bySource.put(source, fetcher);
    } else {
      fetcher.add(tp);
    }
  }

  synchronized void unfollow(TopicPartition tp) {
    bySource
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
    bySource.values().forEach(ReplicaFetcher::stop);
    bySource.clear();
  }
}
