package io.tidelog.operator.topic;

import io.tidelog.operator.brokers.BrokerAccess;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.function.Supplier;

/**
 * One {@link TopicAdmin} per Cluster, at most {@link #MAX_CLUSTERS}: the least recently used is
 * closed to make room. How a Cluster's brokers are reached (its {@link BrokerAccess}, whose
 * certificate renews) is looked up again at most every {@link #ACCESS_RECHECK}, not on every
 * reconcile: a Cluster's many Topics cost the API server two reads per Cluster that often. Its
 * Admin is replaced when the access changed. Thread-safe.
 */
public final class TopicAdmins implements AutoCloseable {
  private static final int MAX_CLUSTERS = 64;
  private static final Duration ACCESS_RECHECK = Duration.ofSeconds(30);

  /** A Cluster's Admin, the access it was made with, and when that was last looked up. */
  private static final class Entry {
    final BrokerAccess access;
    final TopicAdmin admin;
    long checkedNanos;

    Entry(BrokerAccess access, TopicAdmin admin, long checkedNanos) {
      this.access = access;
      this.admin = admin;
      this.checkedNanos = checkedNanos;
    }
  }

  private final ScheduledExecutorService scheduler =
      Executors.newSingleThreadScheduledExecutor(
          r -> {
            Thread t = new Thread(r, "tidelog-topic-admin");
            t.setDaemon(true);
            return t;
          });
  private final Map<String, Entry> admins =
      new LinkedHashMap<>(16, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Entry> eldest) {
          if (size() <= MAX_CLUSTERS) {
            return false;
          }
          eldest.getValue().admin.close();
          return true;
        }
      };

  /**
   * The Admin of the Cluster {@code clusterId} ({@code namespace/name}), reaching its brokers as
   * {@code access} says.
   */
  synchronized TopicAdmin forCluster(String clusterId, Supplier<BrokerAccess> access) {
    long now = System.nanoTime();
    Entry entry = admins.get(clusterId);
    if (entry != null && now - entry.checkedNanos < ACCESS_RECHECK.toNanos()) {
      return entry.admin;
    }
    BrokerAccess current = access.get();
    if (entry != null && entry.access.equals(current)) {
      entry.checkedNanos = now;
      return entry.admin;
    }
    if (entry != null) {
      entry.admin.close();
    }
    Entry made = new Entry(current, new TopicAdmin(current, scheduler), now);
    admins.put(clusterId, made);
    return made.admin;
  }

  @Override
  public synchronized void close() {
    admins.values().forEach(e -> e.admin.close());
    admins.clear();
    scheduler.shutdownNow();
  }
}
