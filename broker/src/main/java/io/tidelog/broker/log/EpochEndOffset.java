package io.tidelog.broker.log;

/** A leader epoch and the offset where it ends (exclusive), as OffsetForLeaderEpoch returns. */
public record EpochEndOffset(int epoch, long endOffset) {}
