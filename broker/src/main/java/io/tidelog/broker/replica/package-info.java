/**
 * Replication, as Kafka's: each partition's leader and follower state ({@link
 * io.tidelog.broker.replica.Partition}: ISR, high watermark, followers' log ends, leader epochs),
 * followers fetching from their leaders ({@link io.tidelog.broker.replica.ReplicaFetcher}), and ISR
 * changes written to etcd by the leader ({@link io.tidelog.broker.replica.IsrChangeSender}).
 *
 * <p>The partitions this broker hosts and the storage shards that own them: each partition's log is
 * touched by exactly one single-threaded {@link io.tidelog.broker.replica.Shard}, so the log needs
 * no locks. A shard runs the broker's own work (metadata images, replication, ISR checks, log
 * maintenance) before any client work, and refuses neither: client work is bounded by the requests
 * the listener admits, at most one task per distinct partition of a request.
 *
 * <p><b>Waiting</b> is one mechanism, Kafka's purgatory ({@link
 * io.tidelog.broker.replica.Purgatory}): a request that cannot be answered yet becomes a {@link
 * io.tidelog.broker.replica.DelayedOperation} watched under each partition it waits on. Every shard
 * task that changes a partition (an append, a follower's fetch that moves the high watermark, a new
 * role or ISR, a truncation, a new log start) ends by checking the operations watching that
 * partition, on its shard; one timer expires them. Two purgatories:
 *
 * <ul>
 *   <li><b>Fetch</b> ({@link io.tidelog.broker.replica.DelayedFetch}): a Fetch whose first read
 *       found fewer than {@code min.bytes} counts the bytes each partition has for it, and answers
 *       (reading every partition once more) when they add up, when a partition must be answered now
 *       (its leader moved, the offset left the log), or at {@code max.wait.ms}.
 *   <li><b>Produce</b> ({@link io.tidelog.broker.replica.DelayedProduce}): an {@code acks=all}
 *       append waits for the high watermark to pass it; it fails when the leadership or its epoch
 *       changes or the ISR falls below {@code min.insync.replicas}, and at the request's timeout.
 * </ul>
 *
 * <p>A request's cost is linear in its partitions: watching, checking and completing touch each of
 * its partitions once, and a completed operation leaves every watch list at once. What waits is
 * bounded by the requests in flight, each holding its bytes of {@code queued.max.request.bytes}.
 */
package io.tidelog.broker.replica;
