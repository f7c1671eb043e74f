package io.tidelog.broker.replica;

import io.tidelog.broker.log.LogReadInfo;

/** What a fetch gets from one partition: the records and the offsets that frame them. */
public record PartitionRead(
    LogReadInfo read, long highWatermark, long logStartOffset, long logEndOffset) {}
