package io.tidelog.broker.replica;

import io.tidelog.broker.cluster.MetadataStore;
import io.tidelog.broker.cluster.MetadataStore.PartitionChange;
import io.tidelog.broker.cluster.PartitionState;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import org.apache.kafka.common.TopicPartition;

/**
 * The leaders' ISR changes on their way to etcd, sent as Kafka's {@code AlterPartitionManager}
 * sends them: the changes proposed while a write is in flight wait and go together in the next one,
 * in batched transactions ({@link MetadataStore#alterIsrs}). Thousands of followers falling behind
 * at once (a broker that stalls while it creates 100,000 logs) then cost a few etcd transactions,
 * not one each, and hold the metadata executor, which CreateTopics shares, for one write at a time.
 * A leader proposes at most one change per partition at a time ({@link
 * Partition#isrChangeStarted}), so what waits is bounded by the partitions it leads.
 */
final class IsrChangeSender {
  /** A change waiting to be sent, and what its proposer is told. */
  private record Pending(
      PartitionChange change, CompletableFuture<Optional<PartitionState>> done) {}

  private final MetadataStore metadata;
  private final Executor executor;

  /** Guarded by this. */
  private Map<TopicPartition, Pending> pending = new LinkedHashMap<>();

  /** Whether a write is queued or in flight on the executor. Guarded by this. */
  private boolean sending;

  IsrChangeSender(MetadataStore metadata, Executor executor) {
    this.metadata = metadata;
    this.executor = executor;
  }

  /**
   * Sends {@code change} with the next write.
   *
   * @return the written state; empty when the partition's state changed first
   */
  CompletableFuture<Optional<PartitionState>> send(PartitionChange change) {
    CompletableFuture<Optional<PartitionState>> done = new CompletableFuture<>();
    Pending replaced;
    synchronized (this) {
      replaced = pending.put(change.tp(), new Pending(change, done));
    }
    if (replaced != null) {
      replaced.done().complete(Optional.empty());
    }
    schedule();
    return done;
  }

  private void schedule() {
    synchronized (this) {
      if (sending || pending.isEmpty()) {
        return;
      }
      sending = true;
    }
    try {
      executor.execute(this::sendPending);
    } catch (RejectedExecutionException e) { // closing: nothing will be sent
      Map<TopicPartition, Pending> dropped;
      synchronized (this) {
        sending = false;
        dropped = pending;
        pending = new LinkedHashMap<>();
      }
      dropped.values().forEach(p -> p.done().completeExceptionally(e));
    }
  }

  /**
   * Writes what is pending now, then lets the executor run what queued behind it before the next
   * batch.
   */
  private void sendPending() {
    Map<TopicPartition, Pending> batch;
    synchronized (this) {
      batch = pending;
      pending = new LinkedHashMap<>();
    }
    try {
      List<PartitionChange> changes = batch.values().stream().map(Pending::change).toList();
      Map<TopicPartition, PartitionState> written = metadata.alterIsrs(changes);
      batch.forEach((tp, p) -> p.done().complete(Optional.ofNullable(written.get(tp))));
    } catch (RuntimeException e) {
      batch.values().forEach(p -> p.done().completeExceptionally(e));
    } finally {
      synchronized (this) {
        sending = false;
      }
      schedule();
    }
  }
}
