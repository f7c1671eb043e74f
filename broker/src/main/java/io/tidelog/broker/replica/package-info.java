/**
 * The partitions this broker hosts and the storage shards that own them: each partition's log is
 * touched by exactly one single-threaded {@link io.tidelog.broker.replica.Shard}, so the log needs
 * no locks. A shard runs the broker's own work (metadata images, replication, ISR checks, acks=all
 * timeouts, log maintenance) before any client work, and refuses neither: client work is bounded by
 * the requests the listener admits, at most one task per distinct partition of a request.
 *
 * <p>Waiting: a Fetch that wants more bytes than are available registers a waiter on its
 * partitions, woken by the next append or high-watermark move ({@code awaitAppend}); an acks=all
 * produce waits in its partition's pending acknowledgements, completed as the high watermark passes
 * it or expired by the replica timer.
 */
package io.tidelog.broker.replica;
