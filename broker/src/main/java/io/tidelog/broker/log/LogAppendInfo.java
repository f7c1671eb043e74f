package io.tidelog.broker.log;

/**
 * The outcome of an append.
 *
 * @param firstOffset the offset assigned to the first record
 * @param lastOffset the offset assigned to the last record
 * @param maxTimestamp the largest timestamp of the appended batches
 * @param logAppendTimeMs the broker time stamped in, or -1 for {@code CreateTime} topics
 * @param recordCount how many records were appended
 * @param sizeInBytes how many bytes were appended
 */
public record LogAppendInfo(
    long firstOffset,
    long lastOffset,
    long maxTimestamp,
    long logAppendTimeMs,
    int recordCount,
    int sizeInBytes) {}
