package io.tidelog.broker.replica;

import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.OffsetOutOfRangeException;

/**
 * Reads a Fetch's partitions once: every partition within its own {@code maxBytes} and what the
 * fetch's {@code maxBytes} has left after the partitions before it in the request, the first batch
 * returned even when larger (KIP-74). A partition past the budget is answered with its offsets
 * only.
 *
 * <p>The partitions are read on their shards, one task per shard and all shards at once, each
 * partition within the whole fetch's budget; then, in request order, a read that took more than the
 * budget left for it is read again within that (a read within a smaller budget that holds what the
 * larger one read is the same read). So a request costs one parallel hop to its shards, and one
 * more hop only for each partition where the budget binds, rather than a hop per partition in turn.
 * A shard that is idle when the fetch comes reads in place on the event loop ({@link
 * Shard#runInPlace}), and costs no hop; but not a {@code read_committed} read with records, whose
 * aborted transactions come from the transaction indexes.
 */
final class FetchReader {
  private final ReplicaManager replicas;

  FetchReader(ReplicaManager replicas) {
    this.replicas = replicas;
  }

  /**
   * One read of every partition.
   *
   * @param bytes the record bytes read from each partition, in request order
   * @param answerNow whether a partition must be answered without waiting: an error, or a follower
   *     whose log diverged
   */
  record Reads(List<FetchedPartition> partitions, long[] bytes, long total, boolean answerNow) {}

  CompletableFuture<Reads> read(FetchParams params, List<PartitionFetch> wanted) {
    FetchedPartition[] reads = new FetchedPartition[wanted.size()];
    List<TopicPartition> tps = wanted.stream().map(PartitionFetch::tp).toList();
    return replicas
        .onShardsInPlace(
            tps,
            params.byFollower(), // a follower's fetch is the broker's own work
            (i, inPlace) -> {
              PartitionFetch partition = wanted.get(i);
              reads[i] =
                  readHere(
                      params,
                      partition,
                      Math.min(partition.maxBytes(), params.maxBytes()),
                      inPlace);
              return reads[i] != null;
            })
        .thenCompose(v -> withinBudget(params, wanted, reads, 0, 0));
  }

  /**
   * From partition {@code from} on, in request order, with {@code used} bytes taken before it:
   * keeps each read that fits what the budget leaves it, reads again one that does not.
   */
  private CompletableFuture<Reads> withinBudget(
      FetchParams params,
      List<PartitionFetch> wanted,
      FetchedPartition[] reads,
      int from,
      long used) {
    long total = used;
    for (int i = from; i < reads.length; i++) {
      int allowed =
          (int) Math.min(wanted.get(i).maxBytes(), Math.max(0, params.maxBytes() - total));
      if (reads[i].bytes() > allowed) {
        int index = i;
        long before = total;
        return readAgain(params, wanted.get(i), reads[i], allowed)
            .thenCompose(
                again -> {
                  reads[index] = again;
                  return withinBudget(params, wanted, reads, index + 1, before + again.bytes());
                });
      }
      total += reads[i].bytes();
    }
    long[] bytes = new long[reads.length];
    boolean answerNow = false;
    for (int i = 0; i < reads.length; i++) {
      FetchedPartition fetched = reads[i];
      bytes[i] = fetched.bytes();
      answerNow |=
          fetched.error() != null
              || (fetched.read() != null && fetched.read().divergingEpoch() != null);
    }
    return CompletableFuture.completedFuture(
        new Reads(Arrays.asList(reads), bytes, total, answerNow));
  }

  /**
   * {@code partition} within {@code allowed} bytes, smaller than what {@code read} (a read without
   * an error) took: its offsets only when no bytes are left, else read again on its shard.
   */
  private CompletableFuture<FetchedPartition> readAgain(
      FetchParams params, PartitionFetch partition, FetchedPartition read, int allowed) {
    if (allowed <= 0) {
      PartitionRead first = read.read();
      return CompletableFuture.completedFuture(
          new FetchedPartition(
              partition.tp(),
              PartitionRead.offsetsOnly(
                  new PartitionOffsets(
                      first.logStartOffset(), first.highWatermark(), first.lastStableOffset())),
              null));
    }
    FetchedPartition[] again = new FetchedPartition[1];
    return replicas
        .onShards(
            List.of(partition.tp()),
            params.byFollower(),
            i -> again[0] = readHere(params, partition, allowed, false))
        .thenApply(v -> again[0]);
  }

  /**
   * On the partition's shard: its read within {@code budget} bytes, or why it failed; {@code
   * inPlace}, null when that takes more than the log (see {@link Partition#readAsConsumer}).
   */
  private FetchedPartition readHere(
      FetchParams params, PartitionFetch partition, int budget, boolean inPlace) {
    TopicPartition tp = partition.tp();
    try {
      PartitionRead read =
          params.byFollower()
              ? replicas.readForFollower(
                  tp,
                  params.replicaId(),
                  partition.fetchOffset(),
                  partition.lastFetchedEpoch(),
                  partition.currentLeaderEpoch(),
                  budget)
              : replicas.readForConsumer(
                  tp,
                  partition.fetchOffset(),
                  budget,
                  partition.currentLeaderEpoch(),
                  params.isolation(),
                  inPlace);
      return read == null ? null : new FetchedPartition(tp, read, null);
    } catch (OffsetOutOfRangeException e) {
      if (!params.byFollower()) {
        return new FetchedPartition(tp, null, e);
      }
      // A follower outside the leader's log restarts from its log start or its HW
      try {
        return new FetchedPartition(tp, PartitionRead.offsetsOnly(replicas.leaderOffsets(tp)), e);
      } catch (RuntimeException unavailable) {
        return new FetchedPartition(tp, null, e);
      }
    } catch (RuntimeException e) {
      return new FetchedPartition(tp, null, e);
    }
  }
}
