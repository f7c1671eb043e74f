package io.tidelog.broker.cluster;

import io.tidelog.broker.config.EffectiveTopicConfigs;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.ApiException;
import org.apache.kafka.common.errors.InvalidReplicationFactorException;
import org.apache.kafka.common.errors.NoReassignmentInProgressException;
import org.apache.kafka.common.errors.NotControllerException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;

/**
 * Starts and cancels the partition moves an admin asks for (AlterPartitionReassignments), checked
 * and computed as Kafka's controller does ({@link PartitionReassignment}), and written per topic:
 * the topic's replicas and moves together with the partition states that change at once (a move
 * that only drops replicas already out of the way completes in the same write, as in Kafka). The
 * controller completes the others as their target replicas join the ISR. Runs on the metadata
 * executor.
 */
public final class PartitionReassigner {
  private static final int MAX_ATTEMPTS = 5;

  /** The partition states one topic write may carry beside the topic (etcd's 128 operations). */
  static final int MAX_STATES_PER_WRITE = MetadataStore.DEFAULT_MAX_TXN_OPS - 8;

  private final MetadataStore metadata;
  private final TopicCreator creator;
  private final EffectiveTopicConfigs topicConfigs;

  public PartitionReassigner(
      MetadataStore metadata, TopicCreator creator, EffectiveTopicConfigs topicConfigs) {
    this.metadata = metadata;
    this.creator = creator;
    this.topicConfigs = topicConfigs;
  }

  /** A partition's move as asked: to {@code target}, or cancelled when it is null. */
  public record Ask(int partition, List<Integer> target) {}

  /**
   * Applies {@code asks} to the partitions of {@code topic}.
   *
   * @param allowReplicationFactorChange false refuses a target of another size than the partition's
   *     replication factor, as Kafka does
   * @return each asked partition's outcome, in the order asked: empty when done, else the error
   */
  public Map<Integer, Optional<ApiException>> alter(
      String topic, List<Ask> asks, boolean allowReplicationFactorChange) {
    for (int attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
      ClusterImage image = metadata.image();
      TopicMetadata current = image.topics().get(topic);
      Map<Integer, Optional<ApiException>> outcomes = new LinkedHashMap<>();
      if (current == null) {
        asks.forEach(
            ask ->
                outcomes.put(
                    ask.partition(),
                    Optional.of(
                        new UnknownTopicOrPartitionException(
                            "Unable to find a topic named " + topic + "."))));
        return outcomes;
      }
      Plan plan = new Plan(image, current);
      for (Ask ask : asks) {
        try {
          plan.apply(ask, allowReplicationFactorChange);
          outcomes.put(ask.partition(), Optional.empty());
        } catch (ApiException e) {
          outcomes.put(ask.partition(), Optional.of(e));
        }
      }
      if (plan.next.equals(current)
          || metadata.writeReplicas(
              current, plan.next, new ArrayList<>(plan.states.values()), List.of())) {
        return outcomes;
      }
    }
    NotControllerException changing =
        new NotControllerException(
            "Topic " + topic + " kept changing during the reassignment; try again");
    Map<Integer, Optional<ApiException>> outcomes = new LinkedHashMap<>();
    asks.forEach(ask -> outcomes.put(ask.partition(), Optional.of(changing)));
    return outcomes;
  }

  /** One topic's moves as the asks change them, on top of one image. */
  private final class Plan {
    final ClusterImage image;
    final Set<Integer> live;
    TopicMetadata next;
    final Map<Integer, MetadataStore.PartitionChange> states = new LinkedHashMap<>();

    Plan(ClusterImage image, TopicMetadata topic) {
      this.image = image;
      this.live = image.activeBrokers();
      this.next = topic;
    }

    void apply(Ask ask, boolean allowReplicationFactorChange) {
      int p = ask.partition();
      TopicPartition tp = new TopicPartition(next.name(), p);
      PartitionState stored = image.partitions().get(tp);
      if (p < 0 || p >= next.partitions() || stored == null) {
        throw new UnknownTopicOrPartitionException(
            "Unable to find partition " + next.name() + ":" + p + ".");
      }
      PartitionState state = states.containsKey(p) ? states.get(p).next() : stored;
      List<Integer> replicas = next.replicas(p);
      Optional<PartitionReassignment> moving = next.reassignment(p);
      if (ask.target() == null) {
        PartitionReassignment move =
            moving.orElseThrow(
                () ->
                    new NoReassignmentInProgressException(
                        "No partition reassignment is in progress."));
        boolean unclean =
            topicConfigs
                .of(next.name(), next.modRevision(), next.configs())
                .uncleanLeaderElection();
        PartitionState reverted = move.revertedState(next, p, state, live, unclean);
        next = next.withReplicas(p, move.revertedReplicas(replicas), null);
        change(tp, stored, reverted);
        return;
      }
      creator.checkedReplicas(ask.target(), null, p);
      int factor = moving.map(move -> move.target(replicas)).orElse(replicas).size();
      if (!allowReplicationFactorChange && factor != ask.target().size()) {
        throw new InvalidReplicationFactorException(
            "The replication factor is changed from " + factor + " to " + ask.target().size());
      }
      PartitionReassignment.Start start = PartitionReassignment.start(replicas, ask.target());
      next = next.withReplicas(p, start.replicas(), start.reassignment());
      if (start.reassignment() != null) {
        Optional<PartitionState> done =
            start.reassignment().completion(start.replicas(), state, live);
        if (done.isPresent()) {
          next = next.withReplicas(p, ask.target(), null);
          change(tp, stored, done.get());
        }
      }
    }

    /**
     * Writes {@code changed} with the topic, while they fit in one transaction; beyond, the
     * controller makes the same change, as it keeps every ISR and leader within the replicas.
     */
    private void change(TopicPartition tp, PartitionState stored, PartitionState changed) {
      if (!changed.equals(stored) && states.size() < MAX_STATES_PER_WRITE) {
        states.put(tp.partition(), new MetadataStore.PartitionChange(tp, stored, changed));
      }
    }
  }
}
