package io.tidelog.operator.topic;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;

/**
 * One {@link TopicAdmin} per cluster bootstrap address, at most {@link #MAX_CLUSTERS}: the least
 * recently used is closed to make room. Thread-safe.
 */
public final class TopicAdmins implements AutoCloseable {
  private static final int MAX_CLUSTERS = 64;

  private final ScheduledExecutorService scheduler =
      Executors.newSingleThreadScheduledExecutor(
          r -> {
            Thread t = new Thread(r, "tidelog-topic-admin");
            t.setDaemon(true);
            return t;
          });
  private final Map<String, TopicAdmin> admins =
      new LinkedHashMap<>(16, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, TopicAdmin> eldest) {
          if (size() <= MAX_CLUSTERS) {
            return false;
          }
          eldest.getValue().close();
          return true;
        }
      };

  synchronized TopicAdmin forCluster(String bootstrapServers) {
    return admins.computeIfAbsent(bootstrapServers, b -> new TopicAdmin(b, scheduler));
  }

  @Override
  public synchronized void close() {
    admins.values().forEach(TopicAdmin::close);
    admins.clear();
    scheduler.shutdownNow();
  }
}
