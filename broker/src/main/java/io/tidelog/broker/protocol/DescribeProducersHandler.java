package io.tidelog.broker.protocol;

import io.tidelog.broker.cluster.MetadataStore;
import io.tidelog.broker.cluster.TopicMetadata;
import io.tidelog.broker.log.ActiveProducer;
import io.tidelog.broker.replica.ReplicaManager;
import io.tidelog.broker.security.Authorization;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Predicate;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.message.DescribeProducersRequestData;
import org.apache.kafka.common.message.DescribeProducersResponseData;
import org.apache.kafka.common.message.DescribeProducersResponseData.PartitionResponse;
import org.apache.kafka.common.message.DescribeProducersResponseData.ProducerState;
import org.apache.kafka.common.message.DescribeProducersResponseData.TopicResponse;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.DescribeProducersRequest;
import org.apache.kafka.common.requests.DescribeProducersResponse;
import org.apache.kafka.common.requests.RequestContext;
import org.apache.kafka.common.resource.ResourceType;

/**
 * DescribeProducers (KIP-664), as {@code kafka-transactions describe-producers} and Admin's {@code
 * describeProducers} ask it: the idempotent and transactional producers that each partition led
 * here remembers, with their epoch, last sequence, the coordinator epoch of their last transaction
 * marker and the first offset of their open transaction. Answered as Kafka answers, partition by
 * partition: READ on the topic or TOPIC_AUTHORIZATION_FAILED, then UNKNOWN_TOPIC_OR_PARTITION, then
 * NOT_LEADER_OR_FOLLOWER off the leader. {@code LastTimestamp} is when the broker appended the
 * producer's last batch (Kafka reports the batch's largest timestamp).
 */
public final class DescribeProducersHandler {
  private final MetadataStore metadata;
  private final ReplicaManager replicas;
  private final Authorization authorization;

  public DescribeProducersHandler(
      MetadataStore metadata, ReplicaManager replicas, Authorization authorization) {
    this.metadata = metadata;
    this.replicas = replicas;
    this.authorization = authorization;
  }

  CompletableFuture<DescribeProducersResponse> handle(
      RequestContext context, AbstractRequest request) {
    DescribeProducersRequestData data = ((DescribeProducersRequest) request).data();
    Predicate<String> readable = authorization.on(context, AclOperation.READ, ResourceType.TOPIC);
    DescribeProducersResponseData response = new DescribeProducersResponseData();
    List<CompletableFuture<Void>> pending = new ArrayList<>();
    for (DescribeProducersRequestData.TopicRequest topic : data.topics()) {
      TopicResponse topicResponse = new TopicResponse().setName(topic.name());
      response.topics().add(topicResponse);
      TopicMetadata known = metadata.topic(topic.name()).orElse(null);
      for (int index : topic.partitionIndexes()) {
        PartitionResponse partition = new PartitionResponse().setPartitionIndex(index);
        topicResponse.partitions().add(partition);
        if (!readable.test(topic.name())) {
          partition.setErrorCode(Errors.TOPIC_AUTHORIZATION_FAILED.code());
        } else if (known == null || index < 0 || index >= known.partitions()) {
          partition.setErrorCode(Errors.UNKNOWN_TOPIC_OR_PARTITION.code());
        } else {
          pending.add(
              replicas
                  .activeProducers(new TopicPartition(topic.name(), index))
                  .handle(
                      (producers, e) -> {
                        if (e != null) {
                          partition
                              .setErrorCode(ErrorMapping.errorOf(e, context.header).code())
                              .setErrorMessage(ErrorMapping.messageOf(e));
                        } else {
                          producers.forEach(p -> partition.activeProducers().add(state(p)));
                        }
                        return null;
                      }));
        }
      }
    }
    return CompletableFuture.allOf(pending.toArray(CompletableFuture[]::new))
        .thenApply(v -> new DescribeProducersResponse(response));
  }

  private static ProducerState state(ActiveProducer producer) {
    return new ProducerState()
        .setProducerId(producer.producerId())
        .setProducerEpoch(producer.producerEpoch())
        .setLastSequence(producer.lastSequence())
        .setLastTimestamp(Math.max(-1, producer.lastAppendedMs()))
        .setCoordinatorEpoch(producer.coordinatorEpoch())
        .setCurrentTxnStartOffset(producer.currentTxnStartOffset());
  }
}
