package io.tidelog.broker.replica;

/**
 * How a follower fetches: as replica {@code replicaId}, waiting at most {@code maxWaitMs} ({@code
 * replica.fetch.wait.max.ms}) for data, taking at most {@code partitionMaxBytes} of a partition
 * ({@code replica.fetch.max.bytes}) and {@code responseMaxBytes} in all ({@code
 * replica.fetch.response.max.bytes}).
 */
record FetchSettings(int replicaId, int maxWaitMs, int partitionMaxBytes, int responseMaxBytes) {}
