package io.tidelog.broker.replica;

/** The offsets that bound what a consumer can read from a partition. */
public record PartitionOffsets(long logStartOffset, long highWatermark) {}
