package io.tidelog.broker.cluster;

import io.vertx.core.json.JsonObject;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.quota.ClientQuotaEntity;
import org.apache.kafka.metadata.authorizer.StandardAcl;
import org.pcollections.HashTreePMap;
import org.pcollections.PMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The cluster's metadata as of one etcd revision: live brokers, topics, partition states and the
 * controller candidates. Immutable; the store swaps in a new image for every watch response. The
 * maps are persistent (pcollections), so a new image shares all but the changed entries with the
 * one before it and costs what changed, not the size of the cluster.
 *
 * @param candidates the election keys under {@code controller/}: key to (create revision, broker)
 * @param scramCredentials the SCRAM credentials under {@code scram/}, by {@code
 *     <mechanism>/<encoded user>}
 * @param acls the ACLs under {@code acls/}, by id
 * @param quotas the client quotas under {@code quotas/}, by entity
 * @param brokerConfigs the dynamic broker configs under {@code broker-configs/}, by broker id, and
 *     the cluster default under the empty name
 */
public record ClusterImage(
    long revision,
    PMap<Integer, BrokerInfo> brokers,
    PMap<String, TopicMetadata> topics,
    PMap<TopicPartition, PartitionState> partitions,
    PMap<String, Candidate> candidates,
    PMap<String, UserScramCredential> scramCredentials,
    PMap<Uuid, StandardAcl> acls,
    PMap<ClientQuotaEntity, Map<String, Double>> quotas,
    PMap<String, Map<String, String>> brokerConfigs) {
  static final String BROKERS = "brokers/";
  static final String TOPICS = "topics/";
  static final String PARTITIONS = "partitions/";
  static final String CONTROLLER = "controller";
  private static final Logger LOG = LoggerFactory.getLogger(ClusterImage.class);

  public static final ClusterImage EMPTY =
      new ClusterImage(
          0,
          HashTreePMap.empty(),
          HashTreePMap.empty(),
          HashTreePMap.empty(),
          HashTreePMap.empty(),
          HashTreePMap.empty(),
          HashTreePMap.empty(),
          HashTreePMap.empty(),
          HashTreePMap.empty());

  /** A controller candidate: jetcd's election key with the lowest create revision leads. */
  public record Candidate(long createRevision, int brokerId) {}

  /** The elected controller's broker id, or -1. */
  public int controllerId() {
    return candidates.values().stream()
        .min(Comparator.comparingLong(Candidate::createRevision))
        .map(Candidate::brokerId)
        .orElse(-1);
  }

  /**
   * Whether {@code brokerId} may lead and be in an ISR: registered, not in a controlled shutdown.
   */
  public boolean isActive(int brokerId) {
    BrokerInfo broker = brokers.get(brokerId);
    return broker != null && !broker.shuttingDown();
  }

  /**
   * Whether {@code brokerId} leads a partition that another {@linkplain #isActive active} ISR
   * member could take over: what a controlled shutdown waits for. A partition it alone can lead
   * (replication factor 1, or an ISR of one) has nowhere to go, as in Kafka, and is not waited for.
   */
  public boolean leadsPartitionsToHandOver(int brokerId) {
    return partitions.values().stream()
        .anyMatch(
            p ->
                p.leader() == brokerId
                    && p.isr().stream().anyMatch(r -> r != brokerId && isActive(r)));
  }

  /** The brokers that are {@linkplain #isActive active}. */
  public Set<Integer> activeBrokers() {
    return assignableBrokers().stream().map(BrokerInfo::id).collect(Collectors.toUnmodifiableSet());
  }

  /** The brokers that new replicas may be placed on: those not in a controlled shutdown. */
  public List<BrokerInfo> assignableBrokers() {
    return brokers.values().stream().filter(broker -> !broker.shuttingDown()).toList();
  }

  public Optional<PartitionState> partition(TopicPartition tp) {
    return Optional.ofNullable(partitions.get(tp));
  }

  /** A builder of the next image, which records what it changes as a {@link MetadataDelta}. */
  Builder toBuilder() {
    return new Builder(this, true);
  }

  /** A builder of an image read whole: it records no changes, its delta is everything. */
  static Builder builder() {
    return new Builder(EMPTY, false);
  }

  static final class Builder {
    private long revision;
    private PMap<Integer, BrokerInfo> brokers;
    private PMap<String, TopicMetadata> topics;
    private PMap<TopicPartition, PartitionState> partitions;
    private PMap<String, Candidate> candidates;
    private PMap<String, UserScramCredential> scramCredentials;
    private PMap<Uuid, StandardAcl> acls;
    private PMap<ClientQuotaEntity, Map<String, Double>> quotas;
    private PMap<String, ClientQuotaEntity> quotaKeys;
    private boolean quotasChanged;
    private PMap<String, Map<String, String>> brokerConfigs;
    private boolean brokerConfigsChanged;
    private final Set<Uuid> changedAcls = new HashSet<>();
    private boolean brokersChanged;
    private boolean scramChanged;
    private boolean candidatesChanged;
    private final boolean tracking;
    private final Set<String> changedTopics = new HashSet<>();
    private final Set<TopicPartition> changedPartitions = new HashSet<>();

    private Builder(ClusterImage image, boolean tracking) {
      this.tracking = tracking;
      revision = image.revision;
      brokers = image.brokers;
      topics = image.topics;
      partitions = image.partitions;
      candidates = image.candidates;
      scramCredentials = image.scramCredentials;
      acls = image.acls;
      quotas = image.quotas;
      brokerConfigs = image.brokerConfigs;
      quotaKeys = HashTreePMap.empty();
      image.quotas.keySet().forEach(e -> quotaKeys = quotaKeys.plus(ClientQuotaRecord.key(e), e));
    }

    Builder revision(long newRevision) {
      revision = Math.max(revision, newRevision);
      return this;
    }

    /**
     * Applies one key under the cluster prefix: its new value, or null when deleted. Keys of other
     * shapes (such as {@code producer-ids/next}) are not part of the image.
     *
     * <p>A value that cannot be read (written by hand, or by another version) is logged with its
     * key and skipped, never a reason to stop: a partition's state is dropped, so the partition is
     * reported offline until a good state is written; a broker, topic or candidate keeps what the
     * image had, so that a bad write never makes a topic look deleted and its logs go.
     */
    Builder apply(String key, String value, long createRevision, long modRevision) {
      try {
        applyOrThrow(key, value, createRevision, modRevision);
      } catch (RuntimeException e) {
        LOG.warn(
            "Skipping the malformed metadata key {} (revision {}): {}",
            key,
            modRevision,
            e.toString());
        if (key.startsWith(PARTITIONS)) {
          partitionOf(key)
              .ifPresent(
                  tp -> {
                    partitions = partitions.minus(tp);
                    changed(changedPartitions, tp);
                  });
        }
      }
      return this;
    }

    private void applyOrThrow(String key, String value, long createRevision, long modRevision) {
      if (key.startsWith(BROKERS)) {
        int id = Integer.parseInt(key.substring(BROKERS.length()));
        brokers =
            put(brokers, id, value == null ? null : BrokerInfo.fromJson(new JsonObject(value)));
        brokersChanged = true;
      } else if (key.startsWith(TOPICS)) {
        String name = key.substring(TOPICS.length());
        topics =
            put(
                topics,
                name,
                value == null
                    ? null
                    : TopicMetadata.fromJson(name, new JsonObject(value), modRevision));
        changed(changedTopics, name);
      } else if (key.startsWith(PARTITIONS)) {
        TopicPartition tp =
            partitionOf(key)
                .orElseThrow(() -> new IllegalArgumentException("not <topic>/<partition>"));
        partitions =
            put(
                partitions,
                tp,
                value == null ? null : PartitionState.fromJson(new JsonObject(value), modRevision));
        changed(changedPartitions, tp);
      } else if (key.startsWith(CONTROLLER + "/")) {
        candidates =
            put(
                candidates,
                key,
                value == null ? null : new Candidate(createRevision, Integer.parseInt(value)));
        candidatesChanged = true;
      } else if (key.startsWith(UserScramCredential.PREFIX)) {
        String relative = key.substring(UserScramCredential.PREFIX.length());
        scramCredentials =
            put(
                scramCredentials,
                relative,
                value == null ? null : UserScramCredential.fromJson(relative, value));
        scramChanged = true;
      } else if (key.startsWith(AclRecord.PREFIX)) {
        Uuid id = Uuid.fromString(key.substring(AclRecord.PREFIX.length()));
        acls = put(acls, id, value == null ? null : AclRecord.fromJson(value));
        changed(changedAcls, id);
      } else if (key.startsWith(ClientQuotaRecord.PREFIX)) {
        ClientQuotaEntity entity =
            value == null ? quotaKeys.get(key) : ClientQuotaRecord.entityOf(value);
        if (entity != null) {
          quotas = put(quotas, entity, value == null ? null : ClientQuotaRecord.valuesOf(value));
          quotaKeys = put(quotaKeys, key, value == null ? null : entity);
          quotasChanged = true;
        }
      } else if (key.startsWith(BrokerConfigRecord.PREFIX)) {
        brokerConfigs =
            put(
                brokerConfigs,
                BrokerConfigRecord.entityOf(key),
                value == null ? null : BrokerConfigRecord.valuesOf(value));
        brokerConfigsChanged = true;
      }
    }

    /** The partition of a {@code partitions/<topic>/<partition>} key, if it has that shape. */
    private static Optional<TopicPartition> partitionOf(String key) {
      String rest = key.substring(PARTITIONS.length());
      int slash = rest.lastIndexOf('/');
      try {
        return slash <= 0
            ? Optional.empty()
            : Optional.of(
                new TopicPartition(
                    rest.substring(0, slash), Integer.parseInt(rest.substring(slash + 1))));
      } catch (NumberFormatException e) {
        return Optional.empty();
      }
    }

    private <T> void changed(Set<T> changes, T key) {
      if (tracking) {
        changes.add(key);
      }
    }

    private static <K, V> PMap<K, V> put(PMap<K, V> map, K key, V value) {
      return value == null ? map.minus(key) : map.plus(key, value);
    }

    ClusterImage build() {
      return new ClusterImage(
          revision,
          brokers,
          topics,
          partitions,
          candidates,
          scramCredentials,
          acls,
          quotas,
          brokerConfigs);
    }

    /** What this builder changed in the image it started from. */
    MetadataDelta delta() {
      if (!tracking) {
        return MetadataDelta.EVERYTHING;
      }
      return new MetadataDelta(
          false,
          brokersChanged,
          candidatesChanged,
          scramChanged,
          quotasChanged,
          brokerConfigsChanged,
          Set.copyOf(changedTopics),
          Set.copyOf(changedPartitions),
          Set.copyOf(changedAcls));
    }
  }
}
