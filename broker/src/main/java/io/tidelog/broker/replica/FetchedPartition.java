package io.tidelog.broker.replica;

import org.apache.kafka.common.TopicPartition;

/**
 * What a Fetch got from one partition: a read, or the error that stopped it.
 *
 * @param read the records and offsets; with an error, only the leader's offsets for a follower that
 *     fetched out of range (it restarts from them), else null
 * @param error why the partition was not read, or null
 */
public record FetchedPartition(TopicPartition tp, PartitionRead read, Throwable error) {
  int bytes() {
    return read == null || read.read() == null ? 0 : read.read().records().sizeInBytes();
  }
}
