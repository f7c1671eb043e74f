package io.tidelog.broker.log;

/** A leader epoch and the offset where it ends (exclusive), as OffsetForLeaderEpoch returns. */
public record EpochEndOffset(int epoch, long endOffset) {
  /** What OffsetForLeaderEpoch answers for an epoch it cannot place. */
  public static final EpochEndOffset UNDEFINED = new EpochEndOffset(-1, -1L);

  public boolean isUndefined() {
    return epoch < 0;
  }
}
