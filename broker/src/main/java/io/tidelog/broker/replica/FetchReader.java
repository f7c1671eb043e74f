package io.tidelog.broker.replica;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import org.apache.kafka.common.errors.OffsetOutOfRangeException;

/**
 * Reads a Fetch's partitions once, in request order, each on its shard: every partition within its
 * own {@code maxBytes} and what the fetch's {@code maxBytes} has left, the first batch returned
 * even when larger (KIP-74). A partition past the budget is answered with its offsets only.
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
    List<FetchedPartition> partitions = new ArrayList<>(wanted.size());
    long[] bytes = new long[wanted.size()];
    long[] total = {0};
    boolean[] answerNow = {false};
    CompletableFuture<Void> chain = CompletableFuture.completedFuture(null);
    for (int i = 0; i < wanted.size(); i++) {
      int index = i;
      PartitionFetch partition = wanted.get(i);
      chain =
          chain
              .thenCompose(
                  v ->
                      readOne(
                          params,
                          partition,
                          (int) Math.min(Integer.MAX_VALUE, params.maxBytes() - total[0])))
              .thenAccept(
                  fetched -> {
                    partitions.add(fetched);
                    bytes[index] = fetched.bytes();
                    total[0] += fetched.bytes();
                    answerNow[0] |=
                        fetched.error() != null
                            || (fetched.read() != null && fetched.read().divergingEpoch() != null);
                  });
    }
    return chain.thenApply(v -> new Reads(partitions, bytes, total[0], answerNow[0]));
  }

  private CompletableFuture<FetchedPartition> readOne(
      FetchParams params, PartitionFetch partition, int remainingBytes) {
    int budget = Math.min(partition.maxBytes(), remainingBytes);
    CompletableFuture<PartitionRead> read;
    if (budget <= 0) {
      read = replicas.offsets(partition.tp()).thenApply(PartitionRead::offsetsOnly);
    } else if (params.byFollower()) {
      read =
          replicas.readForFollower(
              partition.tp(),
              params.replicaId(),
              partition.fetchOffset(),
              partition.lastFetchedEpoch(),
              partition.currentLeaderEpoch(),
              budget);
    } else {
      read =
          replicas.read(
              partition.tp(),
              partition.fetchOffset(),
              budget,
              partition.currentLeaderEpoch(),
              params.isolation());
    }
    return read.thenApply(r -> new FetchedPartition(partition.tp(), r, null))
        .exceptionallyCompose(
            e -> {
              FetchedPartition failed = new FetchedPartition(partition.tp(), null, e);
              if (!params.byFollower() || !(unwrap(e) instanceof OffsetOutOfRangeException)) {
                return CompletableFuture.completedFuture(failed);
              }
              // A follower outside the leader's log restarts from its log start or its HW
              return replicas
                  .offsets(partition.tp())
                  .handle(
                      (offsets, unavailable) ->
                          offsets == null
                              ? failed
                              : new FetchedPartition(
                                  partition.tp(), PartitionRead.offsetsOnly(offsets), e));
            });
  }

  private static Throwable unwrap(Throwable e) {
    return e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
  }
}
