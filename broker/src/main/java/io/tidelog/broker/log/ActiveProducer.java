package io.tidelog.broker.log;

/**
 * An idempotent or transactional producer as a partition's log knows it (DescribeProducers): its id
 * and epoch, the last sequence it appended, when the broker appended that batch, the epoch of the
 * coordinator that wrote its last transaction marker (-1 before any), and the first offset of its
 * open transaction (-1 when none is open).
 */
public record ActiveProducer(
    long producerId,
    short producerEpoch,
    int lastSequence,
    long lastAppendedMs,
    int coordinatorEpoch,
    long currentTxnStartOffset) {}
