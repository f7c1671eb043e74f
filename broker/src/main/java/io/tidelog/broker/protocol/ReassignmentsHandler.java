package io.tidelog.broker.protocol;

import io.tidelog.broker.cluster.ClusterImage;
import io.tidelog.broker.cluster.MetadataStore;
import io.tidelog.broker.cluster.PartitionReassigner;
import io.tidelog.broker.cluster.PartitionReassignment;
import io.tidelog.broker.cluster.TopicMetadata;
import io.tidelog.broker.security.Authorization;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.errors.ApiException;
import org.apache.kafka.common.message.AlterPartitionReassignmentsRequestData.ReassignableTopic;
import org.apache.kafka.common.message.AlterPartitionReassignmentsResponseData;
import org.apache.kafka.common.message.AlterPartitionReassignmentsResponseData.ReassignablePartitionResponse;
import org.apache.kafka.common.message.AlterPartitionReassignmentsResponseData.ReassignableTopicResponse;
import org.apache.kafka.common.message.ListPartitionReassignmentsRequestData.ListPartitionReassignmentsTopics;
import org.apache.kafka.common.message.ListPartitionReassignmentsResponseData;
import org.apache.kafka.common.message.ListPartitionReassignmentsResponseData.OngoingPartitionReassignment;
import org.apache.kafka.common.message.ListPartitionReassignmentsResponseData.OngoingTopicReassignment;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.AlterPartitionReassignmentsRequest;
import org.apache.kafka.common.requests.AlterPartitionReassignmentsResponse;
import org.apache.kafka.common.requests.ApiError;
import org.apache.kafka.common.requests.ListPartitionReassignmentsRequest;
import org.apache.kafka.common.requests.ListPartitionReassignmentsResponse;
import org.apache.kafka.common.requests.RequestContext;

/**
 * AlterPartitionReassignments and ListPartitionReassignments, as {@code kafka-reassign-partitions}
 * and Admin's {@code alterPartitionReassignments}/{@code listPartitionReassignments} send them: a
 * move started or cancelled per partition ({@link PartitionReassigner}, on the metadata executor),
 * each answered with Kafka's code and message; the moves in progress listed from the image, with
 * their replicas, adding and removing ones. Authorized as in Kafka: ALTER on the cluster to alter,
 * DESCRIBE to list, else CLUSTER_AUTHORIZATION_FAILED.
 */
public final class ReassignmentsHandler {
  private final MetadataStore metadata;
  private final PartitionReassigner reassigner;
  private final Executor metadataExecutor;
  private final Authorization authorization;

  public ReassignmentsHandler(
      MetadataStore metadata,
      PartitionReassigner reassigner,
      Executor metadataExecutor,
      Authorization authorization) {
    this.metadata = metadata;
    this.reassigner = reassigner;
    this.metadataExecutor = metadataExecutor;
    this.authorization = authorization;
  }

  CompletableFuture<AbstractResponse> alter(RequestContext context, AbstractRequest request) {
    AlterPartitionReassignmentsRequest alter = (AlterPartitionReassignmentsRequest) request;
    if (!authorization.allowedOnCluster(context, AclOperation.ALTER)) {
      return CompletableFuture.completedFuture(
          alter.getErrorResponse(0, Errors.CLUSTER_AUTHORIZATION_FAILED.exception()));
    }
    boolean allowFactorChange = alter.data().allowReplicationFactorChange();
    return CompletableFuture.supplyAsync(
        () -> {
          AlterPartitionReassignmentsResponseData data =
              new AlterPartitionReassignmentsResponseData()
                  .setErrorMessage(null)
                  .setAllowReplicationFactorChange(allowFactorChange);
          for (ReassignableTopic topic : alter.data().topics()) {
            List<PartitionReassigner.Ask> asks =
                topic.partitions().stream()
                    .map(p -> new PartitionReassigner.Ask(p.partitionIndex(), p.replicas()))
                    .toList();
            ReassignableTopicResponse answer =
                new ReassignableTopicResponse().setName(topic.name());
            reassigner
                .alter(topic.name(), asks, allowFactorChange)
                .forEach(
                    (partition, outcome) -> answer.partitions().add(answer(partition, outcome)));
            data.responses().add(answer);
          }
          return new AlterPartitionReassignmentsResponse(data);
        },
        metadataExecutor);
  }

  private static ReassignablePartitionResponse answer(
      int partition, Optional<ApiException> outcome) {
    // as Kafka's ApiError: no message where the exception's is its code's default one
    ApiError error = outcome.map(ApiError::fromThrowable).orElse(ApiError.NONE);
    return new ReassignablePartitionResponse()
        .setPartitionIndex(partition)
        .setErrorCode(error.error().code())
        .setErrorMessage(error.message());
  }

  CompletableFuture<AbstractResponse> list(RequestContext context, AbstractRequest request) {
    ListPartitionReassignmentsRequest list = (ListPartitionReassignmentsRequest) request;
    if (!authorization.allowedOnCluster(context, AclOperation.DESCRIBE)) {
      return CompletableFuture.completedFuture(
          list.getErrorResponse(0, Errors.CLUSTER_AUTHORIZATION_FAILED.exception()));
    }
    ClusterImage image = metadata.image();
    ListPartitionReassignmentsResponseData data =
        new ListPartitionReassignmentsResponseData().setErrorMessage(null);
    List<ListPartitionReassignmentsTopics> asked = list.data().topics();
    if (asked == null) {
      new TreeMap<>(image.topics())
          .values().stream()
              .filter(topic -> !topic.reassignments().isEmpty())
              .forEach(topic -> ongoing(topic, topic.reassignments().keySet(), data));
    } else {
      for (ListPartitionReassignmentsTopics topic : asked) {
        TopicMetadata known = image.topics().get(topic.name());
        if (known != null) {
          ongoing(known, topic.partitionIndexes(), data);
        }
      }
    }
    return CompletableFuture.completedFuture(new ListPartitionReassignmentsResponse(data));
  }

  /** Adds {@code topic}'s moves in progress among {@code partitions}, if any, to {@code data}. */
  private static void ongoing(
      TopicMetadata topic,
      Iterable<Integer> partitions,
      ListPartitionReassignmentsResponseData data) {
    Map<Integer, OngoingPartitionReassignment> moves = new TreeMap<>();
    for (int p : partitions) {
      Optional<PartitionReassignment> move = topic.reassignment(p);
      move.ifPresent(
          m ->
              moves.put(
                  p,
                  new OngoingPartitionReassignment()
                      .setPartitionIndex(p)
                      .setReplicas(topic.replicas(p))
                      .setAddingReplicas(m.adding())
                      .setRemovingReplicas(m.removing())));
    }
    if (!moves.isEmpty()) {
      data.topics()
          .add(
              new OngoingTopicReassignment()
                  .setName(topic.name())
                  .setPartitions(new ArrayList<>(moves.values())));
    }
  }
}
