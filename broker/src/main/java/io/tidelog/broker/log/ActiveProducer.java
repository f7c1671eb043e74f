package io.tidelog.broker.log;

/**
 * An idempotent producer as a partition's log knows it (DescribeProducers): its id and epoch, the
 * last sequence it appended, and when the broker appended that batch.
 */
public record ActiveProducer(
    long producerId, short producerEpoch, int lastSequence, long lastAppendedMs) {}
