package io.tidelog.broker.cluster;

import static java.nio.charset.StandardCharsets.UTF_8;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.ClientBuilder;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.Watch;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.kv.TxnResponse;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.DeleteOption;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.OptionsUtil;
import io.etcd.jetcd.options.PutOption;
import io.etcd.jetcd.options.WatchOption;
import io.etcd.jetcd.watch.WatchEvent;
import io.etcd.jetcd.watch.WatchResponse;
import io.netty.handler.ssl.SslContextBuilder;
import io.tidelog.broker.config.EtcdSettings;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiConsumer;
import java.util.function.Predicate;
import java.util.function.UnaryOperator;
import javax.net.ssl.SSLException;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.errors.InvalidPartitionsException;
import org.apache.kafka.common.errors.PolicyViolationException;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.quota.ClientQuotaEntity;
import org.apache.kafka.common.security.scram.internals.ScramMechanism;
import org.apache.kafka.metadata.authorizer.StandardAcl;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The cluster's metadata in etcd, under {@code /tidelog/<cluster.id>/} (docs/architecture.md, "etcd
 * key space"), and every broker's cache of it.
 *
 * <p>Reads come from the current {@link ClusterImage}, which a watch on the prefix keeps up to
 * date; a failed or compacted watch is replaced by a full re-read, never left stale. Writes are
 * etcd transactions that compare what they replace, block for at most {@link #TIMEOUT_MS}, and
 * return once this broker's image has caught up with them, so callers read their own writes. They
 * must run off the event loops. Listeners are called on one thread, in revision order.
 */
public final class MetadataStore implements AutoCloseable {
  static final long TIMEOUT_MS = 10_000;

  /** etcd's default {@code --max-txn-ops}: operations allowed in one transaction. */
  static final int DEFAULT_MAX_TXN_OPS = 128;

  /** Partition-state transactions a {@link #writePartitions batch write} has in flight. */
  static final int TXNS_IN_FLIGHT = 8;

  private static final long RELOAD_BACKOFF_MS = 1_000;

  /** Keys in the first page when the metadata is read whole: at 1 KB a value, about 1 MB. */
  static final int DEFAULT_PAGE_KEYS = 1_000;

  /** The size the pages of a whole read grow or shrink towards, a quarter of gRPC's limit. */
  static final int PAGE_BYTES = 1 << 20;

  private static final int MAX_PAGE_KEYS = 65_536;

  private static final int MAX_CAS_ATTEMPTS = 5;
  private static final String PRODUCER_IDS = "producer-ids/next";
  private static final Logger LOG = LoggerFactory.getLogger(MetadataStore.class);

  private final Client client;
  private final String prefix;
  private final ScheduledExecutorService events;
  private final List<BiConsumer<ClusterImage, MetadataDelta>> listeners =
      new CopyOnWriteArrayList<>();
  private final Object revisionMonitor = new Object();
  private final AtomicLong watchResyncs = new AtomicLong();
  private volatile ClusterImage image = ClusterImage.EMPTY;

  /** The revision of the last image the listeners have been given; writers wait on this one. */
  private volatile long publishedRevision;

  private Watch.Watcher watcher;

  /** Counts the watches made; only the last one's reports count. Event thread only. */
  private long watchGeneration;

  private volatile boolean closed;
  private final int pageKeys;

  private MetadataStore(Client client, String prefix, int pageKeys) {
    this.client = client;
    this.prefix = prefix;
    this.pageKeys = pageKeys;
    this.events = Executors.newSingleThreadScheduledExecutor(r -> new Thread(r, "tidelog-etcd"));
  }

  /**
   * Connects to etcd and reads the cluster's metadata.
   *
   * @throws TimeoutException naming the endpoints when etcd does not answer
   */
  public static MetadataStore connect(List<String> endpoints, String clusterId) {
    return connect(EtcdSettings.plain(endpoints), clusterId, DEFAULT_PAGE_KEYS);
  }

  /** Connects to etcd with {@code settings}: TLS, a client certificate, a user. */
  public static MetadataStore connect(EtcdSettings settings, String clusterId) {
    return connect(settings, clusterId, DEFAULT_PAGE_KEYS);
  }

  /**
   * As {@link #connect(EtcdSettings, String)}, reading the metadata in pages of {@code pageKeys}
   * keys.
   */
  static MetadataStore connect(EtcdSettings settings, String clusterId, int pageKeys) {
    List<String> endpoints = settings.endpoints();
    Client client = client(settings);
    MetadataStore store = new MetadataStore(client, "/tidelog/" + clusterId + "/", pageKeys);
    try {
      // No overall deadline: every page read has its own, and a large cluster takes many pages
      store.events.submit(store::load).get();
    } catch (ExecutionException e) {
      store.close();
      throw new TimeoutException(
          "Cannot read cluster metadata from etcd at " + endpoints + ": " + e.getCause(), e);
    } catch (InterruptedException e) {
      store.close();
      Thread.currentThread().interrupt();
      throw new KafkaException("Interrupted while reading the cluster metadata", e);
    }
    return store;
  }

  /** A jetcd client with {@code settings}: TLS files read again when they change. */
  private static Client client(EtcdSettings settings) {
    ClientBuilder builder = Client.builder().endpoints(settings.endpoints().toArray(String[]::new));
    if (settings.caFile() != null || settings.certFile() != null) {
      EtcdTlsFiles files;
      try {
        files =
            new EtcdTlsFiles(
                settings.caFile(),
                settings.certFile(),
                settings.keyFile(),
                settings.verifyHostname(),
                () -> System.nanoTime() / 1_000_000);
        builder.sslContext(
            (SslContextBuilder tls) -> {
              tls.trustManager(files.trustManager());
              if (files.hasKey()) {
                tls.keyManager(files.keyManager());
              }
            });
      } catch (SSLException | IllegalArgumentException e) {
        throw new ConfigException("The etcd TLS files do not load: " + e.getMessage());
      }
    }
    if (settings.user() != null) {
      String password = settings.password() == null ? "" : settings.password();
      builder
          .user(ByteSequence.from(settings.user(), UTF_8))
          .password(ByteSequence.from(password, UTF_8));
    }
    return builder.build();
  }

  public ClusterImage image() {
    return image;
  }

  public Optional<TopicMetadata> topic(String name) {
    return Optional.ofNullable(image.topics().get(name));
  }

  public Collection<TopicMetadata> topics() {
    return image.topics().values();
  }

  /**
   * Calls {@code listener} with every new image and what changed from the one before, on the
   * store's event thread.
   */
  public void addListener(BiConsumer<ClusterImage, MetadataDelta> listener) {
    listeners.add(listener);
  }

  /**
   * A topic to create, as {@link #createTopics} takes it: its replicas spread over the live
   * brokers, or, when {@code assignment} is not null, each partition's replicas as given (checked
   * already).
   */
  public record NewTopic(
      String name,
      int partitions,
      int replicationFactor,
      Map<String, String> configs,
      List<List<Integer>> assignment) {
    public NewTopic(
        String name, int partitions, int replicationFactor, Map<String, String> configs) {
      this(name, partitions, replicationFactor, configs, null);
    }
  }

  /**
   * Records a new topic with a fresh topic id, its replicas spread over the live brokers, and each
   * partition led by its first replica with every replica in sync.
   *
   * @throws TopicExistsException when a topic of that name exists
   * @throws org.apache.kafka.common.errors.InvalidReplicationFactorException when fewer brokers are
   *     alive than the replication factor
   * @throws PolicyViolationException when the topic needs more operations in one transaction than
   *     etcd allows ({@code --max-txn-ops})
   */
  public TopicMetadata createTopic(
      String name, int partitions, int replicationFactor, Map<String, String> configs) {
    return createTopic(plan(image, new NewTopic(name, partitions, replicationFactor, configs)));
  }

  private TopicMetadata createTopic(TopicMetadata topic) {
    TxnResponse response = transact(List.of(absent(topic.name())), creationOps(topic));
    if (!response.isSucceeded()) {
      throw new TopicExistsException("Topic '" + topic.name() + "' already exists");
    }
    awaitRevision(response.getHeader().getRevision());
    return image.topics().get(topic.name());
  }

  /**
   * Records several new topics in as few etcd transactions as etcd's default limit of {@value
   * #DEFAULT_MAX_TXN_OPS} operations allows, as Kafka's controller appends one batch of records:
   * each transaction holds whole topics (a larger topic goes alone). Up to {@value #TXNS_IN_FLIGHT}
   * transactions are in flight at once, so that etcd commits them together, and the metadata is
   * awaited once, after the last: a request of many topics waits for a few of etcd's commits, not
   * for one per transaction nor for the watch to deliver each. When a transaction fails because one
   * of its names was taken meanwhile, its topics are created one by one, so that each gets its own
   * outcome.
   *
   * @return each topic's outcome by name, completed: its metadata, or what {@link #createTopic}
   *     would have thrown
   */
  public Map<String, CompletableFuture<TopicMetadata>> createTopics(List<NewTopic> topics) {
    Map<String, CompletableFuture<TopicMetadata>> outcomes = new LinkedHashMap<>();
    List<List<TopicMetadata>> batches = new ArrayList<>();
    List<TopicMetadata> batch = new ArrayList<>();
    int batchOps = 0;
    for (NewTopic wanted : topics) {
      TopicMetadata topic;
      try {
        topic = plan(image, wanted);
      } catch (RuntimeException e) {
        outcomes.put(wanted.name(), CompletableFuture.failedFuture(e));
        continue;
      }
      int ops = 1 + topic.partitions();
      if (!batch.isEmpty() && batchOps + ops > DEFAULT_MAX_TXN_OPS) {
        batches.add(batch);
        batch = new ArrayList<>();
        batchOps = 0;
      }
      batch.add(topic);
      batchOps += ops;
    }
    if (!batch.isEmpty()) {
      batches.add(batch);
    }
    Map<String, CompletableFuture<TopicMetadata>> written = new LinkedHashMap<>();
    long lastRevision = 0;
    for (int from = 0; from < batches.size(); from += TXNS_IN_FLIGHT) {
      List<List<TopicMetadata>> window =
          batches.subList(from, Math.min(batches.size(), from + TXNS_IN_FLIGHT));
      List<CompletableFuture<TxnResponse>> sent = new ArrayList<>();
      for (List<TopicMetadata> each : window) {
        List<Cmp> compares = new ArrayList<>();
        List<Op> ops = new ArrayList<>();
        for (TopicMetadata topic : each) {
          compares.add(absent(topic.name()));
          ops.addAll(creationOps(topic));
        }
        sent.add(send(compares, ops, List.of()));
      }
      for (int i = 0; i < window.size(); i++) {
        lastRevision =
            Math.max(lastRevision, created(window.get(i), sent.get(i), outcomes, written));
      }
    }
    if (!written.isEmpty()) {
      try {
        awaitRevision(lastRevision);
        written.forEach((name, outcome) -> outcome.complete(image.topics().get(name)));
      } catch (RuntimeException e) {
        written.values().forEach(outcome -> outcome.completeExceptionally(e));
      }
    }
    return outcomes;
  }

  /**
   * The outcome of a transaction that creates {@code batch}: its topics go into {@code written}, to
   * be completed once the metadata has them; if a name was taken meanwhile each topic is created
   * alone, and if etcd failed every topic fails (the other batches may still go through).
   *
   * @return the revision of what was written, or 0
   */
  private long created(
      List<TopicMetadata> batch,
      CompletableFuture<TxnResponse> sent,
      Map<String, CompletableFuture<TopicMetadata>> outcomes,
      Map<String, CompletableFuture<TopicMetadata>> written) {
    TxnResponse response;
    try {
      response = awaitTxn(sent, batch.stream().mapToInt(t -> 1 + t.partitions()).sum());
    } catch (RuntimeException e) {
      batch.forEach(t -> outcomes.put(t.name(), CompletableFuture.failedFuture(e)));
      return 0;
    }
    if (response.isSucceeded()) {
      for (TopicMetadata topic : batch) {
        CompletableFuture<TopicMetadata> outcome = new CompletableFuture<>();
        outcomes.put(topic.name(), outcome);
        written.put(topic.name(), outcome);
      }
      return response.getHeader().getRevision();
    }
    for (TopicMetadata topic : batch) {
      try {
        outcomes.put(topic.name(), CompletableFuture.completedFuture(createTopic(topic)));
      } catch (RuntimeException e) {
        outcomes.put(topic.name(), CompletableFuture.failedFuture(e));
      }
    }
    return 0;
  }

  /** The topic's metadata with a fresh id and its assignment: given, or over the live brokers. */
  private static TopicMetadata plan(ClusterImage current, NewTopic wanted) {
    if (current.topics().containsKey(wanted.name())) {
      throw new TopicExistsException("Topic '" + wanted.name() + "' already exists");
    }
    List<List<Integer>> assignment =
        wanted.assignment() != null
            ? wanted.assignment()
            : ReplicaAssignment.assign(
                current.assignableBrokers(),
                wanted.partitions(),
                wanted.replicationFactor(),
                ThreadLocalRandom.current().nextInt(1 << 16));
    return new TopicMetadata(wanted.name(), Uuid.randomUuid(), assignment, wanted.configs(), 0);
  }

  private Cmp absent(String topic) {
    return new Cmp(key(topicKey(topic)), Cmp.Op.EQUAL, CmpTarget.version(0));
  }

  private List<Op> creationOps(TopicMetadata topic) {
    List<Op> ops = new ArrayList<>();
    ops.add(put(topicKey(topic.name()), topic.toJson().encode()));
    addPartitionOps(topic, 0, ops);
    return ops;
  }

  private void addPartitionOps(TopicMetadata topic, int from, List<Op> ops) {
    for (int p = from; p < topic.partitions(); p++) {
      List<Integer> replicas = topic.replicas(p);
      PartitionState state = new PartitionState(replicas.get(0), 0, replicas, 0, 0);
      ops.add(put(partitionKey(new TopicPartition(topic.name(), p)), state.toJson().encode()));
    }
  }

  /** Replaces a topic's config overrides. */
  public TopicMetadata updateConfigs(String name, Map<String, String> configs) {
    return updateTopic(name, topic -> topic.withConfigs(configs));
  }

  /**
   * Grows a topic to {@code total} partitions, the new ones spread over the live brokers with the
   * topic's replication factor.
   */
  public TopicMetadata addPartitions(String name, int total) {
    return addPartitions(name, total, null);
  }

  /**
   * Grows a topic to {@code total} partitions, the new ones with the replicas of {@code added}
   * (checked already), or spread over the live brokers when it is null.
   */
  public TopicMetadata addPartitions(String name, int total, List<List<Integer>> added) {
    return updateTopic(
        name,
        topic -> {
          if (total <= topic.partitions()) {
            throw new InvalidPartitionsException(
                "Topic '"
                    + name
                    + "' has "
                    + topic.partitions()
                    + " partitions, not fewer than "
                    + total);
          }
          List<List<Integer>> grown = new ArrayList<>(topic.assignment());
          grown.addAll(
              added != null
                  ? added
                  : ReplicaAssignment.assign(
                      image.assignableBrokers(),
                      total - topic.partitions(),
                      topic.replicationFactor(),
                      topic.partitions()));
          return topic.withAssignment(grown);
        });
  }

  private TopicMetadata updateTopic(String name, UnaryOperator<TopicMetadata> change) {
    for (int attempt = 1; ; attempt++) {
      TopicMetadata current =
          topic(name)
              .orElseThrow(
                  () ->
                      new UnknownTopicOrPartitionException("Topic '" + name + "' does not exist"));
      TopicMetadata next = change.apply(current);
      List<Op> ops = new ArrayList<>();
      ops.add(put(topicKey(name), next.toJson().encode()));
      addPartitionOps(next, current.partitions(), ops);
      TxnResponse response =
          transact(
              List.of(
                  new Cmp(
                      key(topicKey(name)),
                      Cmp.Op.EQUAL,
                      CmpTarget.modRevision(current.modRevision()))),
              ops);
      awaitRevision(response.getHeader().getRevision());
      if (response.isSucceeded()) {
        return image.topics().get(name);
      }
      if (attempt == MAX_CAS_ATTEMPTS) {
        throw new TimeoutException("Topic '" + name + "' kept changing under the update");
      }
    }
  }

  /** Removes the topic and its partition states; returns whether it existed. */
  public boolean deleteTopic(String name) {
    TxnResponse response =
        transact(
            List.of(new Cmp(key(topicKey(name)), Cmp.Op.GREATER, CmpTarget.version(0))),
            List.of(
                Op.delete(key(topicKey(name)), DeleteOption.DEFAULT),
                Op.delete(
                    key(ClusterImage.PARTITIONS + name + "/"),
                    DeleteOption.builder().isPrefix(true).build())));
    awaitRevision(response.getHeader().getRevision());
    return response.isSucceeded();
  }

  /** Stores {@code credential}, replacing the user's credential of its mechanism if any. */
  public void putScramCredential(UserScramCredential credential) {
    TxnResponse response = transact(List.of(), List.of(put(credential.key(), credential.toJson())));
    awaitRevision(response.getHeader().getRevision());
  }

  /**
   * Stores {@code credential} unless the user already has one of its mechanism; returns whether it
   * was stored.
   */
  public boolean putScramCredentialIfAbsent(UserScramCredential credential) {
    TxnResponse response =
        transact(
            List.of(new Cmp(key(credential.key()), Cmp.Op.EQUAL, CmpTarget.version(0))),
            List.of(put(credential.key(), credential.toJson())));
    awaitRevision(response.getHeader().getRevision());
    return response.isSucceeded();
  }

  /** Removes {@code user}'s credential of {@code mechanism}; returns whether there was one. */
  public boolean deleteScramCredential(String user, ScramMechanism mechanism) {
    String relative = UserScramCredential.PREFIX + UserScramCredential.imageKey(user, mechanism);
    TxnResponse response =
        transact(
            List.of(new Cmp(key(relative), Cmp.Op.GREATER, CmpTarget.version(0))),
            List.of(Op.delete(key(relative), DeleteOption.DEFAULT)));
    awaitRevision(response.getHeader().getRevision());
    return response.isSucceeded();
  }

  /**
   * Sets and removes values of {@code entity}'s client quota, on what is stored now (a
   * compare-and-swap, retried if another broker changed it meanwhile); an entity left with no
   * values is deleted.
   */
  public void alterClientQuota(
      ClientQuotaEntity entity, Map<String, Double> set, Set<String> remove) {
    compareAndSwap(
        ClientQuotaRecord.key(entity),
        stored -> {
          Map<String, Double> values = new HashMap<>();
          if (stored != null) {
            values.putAll(ClientQuotaRecord.valuesOf(stored));
          }
          values.putAll(set);
          remove.forEach(values::remove);
          return values.isEmpty() ? null : ClientQuotaRecord.toJson(entity, values);
        },
        "The quota of " + entity);
  }

  /**
   * Replaces the dynamic configs of {@code entity} (a broker id, or the empty name of the cluster
   * default) with what {@code change} makes of those stored now, a compare-and-swap retried if
   * another broker changed them meanwhile; an entity left with none is deleted. {@code change} may
   * throw to refuse, and nothing is written.
   */
  public void alterBrokerConfigs(String entity, UnaryOperator<Map<String, String>> change) {
    compareAndSwap(
        BrokerConfigRecord.key(entity),
        stored -> {
          Map<String, String> next =
              change.apply(
                  new HashMap<>(stored == null ? Map.of() : BrokerConfigRecord.valuesOf(stored)));
          return next.isEmpty() ? null : BrokerConfigRecord.toJson(next);
        },
        "The configs of broker '" + entity + "'");
  }

  /**
   * Writes what {@code change} makes of the value stored under {@code relativeKey} (null when there
   * is none; null back deletes it), if nothing else wrote it meanwhile; else reads and tries again,
   * up to {@value #MAX_CAS_ATTEMPTS} times.
   */
  private void compareAndSwap(String relativeKey, UnaryOperator<String> change, String what) {
    ByteSequence key = key(relativeKey);
    for (int attempt = 1; ; attempt++) {
      GetResponse current = get(client.getKVClient().get(key));
      String stored = null;
      long modRevision = 0;
      if (!current.getKvs().isEmpty()) {
        KeyValue kv = current.getKvs().get(0);
        stored = kv.getValue().toString(UTF_8);
        modRevision = kv.getModRevision();
      }
      String next = change.apply(stored);
      Op write = next == null ? Op.delete(key, DeleteOption.DEFAULT) : put(relativeKey, next);
      TxnResponse response =
          transact(
              List.of(new Cmp(key, Cmp.Op.EQUAL, CmpTarget.modRevision(modRevision))),
              List.of(write));
      if (response.isSucceeded()) {
        awaitRevision(response.getHeader().getRevision());
        return;
      }
      if (attempt == MAX_CAS_ATTEMPTS) {
        throw new TimeoutException(what + " kept changing under the update");
      }
    }
  }

  /** The most ACLs written in one etcd transaction, within etcd's default --max-txn-ops. */
  private static final int ACLS_PER_TXN = 100;

  /** Stores {@code acls} under new ids, and returns the ids in order. */
  public List<Uuid> createAcls(List<StandardAcl> acls) {
    List<Uuid> ids = new ArrayList<>();
    for (int from = 0; from < acls.size(); from += ACLS_PER_TXN) {
      List<Op> puts = new ArrayList<>();
      for (StandardAcl acl : acls.subList(from, Math.min(acls.size(), from + ACLS_PER_TXN))) {
        Uuid id = Uuid.randomUuid();
        ids.add(id);
        puts.add(put(AclRecord.key(id), AclRecord.toJson(acl)));
      }
      awaitRevision(transact(List.of(), puts).getHeader().getRevision());
    }
    return ids;
  }

  /** Removes the ACLs of {@code ids}. */
  public void deleteAcls(List<Uuid> ids) {
    for (int from = 0; from < ids.size(); from += ACLS_PER_TXN) {
      List<Op> deletes = new ArrayList<>();
      for (Uuid id : ids.subList(from, Math.min(ids.size(), from + ACLS_PER_TXN))) {
        deletes.add(Op.delete(key(AclRecord.key(id)), DeleteOption.DEFAULT));
      }
      awaitRevision(transact(List.of(), deletes).getHeader().getRevision());
    }
  }

  /** Reserves {@code count} producer ids, cluster-wide, and returns the first. */
  public long allocateProducerIds(int count) {
    ByteSequence key = key(PRODUCER_IDS);
    for (int attempt = 1; ; attempt++) {
      GetResponse current = get(client.getKVClient().get(key));
      long next = 0;
      long modRevision = 0;
      if (!current.getKvs().isEmpty()) {
        KeyValue kv = current.getKvs().get(0);
        next = Long.parseLong(kv.getValue().toString(UTF_8));
        modRevision = kv.getModRevision();
      }
      TxnResponse response =
          transact(
              List.of(new Cmp(key, Cmp.Op.EQUAL, CmpTarget.modRevision(modRevision))),
              List.of(put(PRODUCER_IDS, String.valueOf(next + count))));
      if (response.isSucceeded()) {
        return next;
      }
      if (attempt == MAX_CAS_ATTEMPTS) {
        throw new TimeoutException("The producer id block kept changing under the allocation");
      }
    }
  }

  /** A partition state to write in place of {@code expected}, if that is still the stored one. */
  public record PartitionChange(TopicPartition tp, PartitionState expected, PartitionState next) {}

  /**
   * Writes many partition states as Kafka's controller appends a batch of records: in transactions
   * of up to {@value #DEFAULT_MAX_TXN_OPS} compares ({@code fences}, such as the controller's
   * election key, and one per partition), up to {@value #TXNS_IN_FLIGHT} of them in flight at once,
   * and the metadata awaited once, after the last, for as long as the watch makes progress. A
   * transaction that fails because some of its partitions changed meanwhile (another writer came
   * first) reads their stored states instead, and is sent once more without them.
   *
   * @return the partitions of {@code changes} that were written
   */
  Set<TopicPartition> writePartitions(List<PartitionChange> changes, List<Cmp> fences) {
    int perTxn = DEFAULT_MAX_TXN_OPS - fences.size();
    List<List<PartitionChange>> batches = new ArrayList<>();
    for (int from = 0; from < changes.size(); from += perTxn) {
      batches.add(changes.subList(from, Math.min(changes.size(), from + perTxn)));
    }
    Set<TopicPartition> written = new HashSet<>();
    long lastRevision = 0;
    for (int from = 0; from < batches.size(); from += TXNS_IN_FLIGHT) {
      List<List<PartitionChange>> window =
          batches.subList(from, Math.min(batches.size(), from + TXNS_IN_FLIGHT));
      List<CompletableFuture<TxnResponse>> sent =
          window.stream().map(batch -> writeAsync(batch, fences)).toList();
      for (int i = 0; i < window.size(); i++) {
        List<PartitionChange> batch = window.get(i);
        TxnResponse response = get(sent.get(i));
        if (!response.isSucceeded()) {
          List<PartitionChange> current = stillCurrent(batch, response);
          if (current.isEmpty() || current.size() == batch.size()) {
            continue; // every partition changed first, or a fence failed
          }
          batch = current;
          response = get(writeAsync(batch, fences));
          if (!response.isSucceeded()) {
            continue; // changed again meanwhile: left to the next decision
          }
        }
        lastRevision = Math.max(lastRevision, response.getHeader().getRevision());
        batch.forEach(change -> written.add(change.tp()));
      }
    }
    awaitRevision(lastRevision);
    return written;
  }

  /**
   * Sends one transaction of {@code batch}: if every compare holds it writes the new states,
   * otherwise it reads the stored ones, so that {@link #stillCurrent} can tell which changed.
   */
  private CompletableFuture<TxnResponse> writeAsync(List<PartitionChange> batch, List<Cmp> fences) {
    List<Cmp> compares = new ArrayList<>(fences);
    List<Op> puts = new ArrayList<>(batch.size());
    List<Op> gets = new ArrayList<>(batch.size());
    for (PartitionChange change : batch) {
      ByteSequence key = key(partitionKey(change.tp()));
      compares.add(
          new Cmp(key, Cmp.Op.EQUAL, CmpTarget.modRevision(change.expected().modRevision())));
      puts.add(put(partitionKey(change.tp()), change.next().toJson().encode()));
      gets.add(Op.get(key, GetOption.DEFAULT));
    }
    return send(compares, puts, gets);
  }

  /** The changes of a failed {@link #writeAsync} whose partitions were still as expected. */
  private static List<PartitionChange> stillCurrent(
      List<PartitionChange> batch, TxnResponse failed) {
    List<GetResponse> stored = failed.getGetResponses();
    List<PartitionChange> current = new ArrayList<>();
    for (int i = 0; i < batch.size() && i < stored.size(); i++) {
      List<KeyValue> kvs = stored.get(i).getKvs();
      if (!kvs.isEmpty() && kvs.get(0).getModRevision() == batch.get(i).expected().modRevision()) {
        current.add(batch.get(i));
      }
    }
    return current;
  }

  /**
   * The ISR changes leaders make, as Kafka's AlterPartition carries many: compare-and-swaps on each
   * partition's state, {@linkplain #writePartitions written together}.
   *
   * @return the written states; a partition whose state changed first (a new leader or epoch) is
   *     not among them
   */
  public Map<TopicPartition, PartitionState> alterIsrs(List<PartitionChange> changes) {
    Map<TopicPartition, PartitionState> written = new HashMap<>();
    for (TopicPartition tp : writePartitions(changes, List.of())) {
      image.partition(tp).ifPresent(state -> written.put(tp, state));
    }
    return written;
  }

  /**
   * The leader elections an admin asked for ({@link LeaderElection}): compare-and-swaps on each
   * partition's state, written together, as {@link #alterIsrs}.
   *
   * @return the partitions written; one whose state changed first is not among them
   */
  public Set<TopicPartition> electLeaders(List<PartitionChange> changes) {
    return writePartitions(changes, List.of());
  }

  /**
   * Writes a topic's new replicas and moves ({@code next}) together with the partition states they
   * change, in one transaction, if the topic and each of those states are still as expected and
   * every one of {@code fences} holds; waits until the metadata shows it.
   *
   * @return whether it was written
   */
  boolean writeReplicas(
      TopicMetadata expected, TopicMetadata next, List<PartitionChange> states, List<Cmp> fences) {
    List<Cmp> compares = new ArrayList<>(fences);
    compares.add(
        new Cmp(
            key(topicKey(expected.name())),
            Cmp.Op.EQUAL,
            CmpTarget.modRevision(expected.modRevision())));
    List<Op> puts = new ArrayList<>();
    puts.add(put(topicKey(next.name()), next.toJson().encode()));
    for (PartitionChange change : states) {
      compares.add(
          new Cmp(
              key(partitionKey(change.tp())),
              Cmp.Op.EQUAL,
              CmpTarget.modRevision(change.expected().modRevision())));
      puts.add(put(partitionKey(change.tp()), change.next().toJson().encode()));
    }
    TxnResponse response = transact(compares, puts);
    awaitRevision(response.getHeader().getRevision());
    return response.isSucceeded();
  }

  /** One ISR change, as {@link #alterIsrs}: the written state, or empty. */
  public Optional<PartitionState> alterIsr(
      TopicPartition tp, PartitionState expected, List<Integer> isr) {
    return Optional.ofNullable(
        alterIsrs(List.of(new PartitionChange(tp, expected, expected.withIsr(isr)))).get(tp));
  }

  Client client() {
    return client;
  }

  ByteSequence key(String relative) {
    return ByteSequence.from(prefix + relative, UTF_8);
  }

  static String topicKey(String name) {
    return ClusterImage.TOPICS + name;
  }

  static String partitionKey(TopicPartition tp) {
    return ClusterImage.PARTITIONS + tp.topic() + "/" + tp.partition();
  }

  private Op put(String relative, String value) {
    return Op.put(key(relative), ByteSequence.from(value, UTF_8), PutOption.DEFAULT);
  }

  /**
   * Runs {@code ops} if every one of {@code compares} holds, as one etcd transaction.
   *
   * @throws PolicyViolationException when etcd refuses that many operations in one transaction
   */
  TxnResponse transact(List<Cmp> compares, List<Op> ops) {
    return awaitTxn(send(compares, ops, List.of()), ops.size());
  }

  /**
   * Sends {@code ops} under {@code compares} as one etcd transaction, {@code otherwise} when a
   * compare fails, without waiting.
   */
  private CompletableFuture<TxnResponse> send(
      List<Cmp> compares, List<Op> ops, List<Op> otherwise) {
    return client
        .getKVClient()
        .txn()
        .If(compares.toArray(Cmp[]::new))
        .Then(ops.toArray(Op[]::new))
        .Else(otherwise.toArray(Op[]::new))
        .commit();
  }

  /**
   * Waits for a transaction of {@code ops} operations that {@link #send} sent.
   *
   * @throws PolicyViolationException when etcd refuses that many operations in one transaction
   */
  private static TxnResponse awaitTxn(CompletableFuture<TxnResponse> sent, int ops) {
    try {
      return get(sent);
    } catch (KafkaException e) {
      if (String.valueOf(e.getCause()).contains("too many operations in txn request")) {
        throw new PolicyViolationException(
            ("The change needs %d etcd operations in one transaction (one per partition, plus one),"
                    + " more than this cluster's etcd allows: raise etcd's --max-txn-ops"
                    + " (default %d)")
                .formatted(ops, DEFAULT_MAX_TXN_OPS));
      }
      throw e;
    }
  }

  static <T> T get(CompletableFuture<T> future) {
    try {
      return future.get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
    } catch (java.util.concurrent.TimeoutException e) {
      future.cancel(true);
      throw new TimeoutException("etcd did not answer within " + TIMEOUT_MS + " ms");
    } catch (ExecutionException e) {
      throw new KafkaException("etcd failed: " + e.getCause(), e.getCause());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new KafkaException("Interrupted while waiting for etcd", e);
    }
  }

  /** Waits until this broker's image includes {@code revision}. */
  void awaitRevision(long revision) {
    // The watch may be behind by many events after a large write; it is given time as long as it
    // moves, and fails the wait once it stands still for TIMEOUT_MS
    long from;
    do {
      from = publishedRevision;
      if (awaitImage(image -> publishedRevision >= revision, TIMEOUT_MS)) {
        return;
      }
    } while (publishedRevision != from);
    throw new TimeoutException(
        "The metadata watch did not reach revision "
            + revision
            + " in time: it stood at "
            + publishedRevision
            + " for "
            + TIMEOUT_MS
            + " ms");
  }

  /**
   * Waits up to {@code timeoutMs} until the current image satisfies {@code condition}, checking it
   * again after every published image.
   *
   * @return whether it did in time
   */
  public boolean awaitImage(Predicate<ClusterImage> condition, long timeoutMs) {
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
    synchronized (revisionMonitor) {
      while (!condition.test(image)) {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          return false;
        }
        try {
          TimeUnit.NANOSECONDS.timedWait(revisionMonitor, left);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new KafkaException("Interrupted while waiting for metadata", e);
        }
      }
    }
    return true;
  }

  /**
   * Reads the whole prefix, in pages at one revision, and watches from the revision after it; runs
   * on the event thread. A failed read is retried after {@link #RELOAD_BACKOFF_MS}.
   */
  private void reload() {
    try {
      load();
    } catch (RuntimeException e) {
      LOG.warn("Reading cluster metadata from etcd failed, retrying: {}", e.getMessage());
      events.schedule(this::reload, RELOAD_BACKOFF_MS, TimeUnit.MILLISECONDS);
    }
  }

  /** Reads the whole prefix and watches from the revision after it, or throws. */
  private void load() {
    if (closed) {
      return;
    }
    long generation = ++watchGeneration; // what the watch being replaced says is not heard
    if (watcher != null) {
      watcher.close();
      watcher = null;
    }
    ClusterImage read = readAll();
    publish(read, MetadataDelta.EVERYTHING);
    watcher =
        client
            .getWatchClient()
            .watch(
                key(""),
                WatchOption.builder().isPrefix(true).withRevision(read.revision() + 1).build(),
                Watch.listener(
                    response -> fromWatch(generation, () -> onWatch(response)),
                    error -> fromWatch(generation, () -> onWatchLost(error)),
                    () -> fromWatch(generation, () -> onWatchLost(null))));
  }

  /**
   * Runs what the watch of {@code generation} reports on the event thread, if that watch is still
   * the current one: a replaced watch's late events would take the image back, and its closing
   * (which {@link #load} causes) would start another load, without end.
   */
  private void fromWatch(long generation, Runnable task) {
    onEventThread(
        () -> {
          if (generation == watchGeneration) {
            task.run();
          }
        });
  }

  /**
   * The image of every key under the prefix as of one revision, read in pages so that no answer
   * nears gRPC's 4 MiB limit on a message, however large the cluster. The first page has {@link
   * #pageKeys} keys; later pages grow or shrink towards {@value #PAGE_BYTES} bytes, since etcd
   * walks its index from a page's first key to the end of the range for every page (to count the
   * rest), so a page costs the keys after it: a million partitions in pages of 1,000 keys took 111
   * s. A page that still exceeds gRPC's limit is read again in halves.
   */
  private ClusterImage readAll() {
    ByteSequence end = OptionsUtil.prefixEndOf(key(""));
    ByteSequence from = key("");
    long revision = 0;
    int limit = pageKeys;
    ClusterImage.Builder builder = ClusterImage.builder();
    while (true) {
      GetResponse page;
      try {
        page =
            get(
                client
                    .getKVClient()
                    .get(
                        from,
                        GetOption.builder()
                            .withRange(end)
                            .withLimit(limit)
                            .withRevision(revision)
                            .build()));
      } catch (KafkaException e) {
        if (limit > 1 && String.valueOf(e.getCause()).contains("RESOURCE_EXHAUSTED")) {
          limit /= 2;
          continue;
        }
        throw e;
      }
      if (revision == 0) {
        revision = page.getHeader().getRevision();
      }
      long bytes = 0;
      for (KeyValue kv : page.getKvs()) {
        bytes += kv.getKey().size() + kv.getValue().size();
        builder.apply(
            relative(kv),
            kv.getValue().toString(UTF_8),
            kv.getCreateRevision(),
            kv.getModRevision());
      }
      if (!page.isMore() || page.getKvs().isEmpty()) {
        return builder.revision(revision).build();
      }
      ByteSequence last = page.getKvs().get(page.getKvs().size() - 1).getKey();
      from = last.concat(ByteSequence.from(new byte[] {0}));
      if (bytes < PAGE_BYTES / 2) {
        limit = (int) Math.min(MAX_PAGE_KEYS, 2L * limit);
      } else if (bytes > PAGE_BYTES) {
        limit = Math.max(1, limit / 2);
      }
    }
  }

  private void onEventThread(Runnable task) {
    if (!closed) {
      try {
        events.execute(task);
      } catch (java.util.concurrent.RejectedExecutionException e) {
        // closing
      }
    }
  }

  private void onWatch(WatchResponse response) {
    try {
      applyWatched(response);
    } catch (RuntimeException e) { // never lost: the image is read again rather than left stale
      LOG.error("Applying a metadata watch event failed; re-reading the cluster metadata", e);
      watchResyncs.incrementAndGet();
      reload();
    }
  }

  private void applyWatched(WatchResponse response) {
    ClusterImage.Builder builder = image.toBuilder();
    for (WatchEvent event : response.getEvents()) {
      KeyValue kv = event.getKeyValue();
      boolean deleted = event.getEventType() == WatchEvent.EventType.DELETE;
      builder.apply(
          relative(kv),
          deleted ? null : kv.getValue().toString(UTF_8),
          kv.getCreateRevision(),
          kv.getModRevision());
    }
    publish(builder.revision(response.getHeader().getRevision()).build(), builder.delta());
  }

  /** How many times the watch ended (failed, or compacted away) and the metadata was re-read. */
  public long watchResyncs() {
    return watchResyncs.get();
  }

  private void onWatchLost(Throwable error) {
    if (closed) {
      return;
    }
    LOG.warn(
        "The etcd watch ended ({}); re-reading the cluster metadata",
        error == null ? "completed" : error.toString());
    watchResyncs.incrementAndGet();
    reload();
  }

  /**
   * Installs {@code next} and tells the listeners before waking writers waiting for it, so that
   * what the listeners queue (partition role changes) precedes the writers' next requests.
   */
  private void publish(ClusterImage next, MetadataDelta delta) {
    image = next;
    for (BiConsumer<ClusterImage, MetadataDelta> listener : listeners) {
      try {
        listener.accept(next, delta);
      } catch (RuntimeException e) {
        LOG.error("A metadata listener failed", e);
      }
    }
    synchronized (revisionMonitor) {
      publishedRevision = next.revision();
      revisionMonitor.notifyAll();
    }
  }

  private String relative(KeyValue kv) {
    return kv.getKey().toString(UTF_8).substring(prefix.length());
  }

  @Override
  public void close() {
    closed = true;
    events.shutdownNow();
    try {
      events.awaitTermination(TIMEOUT_MS, TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    if (watcher != null) {
      watcher.close();
    }
    client.close();
  }
}
