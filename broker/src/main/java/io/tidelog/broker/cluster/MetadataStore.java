package io.tidelog.broker.cluster;

import java.io.IOException;
import java.util.Collection;
import java.util.Map;
import java.util.Optional;
import org.apache.kafka.common.errors.TopicExistsException;

/**
 * The cluster metadata the brokers share: topics and producer-id blocks. Issue #4 implements it on
 * etcd; a single broker keeps it on local disk ({@link LocalMetadataStore}).
 *
 * <p>Reads are served from memory and never block; writes may block and must run off the event
 * loop.
 */
public interface MetadataStore extends AutoCloseable {
  Optional<TopicMetadata> topic(String name);

  Collection<TopicMetadata> topics();

  /**
   * Records a new topic with a fresh topic id.
   *
   * @throws TopicExistsException when a topic of that name exists
   */
  TopicMetadata createTopic(String name, int partitions, Map<String, String> configs)
      throws IOException;

  /**
   * Replaces a topic's partition count and configs; its name and id stay.
   *
   * @throws org.apache.kafka.common.errors.UnknownTopicOrPartitionException when it does not exist
   */
  TopicMetadata updateTopic(TopicMetadata topic) throws IOException;

  /** Removes the topic; returns whether it existed. */
  boolean deleteTopic(String name) throws IOException;

  /** Reserves {@code count} producer ids and returns the first. */
  long allocateProducerIds(int count) throws IOException;

  @Override
  void close() throws IOException;
}
