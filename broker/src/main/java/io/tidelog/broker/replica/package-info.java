/**
 * The partitions this broker hosts and the storage shards that own them: each partition's log is
 * touched by exactly one single-threaded executor, so the log needs no locks. Replication (ISR,
 * high watermark, followers) arrives with issue #4; until then a single broker leads everything.
 */
package io.tidelog.broker.replica;
