package io.tidelog.broker.replica;

import io.netty.util.Timer;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.common.TopicPartition;

/**
 * Where requests wait for their partitions, as Kafka's {@code DelayedOperationPurgatory}: each
 * {@link DelayedOperation} is watched under every partition it waits on, checked after each change
 * on one of them ({@link #checkAndComplete}, on that partition's shard), and expired by one timer
 * shared by the broker's purgatories. Watching, checking and completing cost time linear in the
 * operation's partitions: a completed operation leaves every watch list at once.
 *
 * <p>Bounded by the requests the listener admits: a waiting operation holds its request, and so its
 * bytes of {@code queued.max.request.bytes} and its place among the connection's requests in
 * flight.
 */
final class Purgatory {
  private final Timer timer;
  private final Map<TopicPartition, Set<DelayedOperation>> watchers = new ConcurrentHashMap<>();
  private final AtomicInteger waiting = new AtomicInteger();

  /**
   * @param timer runs expirations; watching and completing operations, on event loops too, schedule
   *     and cancel there without a lock (Netty's timing wheel)
   */
  Purgatory(Timer timer) {
    this.timer = timer;
  }

  /**
   * Watches {@code operation} under {@code keys} until a check completes it or {@code timeoutMs}
   * passes. The caller checks it once after this call if something may have changed since it last
   * looked, as a change before the watch began wakes nobody.
   */
  void watch(DelayedOperation operation, Collection<TopicPartition> keys, long timeoutMs) {
    List<TopicPartition> watched = List.copyOf(keys);
    waiting.incrementAndGet();
    for (TopicPartition key : watched) {
      watchers.compute(
          key,
          (k, ops) -> {
            Set<DelayedOperation> set = ops == null ? ConcurrentHashMap.newKeySet() : ops;
            set.add(operation);
            return set;
          });
    }
    AtomicBoolean unwatched = new AtomicBoolean();
    operation.watching(
        timer.newTimeout(timeout -> operation.expire(), timeoutMs, TimeUnit.MILLISECONDS),
        () -> {
          if (unwatched.compareAndSet(false, true)) {
            unwatch(operation, watched);
          }
        });
    if (operation.isCompleted()) {
      // Completed before its timer and its way out of the watch lists were set
      operation.stopWaiting();
    }
  }

  private void unwatch(DelayedOperation operation, List<TopicPartition> keys) {
    waiting.decrementAndGet();
    for (TopicPartition key : keys) {
      watchers.computeIfPresent(
          key,
          (k, ops) -> {
            ops.remove(operation);
            return ops.isEmpty() ? null : ops;
          });
    }
  }

  /** On {@code key}'s shard, after a change there: lets every operation watching it complete. */
  void checkAndComplete(TopicPartition key) {
    Set<DelayedOperation> ops = watchers.get(key);
    if (ops != null) {
      for (DelayedOperation op : ops) {
        if (!op.isCompleted()) {
          op.tryComplete(key);
        }
      }
    }
  }

  /** How many operations wait on {@code key}. */
  int watching(TopicPartition key) {
    Set<DelayedOperation> ops = watchers.get(key);
    return ops == null ? 0 : ops.size();
  }

  /** How many operations wait here. */
  int size() {
    return waiting.get();
  }

  /** How many partitions have an operation waiting on them. */
  int watchedKeys() {
    return watchers.size();
  }
}
