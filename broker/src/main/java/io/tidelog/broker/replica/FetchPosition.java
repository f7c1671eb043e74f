package io.tidelog.broker.replica;

/**
 * Where a follower fetches a partition from: its log end offset, the epoch the log ends in (so that
 * the leader can report a diverging epoch), its log start, and the leader epoch it follows.
 */
public record FetchPosition(
    int leaderEpoch, long fetchOffset, int lastFetchedEpoch, long logStartOffset) {}
