package io.tidelog.broker.replica;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.function.Supplier;
import java.util.function.ToLongFunction;
import org.apache.kafka.common.TopicPartition;

/**
 * A Fetch waiting for {@code min.bytes}, as Kafka's {@code DelayedFetch}: it counts the bytes each
 * of its partitions has for it, updated by a check after each change on that partition, and
 * completes once they add up to {@code minBytes}, once a partition must be answered now (it moved,
 * or the fetch offset left the log), or at {@code max.wait.ms}. Then it reads every partition once
 * more and answers with that.
 */
final class DelayedFetch extends DelayedOperation {
  /** What {@code bytesAvailable} answers for a partition that must be answered now. */
  static final long ANSWER_NOW = -1;

  private final FetchParams params;
  private final List<PartitionFetch> partitions;
  private final Map<TopicPartition, Integer> index;
  private final AtomicLongArray available;
  private final AtomicLong total;
  private final ToLongFunction<PartitionFetch> bytesAvailable;
  private final Supplier<CompletableFuture<List<FetchedPartition>>> read;
  private final CompletableFuture<List<FetchedPartition>> result = new CompletableFuture<>();

  /**
   * @param bytesRead the bytes each partition had at the first read, in request order
   * @param bytesAvailable on a partition's shard: the bytes it has for this fetch now, or {@link
   *     #ANSWER_NOW}
   * @param read reads every partition, for the answer
   */
  DelayedFetch(
      FetchParams params,
      List<PartitionFetch> partitions,
      long[] bytesRead,
      ToLongFunction<PartitionFetch> bytesAvailable,
      Supplier<CompletableFuture<List<FetchedPartition>>> read) {
    this.params = params;
    this.partitions = partitions;
    this.index = new HashMap<>();
    for (int i = 0; i < partitions.size(); i++) {
      index.put(partitions.get(i).tp(), i);
    }
    this.available = new AtomicLongArray(bytesRead);
    long sum = 0;
    for (long bytes : bytesRead) {
      sum += bytes;
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

  @Override
  void tryComplete(TopicPartition key) {
    Integer i = index.get(key);
    if (i == null) {
      return;
    }
    long bytes = bytesAvailable.applyAsLong(partitions.get(i));
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
    read.get()
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
