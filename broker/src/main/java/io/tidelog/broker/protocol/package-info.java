/**
 * Kafka's APIs: decoding with kafka-clients' generated message classes, one handler per API family,
 * and the only mapping from exceptions to Kafka error codes ({@code ErrorMapping}).
 *
 * <p>Threads: handlers run on the connection's event loop and return futures. Partition work goes
 * to the partition's storage shard ({@link io.tidelog.broker.replica.ReplicaManager}); metadata
 * writes go to the single metadata executor. Nothing here blocks.
 */
package io.tidelog.broker.protocol;
