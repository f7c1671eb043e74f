package io.tidelog.broker.config;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.config.SslConfigs;
import org.apache.kafka.common.errors.InvalidRequestException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The broker's config as it runs now, as Kafka's {@code DynamicBrokerConfig}: the static config
 * (file and environment) under the cluster-wide dynamic default, under this broker's own dynamic
 * configs, both stored in etcd and followed from its watch. Whoever applies a dynamic key live
 * listens for new configs ({@link #addListener}).
 *
 * <p>A key is dynamic when Kafka 4.1 updates it without a restart and Tidelog applies it live
 * ({@link #isDynamic}); AdminDifferentialIT checks each against Kafka. As in Kafka, a listener's
 * keystore and truststore ({@link SslConfigs#RECONFIGURABLE_CONFIGS}) change per broker and with
 * the listener's prefix only, after a check that the new ones load and keep the certificate's
 * names; a listener's other security configs cannot change while it exists. As in Kafka 4.1, {@code
 * listeners} and {@code listener.security.protocol.map} change per broker only: a listener is bound
 * or closed, an existing one keeps its security protocol, and what the broker advertises ({@code
 * advertised.listeners}, read-only) cannot change. Unlike Kafka, {@code num.io.threads} takes
 * effect at the broker's next start ({@link #TAKEN_AT_START}): it sizes the storage shards, each
 * the one owner of its partitions.
 */
public final class DynamicBrokerConfig {
  private static final Logger LOG = LoggerFactory.getLogger(DynamicBrokerConfig.class);

  /** The keys that change without a restart, each applied live by the broker. */
  public static final Set<String> DYNAMIC =
      Set.of(
          // the defaults of topic configs, which every log takes up at once
          "log.segment.bytes",
          "log.roll.ms",
          "log.index.size.max.bytes",
          "log.index.interval.bytes",
          "message.max.bytes",
          "log.retention.ms",
          "log.retention.bytes",
          "log.flush.interval.messages",
          "log.flush.interval.ms",
          "log.message.timestamp.type",
          "log.cleanup.policy",
          "log.cleaner.delete.retention.ms",
          "log.cleaner.min.cleanable.ratio",
          "log.cleaner.min.compaction.lag.ms",
          "compression.type",
          "compression.gzip.level",
          "compression.lz4.level",
          "compression.zstd.level",
          "min.insync.replicas",
          "unclean.leader.election.enable",
          "log.segment.delete.delay.ms",
          // the log cleaner, started again with them
          BrokerConfig.LOG_CLEANER_DEDUPE_BUFFER_SIZE,
          BrokerConfig.LOG_CLEANER_IO_MAX_BYTES_PER_SECOND,
          BrokerConfig.LOG_CLEANER_BACKOFF_MS,
          // the replication throttles, for the fetches that come next
          BrokerConfig.LEADER_REPLICATION_THROTTLED_RATE,
          BrokerConfig.FOLLOWER_REPLICATION_THROTTLED_RATE,
          BrokerConfig.REPLICA_ALTER_LOG_DIRS_IO_MAX_BYTES_PER_SECOND,
          // the listeners' connection limits, for the connections that come next
          BrokerConfig.MAX_CONNECTIONS,
          BrokerConfig.MAX_CONNECTIONS_PER_IP,
          // the listeners bound, per broker, and their protocols
          BrokerConfig.LISTENERS,
          BrokerConfig.LISTENER_SECURITY_PROTOCOL_MAP,
          // at the next start
          BrokerConfig.NUM_RECOVERY_THREADS_PER_DATA_DIR,
          BrokerConfig.NUM_IO_THREADS);

  /** The dynamic keys that a broker takes only per broker, never as the cluster default. */
  public static final Set<String> PER_BROKER =
      Set.of(BrokerConfig.LISTENERS, BrokerConfig.LISTENER_SECURITY_PROTOCOL_MAP);

  /**
   * The dynamic keys that a broker reads only when it starts: how many threads recover its logs,
   * and how many storage shards own its partitions (Kafka resizes its request handler pool live;
   * here a partition's shard is fixed while the broker runs).
   */
  private static final Set<String> TAKEN_AT_START =
      Set.of(BrokerConfig.NUM_RECOVERY_THREADS_PER_DATA_DIR, BrokerConfig.NUM_IO_THREADS);

  private final BrokerConfig staticConfig;
  private final String nodeId;
  private final List<Consumer<BrokerConfig>> listeners = new CopyOnWriteArrayList<>();
  private final List<Consumer<BrokerConfig>> validators = new CopyOnWriteArrayList<>();
  private Map<String, String> clusterDefault = Map.of();
  private Map<String, String> own = Map.of();
  private volatile BrokerConfig current;

  public DynamicBrokerConfig(BrokerConfig staticConfig) {
    this.staticConfig = staticConfig;
    this.nodeId = String.valueOf(staticConfig.nodeId());
    this.current = staticConfig;
  }

  /** The config the broker runs with now. */
  public BrokerConfig current() {
    return current;
  }

  /** The topic-config defaults of {@link #current()}. */
  public Map<String, String> topicDefaults() {
    return current.topicDefaults();
  }

  public BrokerConfig staticConfig() {
    return staticConfig;
  }

  /** The cluster-wide dynamic default, as stored. */
  public synchronized Map<String, String> clusterDefault() {
    return clusterDefault;
  }

  /** This broker's own dynamic configs, as stored. */
  public synchronized Map<String, String> own() {
    return own;
  }

  /** Tells {@code listener} every config the broker runs with from now on, as it comes. */
  public void addListener(Consumer<BrokerConfig> listener) {
    listeners.add(listener);
  }

  /**
   * Asks {@code validator} to check each config this broker would run with after a change to its
   * own dynamic configs, before the change is stored; it refuses one by throwing {@link
   * ConfigException}, as Kafka's reconfigurables do.
   */
  public void addValidator(Consumer<BrokerConfig> validator) {
    validators.add(validator);
  }

  /**
   * Whether {@code key} changes without a restart: one of {@link #DYNAMIC}, or a keystore or
   * truststore config, which Kafka takes only with a listener's prefix.
   */
  public static boolean isDynamic(String key) {
    return DYNAMIC.contains(key)
        || SslConfigs.RECONFIGURABLE_CONFIGS.contains(SecurityConfigs.unprefixed(key));
  }

  /**
   * Takes up the dynamic configs stored now: the cluster default and those of each broker by id.
   * Values that do not parse (written by another version) are logged and the config before them is
   * kept.
   */
  public void update(Map<String, Map<String, String>> stored) {
    BrokerConfig next;
    synchronized (this) {
      Map<String, String> newDefault = stored.getOrDefault("", Map.of());
      Map<String, String> newOwn = stored.getOrDefault(nodeId, Map.of());
      if (newDefault.equals(clusterDefault) && newOwn.equals(own)) {
        return;
      }
      try {
        next = staticConfig.withDynamic(merged(newDefault, newOwn));
      } catch (ConfigException e) {
        LOG.warn(
            "Keeping the broker config as it is: the dynamic configs do not parse: {}",
            e.getMessage());
        return;
      }
      Map<String, String> before = merged(clusterDefault, own);
      Map<String, String> after = merged(newDefault, newOwn);
      for (String key : TAKEN_AT_START) {
        if (!Objects.equals(before.get(key), after.get(key))) {
          LOG.info("{} is now {}: the broker takes it at its next start", key, after.get(key));
        }
      }
      clusterDefault = newDefault;
      own = newOwn;
      current = next;
    }
    LOG.info(
        "Broker config now has the dynamic default {} and this broker's {}",
        BrokerConfig.withoutSensitive(clusterDefault()),
        BrokerConfig.withoutSensitive(own()));
    listeners.forEach(l -> l.accept(next));
  }

  /**
   * Checks the dynamic configs that {@code entity} (a broker id, or the empty name of the cluster
   * default) would have, as Kafka's controller does: a key Kafka knows but cannot change without a
   * restart is refused, as is an invalid value; a key it does not know is stored and not used, as
   * in Kafka.
   *
   * @throws InvalidRequestException with Kafka's message
   */
  public void validate(String entity, Map<String, String> configs) {
    Set<String> readOnly = new TreeSet<>();
    Set<String> unprefixed = new TreeSet<>();
    Set<String> perBroker = new TreeSet<>();
    for (String key : configs.keySet()) {
      if (SecurityConfigs.isListenerKey(key) || PER_BROKER.contains(key)) {
        perBroker.add(key);
      } else if (SslConfigs.RECONFIGURABLE_CONFIGS.contains(key)) {
        unprefixed.add(key);
      } else if (BrokerConfig.isKnown(key) && !DYNAMIC.contains(key)) {
        readOnly.add(key);
      }
    }
    refuse(readOnly, "Cannot update these configs dynamically");
    refuse(
        unprefixed,
        "These security configs can be dynamically updated only per-listener using the listener"
            + " prefix");
    Map<String, String> layers;
    synchronized (this) {
      layers = entity.isEmpty() ? merged(configs, own) : merged(clusterDefault, configs);
    }
    BrokerConfig next;
    try {
      next = staticConfig.withDynamic(layers);
    } catch (ConfigException e) {
      throw new InvalidRequestException(e.getMessage());
    }
    if (entity.isEmpty()) {
      refuse(
          perBroker,
          "Cannot update these configs at default cluster level, broker id must be specified");
    } else if (entity.equals(nodeId)) {
      try {
        validateListeners(current, next);
        validators.forEach(v -> v.accept(next));
      } catch (ConfigException e) {
        throw new InvalidRequestException(e.getMessage());
      }
    }
  }

  /**
   * Checks a change of this broker's listeners as Kafka's {@code DynamicListenerConfig} does: each
   * listener has a security protocol, one that stays bound keeps its protocol and its start-only
   * security configs, and what the broker advertises stays as it registered.
   */
  private static void validateListeners(BrokerConfig current, BrokerConfig next) {
    Listeners now = current.listeners();
    Listeners then = next.listeners();
    for (Listener listener : then.bound()) {
      Listener bound = now.bound(listener.name()).orElse(null);
      if (bound == null) {
        continue;
      }
      if (bound.protocol() != listener.protocol()) {
        throw new ConfigException(
            "Security protocol cannot be updated for existing listener " + listener.listenerName());
      }
      if (!next.startOnlySecurityConfigs(listener)
          .equals(current.startOnlySecurityConfigs(bound))) {
        throw new ConfigException(
            "Configs cannot be updated dynamically for existing listener "
                + listener.listenerName()
                + ", restart broker or create a new listener for update");
      }
    }
    if (!then.advertised().equals(now.advertised())) {
      throw new ConfigException(
          "Advertised listeners cannot be altered when using a Raft-based metadata quorum.");
    }
  }

  /** Refuses a change that sets any of {@code keys}, with Kafka's {@code message}. */
  private static void refuse(Set<String> keys, String message) {
    if (!keys.isEmpty()) {
      throw new InvalidRequestException(message + ": Set(" + String.join(", ", keys) + ")");
    }
  }

  private static Map<String, String> merged(
      Map<String, String> clusterDefault, Map<String, String> broker) {
    Map<String, String> merged = new HashMap<>(clusterDefault);
    merged.putAll(broker);
    return merged;
  }
}
