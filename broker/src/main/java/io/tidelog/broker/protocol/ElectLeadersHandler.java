package io.tidelog.broker.protocol;

import io.tidelog.broker.cluster.ClusterImage;
import io.tidelog.broker.cluster.LeaderElection;
import io.tidelog.broker.cluster.MetadataStore;
import io.tidelog.broker.cluster.MetadataStore.PartitionChange;
import io.tidelog.broker.cluster.PartitionState;
import io.tidelog.broker.cluster.TopicMetadata;
import io.tidelog.broker.security.Authorization;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import org.apache.kafka.common.ElectionType;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.errors.InvalidRequestException;
import org.apache.kafka.common.message.ElectLeadersResponseData;
import org.apache.kafka.common.message.ElectLeadersResponseData.PartitionResult;
import org.apache.kafka.common.message.ElectLeadersResponseData.ReplicaElectionResult;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.ElectLeadersRequest;
import org.apache.kafka.common.requests.ElectLeadersResponse;
import org.apache.kafka.common.requests.RequestContext;

/**
 * ElectLeaders, as {@code kafka-leader-election} and Admin's {@code electLeaders} send it: a
 * preferred or unclean election ({@link LeaderElection}) of the partitions named, or of every
 * partition, written to etcd as compare-and-swaps on each partition's state. Each partition is
 * answered with Kafka's code: NONE once elected, ELECTION_NOT_NEEDED,
 * PREFERRED_LEADER_NOT_AVAILABLE, ELIGIBLE_LEADERS_NOT_AVAILABLE, UNKNOWN_TOPIC_OR_PARTITION; asked
 * for every partition, only those an election was needed for are answered, as in Kafka. Authorized
 * as in Kafka: ALTER on the cluster, else CLUSTER_AUTHORIZATION_FAILED for the request and each
 * partition.
 */
public final class ElectLeadersHandler {
  private final MetadataStore metadata;
  private final Executor metadataExecutor;
  private final Authorization authorization;

  public ElectLeadersHandler(
      MetadataStore metadata, Executor metadataExecutor, Authorization authorization) {
    this.metadata = metadata;
    this.metadataExecutor = metadataExecutor;
    this.authorization = authorization;
  }

  /** A partition's answer. */
  private record Answer(Errors error, String message) {}

  CompletableFuture<ElectLeadersResponse> elect(RequestContext context, AbstractRequest request) {
    ElectLeadersRequest election = (ElectLeadersRequest) request;
    if (!authorization.allowedOnCluster(context, AclOperation.ALTER)) {
      return CompletableFuture.completedFuture(
          (ElectLeadersResponse)
              election.getErrorResponse(0, Errors.CLUSTER_AUTHORIZATION_FAILED.exception()));
    }
    LeaderElection.Type type;
    try {
      type =
          election.electionType() == ElectionType.UNCLEAN
              ? LeaderElection.Type.UNCLEAN
              : LeaderElection.Type.PREFERRED;
    } catch (IllegalArgumentException e) {
      return CompletableFuture.completedFuture(
          (ElectLeadersResponse)
              election.getErrorResponse(0, new InvalidRequestException(e.getMessage())));
    }
    boolean all = election.data().topicPartitions() == null;
    return CompletableFuture.supplyAsync(
        () -> {
          ClusterImage image = metadata.image();
          Collection<TopicPartition> asked =
              all ? image.partitions().keySet() : election.topicPartitions();
          return response(elect(image, type, asked, all));
        },
        metadataExecutor);
  }

  private Map<TopicPartition, Answer> elect(
      ClusterImage image, LeaderElection.Type type, Collection<TopicPartition> asked, boolean all) {
    Set<Integer> live = image.activeBrokers();
    Map<TopicPartition, Answer> answers = new TreeMap<>(ElectLeadersHandler::byName);
    List<PartitionChange> changes = new ArrayList<>();
    for (TopicPartition tp : asked) {
      TopicMetadata topic = image.topics().get(tp.topic());
      PartitionState state = image.partitions().get(tp);
      if (topic == null || state == null || tp.partition() >= topic.partitions()) {
        answers.put(
            tp,
            new Answer(
                Errors.UNKNOWN_TOPIC_OR_PARTITION, "The partition " + tp + " does not exist"));
        continue;
      }
      LeaderElection.Result result =
          LeaderElection.decide(type, state, topic.replicas(tp.partition()), live);
      switch (result.outcome()) {
        case ELECTED -> changes.add(new PartitionChange(tp, state, result.next().orElseThrow()));
        case NOT_NEEDED -> {
          if (!all) {
            answers.put(
                tp,
                new Answer(
                    Errors.ELECTION_NOT_NEEDED,
                    "Leader election not needed for topic partition " + tp));
          }
        }
        case PREFERRED_LEADER_NOT_AVAILABLE ->
            answers.put(
                tp,
                new Answer(
                    Errors.PREFERRED_LEADER_NOT_AVAILABLE,
                    "The preferred replica of " + tp + " is not live or not in the ISR"));
        case NO_ELIGIBLE_LEADER ->
            answers.put(
                tp,
                new Answer(
                    Errors.ELIGIBLE_LEADERS_NOT_AVAILABLE, "No replica of " + tp + " is live"));
      }
    }
    Set<TopicPartition> written = changes.isEmpty() ? Set.of() : metadata.electLeaders(changes);
    for (PartitionChange change : changes) {
      answers.put(
          change.tp(),
          written.contains(change.tp())
              ? new Answer(Errors.NONE, null)
              : new Answer(
                  Errors.NOT_CONTROLLER,
                  "The state of " + change.tp() + " changed during the election; try again"));
    }
    return answers;
  }

  private static int byName(TopicPartition a, TopicPartition b) {
    int topic = a.topic().compareTo(b.topic());
    return topic != 0 ? topic : Integer.compare(a.partition(), b.partition());
  }

  private static ElectLeadersResponse response(Map<TopicPartition, Answer> answers) {
    Map<String, ReplicaElectionResult> topics = new TreeMap<>();
    answers.forEach(
        (tp, answer) ->
            topics
                .computeIfAbsent(tp.topic(), t -> new ReplicaElectionResult().setTopic(t))
                .partitionResult()
                .add(
                    new PartitionResult()
                        .setPartitionId(tp.partition())
                        .setErrorCode(answer.error().code())
                        .setErrorMessage(answer.message())));
    return new ElectLeadersResponse(
        new ElectLeadersResponseData()
            .setErrorCode(Errors.NONE.code())
            .setReplicaElectionResults(new ArrayList<>(topics.values())));
  }
}
