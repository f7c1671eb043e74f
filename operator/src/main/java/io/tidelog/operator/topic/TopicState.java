package io.tidelog.operator.topic;

import org.apache.kafka.clients.admin.TopicDescription;

/** What the cluster says of a topic: the facts that a Topic's status reports. */
record TopicState(String topicId, int partitions, int replicas) {
  static TopicState of(TopicDescription description) {
    return new TopicState(
        description.topicId().toString(),
        description.partitions().size(),
        description.partitions().get(0).replicas().size());
  }
}
