package io.tidelog.broker.replica;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.function.Function;
import java.util.function.ToLongFunction;
import org.apache.kafka.common.TopicPartition;

/**
 * A Fetch waiting for {@code min.bytes}, as Kafka's {@code DelayedFetch}: it counts the bytes each
 * of its partitions has for it, updated by a check after each change on that partition, and
 * completes once they add up to {@code minBytes}, once a partition must be answered now (it moved,
 * or the fetch offset left the log), or at {@code max.wait.ms}. Then it reads once more the
 * partitions that changed since the first read (a change was signalled on them, or they had bytes),
 * and answers the others as the first read did: an idle partition costs its shard no second hop. At
 * {@code max.wait.ms} it reads every partition again.
 */
final class DelayedFetch extends DelayedOperation {
  /** What {@code bytesAvailable} answers for a partition that must be answered now. */
  static final long ANSWER_NOW = -1;

  private final FetchParams params;
  private final List<PartitionFetch> partitions;
  private final Map<TopicPartition, Integer> index;
  private final AtomicLongArray available;
  private final AtomicLong total;

  /** 1 for each partition to read again on completion. */
  private final AtomicIntegerArray changed;

  private final ToLongFunction<PartitionFetch> bytesAvailable;
  private final Function<List<Integer>, CompletableFuture<List<FetchedPartition>>> read;
  private final CompletableFuture<List<FetchedPartition>> result = new CompletableFuture<>();

  /**
   * @param bytesRead the bytes each partition had at the first read, in request order
   * @param bytesAvailable on a partition's shard: the bytes it has for this fetch now, or {@link
   *     #ANSWER_NOW}
   * @param read the answer: reads again the partitions at the given indexes (every one when null),
   *     answering the others as the first read did
   */
  DelayedFetch(
      FetchParams params,
      List<PartitionFetch> partitions,
      long[] bytesRead,
      ToLongFunction<PartitionFetch> bytesAvailable,
      Function<List<Integer>, CompletableFuture<List<FetchedPartition>>> read) {
    this.params = params;
    this.partitions = partitions;
    this.index = new HashMap<>();
    for (int i = 0; i < partitions.size(); i++) {
      index.put(partitions.get(i).tp(), i);
    }
    this.available = new AtomicLongArray(bytesRead);
    this.changed = new AtomicIntegerArray(bytesRead.length);
    long sum = 0;
    for (int i = 0; i < bytesRead.length; i++) {
      sum += bytesRead[i];
      if (bytesRead[i] != 0) {
        changed.set(i, 1);
      }
    }
    this.total = new AtomicLong(sum);
    this.bytesAvailable = bytesAvailable;
    this.read = read;
  }

  CompletableFuture<List<FetchedPartition>> result() {
    return result;
  }

  List<TopicPartition> keys() {
    return partitions.stream().map(PartitionFetch::tp).toList();
  }

  /** On {@code key}'s shard, after a change there. */
  @Override
  void tryComplete(TopicPartition key) {
    check(key, true);
  }

  /**
   * On {@code key}'s shard, once after the watch: counts what changed between the first read and
   * the watch, which signalled nothing.
   */
  void recheck(TopicPartition key) {
    check(key, false);
  }

  private void check(TopicPartition key, boolean signalled) {
    Integer i = index.get(key);
    if (i == null) {
      return;
    }
    long bytes = bytesAvailable.applyAsLong(partitions.get(i));
    if (signalled || bytes != 0) {
      changed.set(i, 1);
    }
    if (bytes == ANSWER_NOW) {
      forceComplete();
      return;
    }
    long before = available.getAndSet(i, bytes);
    if (total.addAndGet(bytes - before) >= params.minBytes()) {
      forceComplete();
    }
  }

  @Override
  void onComplete(boolean expired) {
    List<Integer> again = null;
    if (!expired) {
      again = new ArrayList<>();
      for (int i = 0; i < changed.length(); i++) {
        if (changed.get(i) != 0) {
          again.add(i);
        }
      }
    }
    read.apply(again)
        .whenComplete(
            (partitionsRead, e) -> {
              if (e != null) {
                result.completeExceptionally(e);
              } else {
                result.complete(partitionsRead);
              }
            });
  }
}
