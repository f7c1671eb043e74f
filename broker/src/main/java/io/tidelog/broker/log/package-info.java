/**
 * The partition log storage engine: plain Java, no Vert.x, no knowledge of the network.
 *
 * <p>{@link io.tidelog.broker.log.LogManager} owns the {@code log.dirs}; each partition replica is
 * a {@link io.tidelog.broker.log.PartitionLog} made of {@code LogSegment}s ({@code .log}, {@code
 * .index}, {@code .timeindex}, named by base offset), as in Kafka. The record format is Kafka's v2
 * batch, parsed and validated with kafka-clients' own classes.
 *
 * <p>Threads: a {@code PartitionLog} has a single writer. The broker owns each partition on one
 * ordered context and makes every call from there; only offset getters may be read elsewhere. The
 * {@code LogManager} is thread-safe. The one background thread, the flusher, fsyncs rolled segments
 * through its own file handles and touches no in-memory state but the recovery point.
 *
 * <p>Errors are kafka-clients' exceptions ({@code CorruptRecordException}, {@code
 * OffsetOutOfRangeException}, {@code KafkaStorageException}, ...); the protocol layer maps them to
 * error codes.
 */
package io.tidelog.broker.log;
