package io.tidelog.broker.protocol;

import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.tidelog.broker.replica.PartitionFetch;
import java.util.Collection;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.message.FetchResponseData.PartitionData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.FetchMetadata;

/**
 * The broker's incremental fetch sessions (KIP-227), as Kafka's {@code FetchSessionCache}: at most
 * {@code max.incremental.fetch.session.cache.slots} of them. A full fetch (epoch 0) gets a session
 * once answered, when a slot is free, or when it can take one: from a session unused for {@value
 * #EVICTION_MS} ms, else from the least valuable session (a consumer's before a follower's, a
 * smaller before a larger) when the new one is worth more. A full fetch at the final epoch (-1)
 * gets none, and a full fetch naming a session closes it. An incremental fetch names its session
 * and the next epoch, or is answered FETCH_SESSION_ID_NOT_FOUND or INVALID_FETCH_SESSION_EPOCH.
 *
 * <p>Thread-safe. Bounded: the slots, and {@value #PARTITIONS_PER_SLOT} partitions per slot in all
 * sessions: a full fetch that would pass them gets no session, and an incremental one that would
 * (by adding partitions) ends its session, answered FETCH_SESSION_ID_NOT_FOUND, so that its fetcher
 * goes on with full fetches. Creating a session costs at most one pass over the sessions.
 */
final class FetchSessionCache {
  /** Kafka's {@code min.incremental.fetch.session.eviction.ms}. */
  static final long EVICTION_MS = 120_000;

  /** The partitions all sessions may hold, per slot: 1,000,000 with Kafka's default slots. */
  static final int PARTITIONS_PER_SLOT = 1_000;

  private final int slots;

  /** How many partitions all sessions hold. */
  private long partitions;

  /** Least recently used first. */
  private final LinkedHashMap<Integer, FetchSession> sessions =
      new LinkedHashMap<>(16, 0.75f, true);

  private final Counter evictions;

  FetchSessionCache(int slots, PrometheusRegistry registry) {
    this.slots = slots;
    GaugeWithCallback.builder()
        .name("tidelog_fetch_sessions")
        .help("Incremental fetch sessions held, as Kafka's NumIncrementalFetchSessions")
        .callback(callback -> callback.call(size()))
        .register(registry);
    GaugeWithCallback.builder()
        .name("tidelog_fetch_session_partitions")
        .help("Partitions the fetch sessions hold, as Kafka's NumIncrementalFetchPartitionsCached")
        .callback(callback -> callback.call(partitions()))
        .register(registry);
    evictions =
        Counter.builder()
            .withoutExemplars()
            .name("tidelog_fetch_session_evictions_total")
            .help("Fetch sessions evicted to make room for new ones")
            .register(registry);
  }

  /**
   * What one Fetch request reads and how its answer is shaped.
   *
   * @param error answer this alone (no partition read), or null
   * @param session the incremental fetch's session, or null
   * @param reads the partitions to read, in order
   */
  record Context(
      FetchSessionCache cache,
      Errors error,
      FetchSession session,
      int epoch,
      boolean privileged,
      List<PartitionFetch> reads) {

    /**
     * The answer's session id and partitions, from {@code answered} (every read partition, in read
     * order): for a full fetch, all of them and a new session when one can be had; for an
     * incremental one, those with something new.
     */
    Answer answer(LinkedHashMap<TopicPartition, PartitionData> answered, long nowMs) {
      if (epoch == FetchMetadata.FINAL_EPOCH) {
        return new Answer(Errors.NONE, FetchMetadata.INVALID_SESSION_ID, answered);
      }
      if (epoch == FetchMetadata.INITIAL_EPOCH) {
        return new Answer(
            Errors.NONE, cache.maybeCreate(privileged, reads, answered, nowMs), answered);
      }
      LinkedHashMap<TopicPartition, PartitionData> sent = session.answer(epoch, answered);
      return sent == null // another request used the session meanwhile
          ? new Answer(Errors.INVALID_FETCH_SESSION_EPOCH, session.id, new LinkedHashMap<>())
          : new Answer(Errors.NONE, session.id, sent);
    }
  }

  /** A Fetch response's error, session id and partitions. */
  record Answer(
      Errors error, int sessionId, LinkedHashMap<TopicPartition, PartitionData> partitions) {}

  /**
   * The context of a Fetch with session {@code sessionId} at {@code epoch}, asking {@code asked}
   * and forgetting {@code forgotten}.
   */
  synchronized Context context(
      int sessionId,
      int epoch,
      List<PartitionFetch> asked,
      Collection<TopicPartition> forgotten,
      boolean privileged,
      long nowMs) {
    if (epoch == FetchMetadata.INITIAL_EPOCH || epoch == FetchMetadata.FINAL_EPOCH) {
      if (sessionId != FetchMetadata.INVALID_SESSION_ID) {
        remove(sessionId);
      }
      return new Context(this, null, null, epoch, privileged, asked);
    }
    FetchSession session = get(sessionId);
    if (session == null) {
      return new Context(
          this, Errors.FETCH_SESSION_ID_NOT_FOUND, null, epoch, privileged, List.of());
    }
    int before = session.size();
    List<PartitionFetch> reads = session.update(epoch, asked, forgotten, nowMs);
    if (reads == null) {
      return new Context(
          this, Errors.INVALID_FETCH_SESSION_EPOCH, null, epoch, privileged, List.of());
    }
    if (!grew(session, session.size() - before)) {
      return new Context(
          this, Errors.FETCH_SESSION_ID_NOT_FOUND, null, epoch, privileged, List.of());
    }
    if (session.isEmpty()) { // everything forgotten: the session ends, as in Kafka
      remove(sessionId);
      return new Context(this, null, null, FetchMetadata.FINAL_EPOCH, privileged, reads);
    }
    return new Context(this, null, session, epoch, privileged, reads);
  }

  private synchronized FetchSession get(int id) {
    return sessions.get(id); // also marks it the most recently used
  }

  private synchronized void remove(int id) {
    FetchSession removed = sessions.remove(id);
    if (removed != null) {
      partitions -= removed.size();
    }
  }

  /**
   * Counts {@code added} more partitions (fewer when negative) in {@code session}; ends it instead
   * when that passes the partitions all sessions may hold.
   */
  private synchronized boolean grew(FetchSession session, int added) {
    if (partitions + added > (long) slots * PARTITIONS_PER_SLOT) {
      sessions.remove(session.id);
      partitions -= session.size() - added;
      return false;
    }
    partitions += added;
    return true;
  }

  /** How many partitions all sessions hold. */
  synchronized long partitions() {
    return partitions;
  }

  /** How many sessions the broker holds. */
  synchronized int size() {
    return sessions.size();
  }

  /** A new session of what a full fetch was answered, or 0 when none can be had. */
  private synchronized int maybeCreate(
      boolean privileged,
      List<PartitionFetch> asked,
      Map<TopicPartition, PartitionData> answered,
      long nowMs) {
    if (answered.isEmpty() || slots == 0) {
      return FetchMetadata.INVALID_SESSION_ID;
    }
    if (sessions.size() >= slots && !evictFor(privileged, answered.size(), nowMs)) {
      return FetchMetadata.INVALID_SESSION_ID;
    }
    if (partitions + answered.size() > (long) slots * PARTITIONS_PER_SLOT) {
      return FetchMetadata.INVALID_SESSION_ID;
    }
    int id;
    do {
      id = ThreadLocalRandom.current().nextInt(1, Integer.MAX_VALUE);
    } while (sessions.containsKey(id));
    FetchSession session = new FetchSession(id, privileged, asked, answered, nowMs);
    sessions.put(id, session);
    partitions += session.size();
    return id;
  }

  /**
   * Frees a slot for a new session of {@code size} partitions: the least recently used session if
   * stale, else the least valuable one if the new session is worth more.
   */
  private boolean evictFor(boolean privileged, int size, long nowMs) {
    Iterator<FetchSession> lru = sessions.values().iterator();
    if (lru.hasNext()) {
      FetchSession oldest = lru.next();
      if (nowMs - oldest.lastUsedMs() > EVICTION_MS) {
        lru.remove();
        partitions -= oldest.size();
        evictions.inc();
        return true;
      }
    }
    FetchSession least = null;
    for (FetchSession session : sessions.values()) {
      if (least == null || lessValuable(session.privileged, session.size(), least)) {
        least = session;
      }
    }
    if (least != null && lessValuable(least.privileged, least.size(), privileged, size)) {
      sessions.remove(least.id);
      partitions -= least.size();
      evictions.inc();
      return true;
    }
    return false;
  }

  private static boolean lessValuable(boolean privileged, int size, FetchSession than) {
    return lessValuable(privileged, size, than.privileged, than.size());
  }

  private static boolean lessValuable(
      boolean privileged, int size, boolean thanPrivileged, int thanSize) {
    return privileged != thanPrivileged ? thanPrivileged : size < thanSize;
  }
}
